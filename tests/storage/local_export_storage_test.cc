#include "storage/local_export_storage.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "storage/export_storage.h"

namespace export_center::storage {
namespace {

namespace fs = std::filesystem;

class LocalExportStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = fs::temp_directory_path().string() + "/ec_storage_XXXXXX";
    root_ = ::mkdtemp(tmpl.data());
    auto s = NewLocalExportStorage(root_ + "/data/");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    storage_ = std::move(s).value();
  }
  void TearDown() override { fs::remove_all(root_); }

  // Every regular file under the root, hidden temp files included.
  std::vector<std::string> AllFiles() const {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      if (e.is_regular_file()) files.push_back(fs::relative(e.path(), root_ + "/data").string());
    }
    return files;
  }

  std::string root_;
  std::unique_ptr<ExportStorage> storage_;
};

TEST(ObjectKey, MakeAndValidate) {
  const std::string key = MakeObjectKey(1234567890123, "xlsx");
  EXPECT_TRUE(std::regex_match(
      key, std::regex(R"(exports/\d{4}/\d{2}/\d{2}/1234567890123/[0-9a-f-]{36}\.xlsx)")))
      << key;
  EXPECT_TRUE(IsValidObjectKey(key));
  EXPECT_TRUE(IsValidObjectKey(MakeObjectKey(1, "csv")));
  const std::string uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
  EXPECT_TRUE(IsValidObjectKey("exports/2024/03/05/42/" + uuid + ".xlsx"));
  EXPECT_TRUE(IsValidObjectKey("exports/2024/03/05/42/" + uuid + ".csv.gz"));
  EXPECT_TRUE(IsValidObjectKey(MakeObjectKey(1, "zip")));
  for (const std::string& bad :
       std::vector<std::string>{"",
                                "exports",
                                "/exports/2024/03/05/42/" + uuid + ".xlsx",
                                "exports/2024/03/05/42/../" + uuid + ".xlsx",
                                "exports/2024/03/05/../42/" + uuid + ".x",
                                "exports/2024/03/05/42/" + uuid,
                                "exports/2024/03/05/42/" + uuid + ".",
                                "exports/2024/03/05/42/" + uuid + ".csv..gz",
                                "exports/2024/03/05/42/" + uuid + ".a.b.c",
                                "exports/2024/03/05/42/" + uuid + ".csv.",
                                "exports/2024/03/05/42/" + uuid + ".XLSX",
                                "exports/2024/03/05/042/" + uuid + ".xlsx",
                                "exports/2024/13/05/42/" + uuid + ".xlsx",
                                "exports/2024/03/00/42/" + uuid + ".xlsx",
                                "exports/2024/3/05/42/" + uuid + ".xlsx",
                                "exports//2024/03/05/42/" + uuid + ".xlsx",
                                "exports/2024/03/05/42/" + uuid + ".xlsx/",
                                "exports/2024/03/05/42/a/" + uuid + ".xlsx",
                                "exports/2024/03/05/9223372036854775808/" + uuid + ".xlsx",
                                "exports/2024/03/05/42/0F8FAD5B-D9CB-469F-A165-70867728950E.xlsx",
                                "exports/2024/03/05/42/" + uuid + ".xlsx\n",
                                "imports/2024/03/05/42/" + uuid + ".xlsx",
                                "exports/2024/03/05/42/" + uuid + ".tar.gz"}) {
    EXPECT_FALSE(IsValidObjectKey(bad)) << bad;
  }
}

TEST_F(LocalExportStorageTest, CommitMakesTheFileVisibleAtomically) {
  const std::string key = MakeObjectKey(42, "xlsx");
  auto writer = storage_->Create(key);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Append("hello ").ok());
  ASSERT_TRUE((*writer)->Append("world").ok());
  EXPECT_FALSE(*storage_->Exists(key));  // not before Commit
  auto files = AllFiles();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(fs::path(files[0]).filename().string()[0], '.');  // a hidden temp file
  EXPECT_TRUE(storage_->List()->empty());

  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_TRUE((*writer)->Commit().ok());  // idempotent
  writer->reset();                        // destruction after Commit keeps the file
  EXPECT_TRUE(*storage_->Exists(key));
  EXPECT_EQ(AllFiles(), std::vector<std::string>{key});

  auto reader = storage_->Open(key);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->size(), 11u);
  std::string out;
  ASSERT_TRUE((*reader)->ReadAt(6, 100, &out).ok());
  EXPECT_EQ(out, "world");
  ASSERT_TRUE((*reader)->ReadAt(0, 5, &out).ok());
  EXPECT_EQ(out, "hello");
  ASSERT_TRUE((*reader)->ReadAt(11, 5, &out).ok());
  EXPECT_EQ(out, "");

  auto listed = storage_->List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].key, key);
  EXPECT_EQ((*listed)[0].size, 11u);
  EXPECT_GT((*listed)[0].modified_at_ms, 1700000000000);

  ASSERT_TRUE(storage_->Delete(key).ok());
  ASSERT_TRUE(storage_->Delete(key).ok());  // idempotent
  EXPECT_FALSE(*storage_->Exists(key));
  EXPECT_EQ(storage_->Open(key).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(AllFiles().empty());
}

