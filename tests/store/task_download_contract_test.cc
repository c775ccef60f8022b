// The downloads of the TaskCatalog role (task_catalog.h: RecordDownload,
// ListDownloadAudit) on every backend: counted and audited in one step, once
// per task, user and window, filtered and kept in their tenant.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

constexpr int kWindow = 600;  // limits.download-audit-window-seconds' default

TEST_P(TaskStoreContractTest, DownloadsAreCountedAndAuditedInOneStep) {
  Task t = Create();
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, t.requested_by, "DIRECT"), kWindow).ok());
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "admin", "SIGNED_LINK"), kWindow).ok());
  Task after = Get(t.id);
  EXPECT_EQ(after.downloads.count, 2);
  EXPECT_TRUE(after.downloads.last_at.has_value());

  DownloadAuditQuery q;
  q.tenant_id = t.tenant_id;
  q.app_code = t.app_code;
  ASSERT_OK_AND_ASSIGN(DownloadAuditPage all, store_->ListDownloadAudit(q));
  ASSERT_EQ(all.total, 2);
  ASSERT_EQ(all.records.size(), 2u);
  const DownloadAuditEntry& newest = all.records[0];
  EXPECT_EQ(newest.record.user, "admin");  // newest first
  EXPECT_EQ(newest.record.via, "SIGNED_LINK");
  EXPECT_EQ(newest.record.task_id, t.id);
  EXPECT_EQ(newest.record.export_type, t.export_type);
  EXPECT_EQ(newest.record.user_agent, "curl/8.0 \xe6\xb5\x8b\xe8\xaf\x95");
  EXPECT_EQ(newest.record.client_address, "127.0.0.1");
  EXPECT_EQ(newest.record.request_id, "req-1");
  EXPECT_GE(newest.downloaded_at, *after.downloads.last_at - kMinute);
  EXPECT_EQ(all.records[1].record.user, t.requested_by);

  // A missing task counts nothing and audits nothing.
  Task ghost = t;
  ghost.id = 31337;
  EXPECT_EQ(store_->RecordDownload(DownloadOf(ghost, "x", "DIRECT"), kWindow).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->ListDownloadAudit(q)->total, 2);
}

// docs/http-api.md#download-audit: once per (task, user) and window, also
// when a download manager asks for 16 ranges at the same moment.
TEST_P(TaskStoreContractTest, DownloadIsAuditedOncePerTaskUserAndWindow) {
  Task t = Create();
  Task other = Create("bob", "orders");
  ASSERT_OK_AND_ASSIGN(store::DownloadCount first,
                       store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 600));
  EXPECT_EQ(first, store::DownloadCount::kCounted);
  ASSERT_OK_AND_ASSIGN(store::DownloadCount again,
                       store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 600));
  EXPECT_EQ(again, store::DownloadCount::kWithinWindow) << "the same user inside the window";
  // Via a signed link it is still alice's download of the same file.
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(t, "alice", "SIGNED_LINK"), 600),
            store::DownloadCount::kWithinWindow);
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(t, "admin", "DIRECT"), 600),
            store::DownloadCount::kCounted)
      << "another user";
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(other, "alice", "DIRECT"), 600),
            store::DownloadCount::kCounted)
      << "another task";
  EXPECT_EQ(Get(t.id).downloads.count, 2);

  // The window passes (the row ages by the database clock): alice counts again.
  Exec("UPDATE export_download_audit SET downloaded_at = downloaded_at - ? WHERE task_id = ?",
       {int64_t{601} * kSecond, t.id});
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 600),
            store::DownloadCount::kCounted);
  EXPECT_EQ(Get(t.id).downloads.count, 3);

  // 16 parallel calls (a download manager's ranges): one row, one count.
  Task fresh = Create("carol", "orders");
  std::atomic<int> counted{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&] {
      // Unavailable (a lock wait or deadlock the database broke) is retried
      // as every caller of the store does.
      for (int tries = 0; tries < 20; ++tries) {
        auto r = store_->RecordDownload(DownloadOf(fresh, "carol", "DIRECT"), 600);
        if (r.ok()) {
          if (*r == store::DownloadCount::kCounted) ++counted;
          return;
        }
        if (r.status().code() != StatusCode::kUnavailable) break;
      }
      ++failed;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(counted, 1);
  EXPECT_EQ(Get(fresh.id).downloads.count, 1);
  DownloadAuditQuery q;
  q.tenant_id = fresh.tenant_id;
  q.app_code = fresh.app_code;
  q.task_id = fresh.id;
  EXPECT_EQ(store_->ListDownloadAudit(q)->total, 1);
}

