// POST /export-tasks when every file-key derivation is busy
// (docs/http-api.md#post-export-tasks--create): 503 with Retry-After and the
// envelope, nothing created, while a plain create still goes through.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/auth.h"
#include "api/export_api.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"
#include "storage/local_export_storage.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

TEST(CreateBusy, AFullKeyDerivationAnswers503WithRetryAfter) {
  char tmpl[] = "/tmp/ec-create-busy-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto db = store::OpenSqliteDatabase(dir + "/tasks.db");
  ASSERT_TRUE(db.ok());
  std::unique_ptr<store::TaskStore> store = store::NewSqlTaskStore(std::move(db).value());
  ASSERT_TRUE(store->Migrate().ok());
  auto storage = storage::NewLocalExportStorage(dir + "/files");
  ASSERT_TRUE(storage.ok());
  registry::RegistrySnapshot snapshot;
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  registry::ParameterSpec keyword;
  keyword.name = "keyword";
  orders.parameters.push_back(keyword);
  orders.file_password = registry::FilePasswordRule::kOptional;
  snapshot.definitions[orders.name] = orders;
  registry::Registry registry(snapshot);

  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  bool release = false;
  ExportApi::Deps deps;
  deps.store = store.get();
  deps.storage = storage->get();
  deps.registry = &registry;
  deps.auth.jwt_hs256_secret = "create-busy-test-secret-of-32-bytes!";
  deps.auth.download_url_secret = "create-busy-download-secret";
  deps.limits.max_active_per_user = 20;
  deps.file_key_derivations = 1;
  deps.seal_file_password = [&](std::string_view) -> StatusOr<WrappedFileKey> {
    std::unique_lock<std::mutex> lock(mu);
    ++inside;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    return WrappedFileKey{"00112233aabbccdd", "c2VhbGVk"};
  };
  ExportApi api(std::move(deps));
  ASSERT_TRUE(api.init_status().ok()) << api.init_status().ToString();
  AuthOptions auth;
  auth.jwt_hs256_secret = "create-busy-test-secret-of-32-bytes!";
  auto token = identity::MintToken(auth, Principal{"alice", "t1", task::AppCode::kPlatform, {}},
                                   std::chrono::seconds(600));
  ASSERT_TRUE(token.ok());
  auto create = [&](const json& body) {
    http::HttpRequest req;
    req.method = "POST";
    req.path = req.target = std::string(kApiBase) + "/export-tasks";
    req.headers.Set("Authorization", "Bearer " + *token);
    req.headers.Set("Content-Type", "application/json");
    req.body = body.dump();
    return api.Handle(req);
  };
  const json with_password = {{"exportType", "ORDER_LIST"},
                              {"parameters", {{"keyword", "a"}}},
                              {"filePassword", "Secret-pass-1"}};
  http::HttpResponse first;
  std::thread holder([&] { first = create(with_password); });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return inside == 1; }));
  }
  json second = with_password;
  second["parameters"]["keyword"] = "b";
  http::HttpResponse busy = create(second);
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.Header("Retry-After"), "2");
  json envelope = json::parse(busy.body);
  EXPECT_EQ(envelope["code"], "503");
  EXPECT_EQ(envelope["message"],
            "too many password-protected exports are being prepared; please retry shortly");
  // A plain create is not held back.
  http::HttpResponse plain =
      create({{"exportType", "ORDER_LIST"}, {"parameters", {{"keyword", "c"}}}});
  EXPECT_EQ(json::parse(plain.body)["code"], "200") << plain.body;
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  holder.join();
  EXPECT_EQ(json::parse(first.body)["code"], "200") << first.body;
  EXPECT_EQ(inside, 1) << "the refused create never derived a key";
  store::TaskCatalog::ListQuery q;
  q.tenant_id = "t1";
  q.app_code = task::AppCode::kPlatform;
  auto page = store->ListTasks(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->records.size(), 2u) << "the refused create left no task";
  store.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace export_center::api