TEST_F(LocalExportStorageTest, AbortAndDestructionLeaveNothing) {
  const std::string key = MakeObjectKey(7, "csv");
  {
    auto writer = storage_->Create(key);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("partial").ok());
    (*writer)->Abort();
    (*writer)->Abort();  // twice is fine
    EXPECT_FALSE((*writer)->Commit().ok());
  }
  {
    auto writer = storage_->Create(key);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("partial").ok());
  }  // destroyed without Commit
  EXPECT_TRUE(AllFiles().empty());
  EXPECT_FALSE(*storage_->Exists(key));
}

TEST_F(LocalExportStorageTest, RejectsInvalidKeysOnEveryCall) {
  for (const std::string& key : std::vector<std::string>{
           "../escape", "/etc/passwd", "exports/../../x", "exports/2024/03/05/42/x.xlsx"}) {
    EXPECT_EQ(storage_->Create(key).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(storage_->Open(key).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(storage_->Delete(key).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(storage_->Exists(key).status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(LocalExportStorageTest, ListSkipsForeignFilesAndSweepsStaleTemps) {
  const std::string key = MakeObjectKey(9, "xlsx");
  auto writer = storage_->Create(key);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Commit().ok());
  const std::string dir = root_ + "/data/" + fs::path(key).parent_path().string();
  std::ofstream(dir + "/notes.txt") << "not an export";
  const std::string stale = dir + "/.x.xlsx.tmp-crashed";
  const std::string fresh = dir + "/.y.xlsx.tmp-running";
  std::ofstream(stale) << "old";
  std::ofstream(fresh) << "new";
  const auto two_days_ago = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(stale, two_days_ago);

  auto listed = storage_->List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].key, key);
  EXPECT_FALSE(fs::exists(stale));  // a crashed writer's leftovers
  EXPECT_TRUE(fs::exists(fresh));   // a live writer's file is kept
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
}

TEST_F(LocalExportStorageTest, ConcurrentWritersAndDeletes) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 50; ++k) {
        const std::string key = MakeObjectKey(1000 + (k % 3), "xlsx");  // shared task dirs
        auto w = storage_->Create(key);
        if (!w.ok() || !(*w)->Append(std::to_string(t)).ok() || !(*w)->Commit().ok()) {
          ++failures;
          continue;
        }
        if (k % 2 == 0 && !storage_->Delete(key).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto listed = storage_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 8u * 25);
}

TEST(NewLocalExportStorage, RejectsEmptyRoot) {
  EXPECT_EQ(NewLocalExportStorage("").status().code(), StatusCode::kInvalidArgument);
}

// `export-center check`: the same verdicts as opening, with nothing created.
TEST_F(LocalExportStorageTest, CheckAcceptsTheWritableRootAndAMissingOneWithoutCreatingIt) {
  auto existing = CheckLocalExportRoot(root_ + "/data/");
  ASSERT_TRUE(existing.ok()) << existing.status().ToString();
  EXPECT_EQ(*existing, "folder " + root_ + "/data is writable");

  auto missing = CheckLocalExportRoot(root_ + "/later/files");
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_NE(missing->find("does not exist yet; serve creates it in " + root_), std::string::npos)
      << *missing;
  EXPECT_FALSE(fs::exists(root_ + "/later"));
}

TEST_F(LocalExportStorageTest, CheckRefusesAFileWhereAFolderShouldBe) {
  std::ofstream(root_ + "/plain") << "x";
  for (const std::string& root : {root_ + "/plain", root_ + "/plain/files"}) {
    auto checked = CheckLocalExportRoot(root);
    EXPECT_EQ(checked.status().code(), StatusCode::kUnavailable) << root;
    EXPECT_EQ(checked.status().message(), "storage: " + root_ + "/plain is not a folder");
  }
  fs::remove(root_ + "/data/exports");
  std::ofstream(root_ + "/data/exports") << "x";  // writers could not make their folders
  EXPECT_EQ(CheckLocalExportRoot(root_ + "/data").status().message(),
            "storage: " + root_ + "/data/exports is not a folder");
  EXPECT_EQ(CheckLocalExportRoot("").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace export_center::storage
