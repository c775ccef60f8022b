#include "registry/config_watcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "config/registry_yaml.h"

namespace export_center::registry {
namespace {

std::string ConfigWithBatchSize(int batch_size) {
  return R"(
auth:
  jwt-hs256-secret: test-secret-0123456789abcdef0123456789
  download-url-secret: test-download-0123456789abcdef0123456789
  jwt-issuer: test-issuer
  jwt-audience: export-center
provider-services:
  svc:
    base-url: http://127.0.0.1:9
    internal-token: watcher-token-0123456789
definitions:
  A_LIST:
    provider-service: svc
    provider-path: /internal/exports/v1/A_LIST/batches
    required-permission: platform:a:export
    batch-size: )" +
         std::to_string(batch_size) + "\n";
}

// Polls `done` for up to five seconds.
template <typename Fn>
bool Eventually(Fn done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

TEST(ConfigWatcher, PicksUpAFileChangeAndSurvivesAnInvalidOne) {
  auto dir = std::filesystem::temp_directory_path() / ("ec_watcher_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "config.yaml").string();
  std::ofstream(path, std::ios::trunc) << ConfigWithBatchSize(100);
  // Read and reloaded the way app/ wires it.
  Registry registry(config::LoadRegistry(path, nullptr).value(),
                    [](const std::string& p) { return config::LoadRegistryForReload(p, nullptr); });

  std::atomic<int> attempts{0};
  std::atomic<int> failures{0};
  ConfigWatcher watcher(&registry, path, std::chrono::milliseconds(20), [&](const Status& s) {
    if (!s.ok()) ++failures;
    ++attempts;
  });
  watcher.Start();

  std::ofstream(path, std::ios::trunc) << ConfigWithBatchSize(200) << "# longer\n";
  EXPECT_TRUE(Eventually([&] { return registry.Current()->Find("A_LIST")->batch_size == 200; }));

  std::ofstream(path, std::ios::trunc) << ConfigWithBatchSize(7);  // invalid: below 50
  EXPECT_TRUE(Eventually([&] { return failures.load() == 1; }));
  EXPECT_EQ(registry.Current()->Find("A_LIST")->batch_size, 200);

  watcher.Stop();
  watcher.Stop();  // idempotent
  int seen = attempts.load();
  std::ofstream(path, std::ios::trunc) << ConfigWithBatchSize(300) << "# stopped\n";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(attempts.load(), seen);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace export_center::registry
