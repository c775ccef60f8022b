#pragma once
// RunDeliveryLedger: what each finished subscription run delivered
// (docs/subscriptions.md#what-a-finished-run-delivers), for the delivery duty
// (subscription/delivery.h) and the unsubscribe link.
//
// A run that created a task is delivered once that task has ended; a run
// that failed gets a failure notice. Each run's delivery is decided once
// across the fleet: `MarkRunDelivery` is a conditional update of a NULL
// `delivery`, and the mails it writes carry Message-IDs derived from the
// subscription, the slot and the recipient (the outbox refuses a second row
// with one), so a round repeated after a crash, or run by two instances at
// once, writes each mail once. Failure notices are rationed per subscription
// by `ClaimFailureNotice`: one conditional update on the database clock.
//
// Thread-safety: every method may be called from any thread; each is one
// statement (or one transaction), safe to retry after Unavailable.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/leased_queue.h"
#include "store/subscription_ledger.h"

namespace export_center::store {

// What a run delivered; stored in export_subscription_run.delivery.
enum class RunDelivery {
  kMailed,            // the mail (link or attachment) was written to the outbox
  kSkippedEmpty,      // 0 rows and skipIfEmpty: no mail ("skipped: empty")
  kNoticeSent,        // a failure notice was written to the outbox
  kNoticeSuppressed,  // a failure inside the grace period of the last notice
  kNotMailed,         // nothing to mail: no recipients, or the file is gone
};
std::string_view ToString(RunDelivery delivery);

// A run whose delivery is due, with what the delivery needs of its
// subscription (read in the same statement).
struct DeliverableRun {
  int64_t subscription_id = 0;
  int64_t slot_at = 0;
  RunOutcome outcome = RunOutcome::kCreated;  // kCreated (its task ended) or kFailed
  std::optional<int64_t> task_id{};
  std::optional<std::string> detail{};  // the run's detail (why it failed)
  std::string tenant_id{};
  std::string owner{};
  std::string export_type{};
  std::string task_name{};
  std::string time_zone{};
  std::string delivery_json{};
  int64_t fired_at = 0;
  std::string locale{};  // the subscription's language (BCP 47), "" none: the mails' language
};

// A subscription's delivery settings as stored, with its version for a
// conditional change.
struct DeliverySettings {
  std::string delivery_json{};
  int32_t version = 0;
};

class RunDeliveryLedger {
 public:
  virtual ~RunDeliveryLedger() = default;

  // Up to `limit` runs not delivered yet, oldest fired first: CREATED runs
  // whose task has ended (SUCCEEDED, FAILED, CANCELLED, EXPIRED) and FAILED
  // runs. A CREATED run whose task is still running is not offered.
  virtual StatusOr<std::vector<DeliverableRun>> SelectDeliverableRuns(int limit) = 0;

  // Records what the run delivered, once: kMarked when this call set it,
  // kClaimLost when it was already set (by another instance) — nothing changed.
  virtual StatusOr<MarkOutcome> MarkRunDelivery(int64_t subscription_id, int64_t slot_at,
                                                RunDelivery delivery, std::string_view detail) = 0;
  // The delivery recorded on a run (nullopt: not decided yet), with its
  // detail. NotFound when there is no such run.
  struct Recorded {
    std::optional<RunDelivery> delivery{};
    std::optional<std::string> detail{};
  };
  virtual StatusOr<Recorded> GetRunDelivery(int64_t subscription_id, int64_t slot_at) = 0;

  // Whether the failure of `slot_at` may send its notice: true when no
  // notice was sent for the subscription in the last `grace_ms` (by the
  // database clock) — it is then recorded as sent now for this slot — or
  // when the last notice was this slot's own (a repeated round). False
  // inside the grace period, and for a subscription that is gone.
  virtual StatusOr<bool> ClaimFailureNotice(int64_t subscription_id, int64_t slot_at,
                                            int64_t grace_ms) = 0;

  // The unsubscribe link: the subscription's delivery settings, and their
  // change when they are still at `version` (Conflict otherwise; NotFound
  // for a subscription that is gone). The change moves the version on.
  virtual StatusOr<DeliverySettings> GetDeliverySettings(int64_t subscription_id) = 0;
  virtual Status SetDeliveryJson(int64_t subscription_id, int32_t version,
                                 const std::string& delivery_json) = 0;
};

}  // namespace export_center::store
