#include "registry/registry.h"

#include <gtest/gtest.h>

#include <string>

namespace export_center::registry {
namespace {

// The file format and the whole-file reload are tested with their mapping in
// tests/config/registry_yaml_test.cc.

TEST(Registry, ExpandFileNameUsesTheDefinitionTimezone) {
  ExportDefinition def;
  def.file_name_pattern = "{taskName}_{exportType}_{taskId}_{date}_{time}";
  def.timezone = "Asia/Shanghai";
  // 2024-01-31T16:30:05Z is 2024-02-01 00:30:05 in Shanghai.
  std::string name = ExpandFileName(def, {"客户", "CUSTOMER_LIST", 42, 1706718605000});
  EXPECT_EQ(name, "客户_CUSTOMER_LIST_42_20240201_003005");
}

RegistrySnapshot OneService(const std::string& base_url) {
  RegistrySnapshot s;
  s.services["svc"] = {"svc", base_url, "token", /*base_path=*/""};
  s.definitions["A_LIST"].name = "A_LIST";
  return s;
}

TEST(Registry, ReloadSwapsInWhatTheLoaderReads) {
  Registry registry(OneService("http://127.0.0.1:9"), [](const std::string& path) {
    RegistrySnapshot next = OneService("http://127.0.0.1:9");
    next.definitions["B_LIST"].name = path;
    return StatusOr<RegistrySnapshot>(std::move(next));
  });
  auto before = registry.Current();
  ASSERT_TRUE(registry.Reload("config.yaml").ok());
  EXPECT_NE(registry.Current(), before);
  ASSERT_NE(registry.Current()->Find("B_LIST"), nullptr);
  EXPECT_EQ(registry.Current()->Find("B_LIST")->name, "config.yaml");
  EXPECT_EQ(before->Find("B_LIST"), nullptr);  // old snapshot untouched
}

TEST(Registry, LoaderErrorIsReturnedUnchangedAndKeepsTheOldSet) {
  Registry registry(OneService("http://127.0.0.1:9"), [](const std::string&) {
    return StatusOr<RegistrySnapshot>(NotFound("config file gone"));
  });
  auto before = registry.Current();
  Status s = registry.Reload("config.yaml");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "config file gone");
  EXPECT_EQ(registry.Current(), before);
}

TEST(Registry, ReloadWithoutALoaderFails) {
  Registry registry(OneService("http://127.0.0.1:9"));
  auto before = registry.Current();
  EXPECT_FALSE(registry.Reload("config.yaml").ok());
  EXPECT_EQ(registry.Current(), before);
}

TEST(Registry, ReloadRefusedListsEveryFailedStatus) {
  EXPECT_TRUE(ReloadRefused("c.yaml", {Status::Ok()}).ok());
  Status s = ReloadRefused("c.yaml", {InvalidArgument("a"), Status::Ok(), InvalidArgument("b")});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "reload of c.yaml refused, keeping the current export types:\na\nb");
}

}  // namespace
}  // namespace export_center::registry