// A signed link names its signer, not whoever follows it: followed from
// another address it is a download of its own, even inside the signer's
// window; that follower's repeated ranges count once; the signer's own
// answers (direct, or the link from the signer's address) stay one download.
TEST_P(TaskStoreContractTest, ASignedLinkFollowedByAnotherIsItsOwnDownload) {
  Task t = Create();
  auto from = [&](const std::string& via, const std::string& address) {
    DownloadRecord d = DownloadOf(t, "alice", via);
    d.client_address = address;
    return d;
  };
  EXPECT_EQ(*store_->RecordDownload(from("DIRECT", "10.0.0.1"), kWindow),
            store::DownloadCount::kCounted);
  EXPECT_EQ(*store_->RecordDownload(from("SIGNED_LINK", "10.0.0.1"), kWindow),
            store::DownloadCount::kWithinWindow)
      << "the signer following the link from where it downloaded";
  EXPECT_EQ(*store_->RecordDownload(from("SIGNED_LINK", "192.0.2.7"), kWindow),
            store::DownloadCount::kCounted)
      << "someone else following alice's link";
  EXPECT_EQ(*store_->RecordDownload(from("SIGNED_LINK", "192.0.2.7"), kWindow),
            store::DownloadCount::kWithinWindow)
      << "the same follower's next range";
  EXPECT_EQ(*store_->RecordDownload(from("DIRECT", "10.0.0.2"), kWindow),
            store::DownloadCount::kWithinWindow)
      << "alice with her token, from another address: still her download";
  EXPECT_EQ(Get(t.id).downloads.count, 2);
  DownloadAuditQuery q;
  q.tenant_id = t.tenant_id;
  q.app_code = t.app_code;
  q.task_id = t.id;
  ASSERT_OK_AND_ASSIGN(DownloadAuditPage page, store_->ListDownloadAudit(q));
  ASSERT_EQ(page.total, 2);
  EXPECT_EQ(page.records[0].record.via, "SIGNED_LINK");
  EXPECT_EQ(page.records[0].record.client_address, "192.0.2.7");
}

TEST_P(TaskStoreContractTest, DownloadAuditFiltersAndStaysInItsTenant) {
  Task t = Create();
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 0).ok());
  // No window: each call counts.
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "bob", "DIRECT"), 0).ok());
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "bob", "DIRECT"), 0).ok());
  DownloadAuditQuery q;
  q.tenant_id = t.tenant_id;
  q.app_code = t.app_code;

  DownloadAuditQuery by_user = q;
  by_user.user = "bob";
  EXPECT_EQ(store_->ListDownloadAudit(by_user)->total, 2);
  DownloadAuditQuery by_task = q;
  by_task.task_id = t.id + 1;
  EXPECT_EQ(store_->ListDownloadAudit(by_task)->total, 0);
  by_task.task_id = t.id;
  EXPECT_EQ(store_->ListDownloadAudit(by_task)->total, 3);

  ASSERT_OK_AND_ASSIGN(DownloadAuditPage all, store_->ListDownloadAudit(q));
  const int64_t at = all.records[0].downloaded_at;
  DownloadAuditQuery window = q;
  window.from_ms = at + 1;
  EXPECT_EQ(store_->ListDownloadAudit(window)->total, 0);
  window.from_ms = at - kMinute;
  window.to_ms = at + 1;
  EXPECT_EQ(store_->ListDownloadAudit(window)->total, 3);

  DownloadAuditQuery paged = q;
  paged.size = 2;
  paged.page = 2;
  ASSERT_OK_AND_ASSIGN(DownloadAuditPage second, store_->ListDownloadAudit(paged));
  EXPECT_EQ(second.total, 3);
  EXPECT_EQ(second.records.size(), 1u);

  DownloadAuditQuery other_tenant = q;
  other_tenant.tenant_id = "other-tenant";
  EXPECT_EQ(store_->ListDownloadAudit(other_tenant)->total, 0);
  DownloadAuditQuery other_app = q;
  other_app.app_code =
      t.app_code == task::AppCode::kPlatform ? task::AppCode::kMerchant : task::AppCode::kPlatform;
  EXPECT_EQ(store_->ListDownloadAudit(other_app)->total, 0);
}

TEST_P(TaskStoreContractTest, DownloadsAreCounted) {
  Task t = Create();
  Exec("UPDATE export_task SET updated_at = updated_at - 10000 WHERE id = ?", {t.id});
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, t.requested_by, "DIRECT"), 0).ok());
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, t.requested_by, "DIRECT"), 0).ok());
  Task after = Get(t.id);
  EXPECT_EQ(after.downloads.count, 2);
  EXPECT_TRUE(after.downloads.last_at.has_value());
  EXPECT_GT(after.updated_at, t.updated_at - 10000);  // a change the task events see
}

}  // namespace
}  // namespace export_center::store::contract
