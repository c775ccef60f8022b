#pragma once
// SubscriptionDelivery: what a finished run delivers
// (docs/subscriptions.md#what-a-finished-run-delivers), one round at a time;
// its owner runs RunRound on a PeriodicWorker (common/periodic_worker.h).
//
// A round takes the runs whose delivery is due (store/run_delivery.h: a
// CREATED run whose task has ended, a FAILED run) and, for each:
//   - the task SUCCEEDED: a mail to each of the subscription's
//     `delivery.emails` naming the export and its period, with a signed,
//     short-lived download link, the file attached when `attach` is set and
//     it is not over `attachment_max_bytes` (else the mail says it was not
//     attached and why), and the recipient's own unsubscribe link; with 0
//     rows and `skipIfEmpty`, no mail, recorded "skipped: empty";
//   - the task FAILED, CANCELLED, EXPIRED (or the run failed before making
//     one): a failure notice to the same recipients, at most once per
//     `failure_grace_period_ms` per subscription across the fleet.
// Every mail is in the subscription's locale (English or zh-CN, by the
// language rule of task/language.h; English without one) and carries its
// recipient's unsubscribe link as the one-click List-Unsubscribe URL.
// The mails go to the mail outbox (the mailer sends them) with Message-IDs
// derived from the subscription, the slot, the kind and the recipient, and
// what the run delivered is recorded on it once (MarkRunDelivery): a round
// repeated after a crash, or run by two instances at once, writes each mail
// once.
//
// Thread-safety: one round at a time per instance; any number of instances
// may run rounds at once — the store's unique keys and conditional updates
// decide.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/mail_outbox.h"
#include "store/run_delivery.h"
#include "store/task_catalog.h"
#include "subscription/delivery_options.h"
#include "task/task.h"

namespace export_center::subscription {

// A subscription's delivery settings (its delivery_json):
// {"emails":[...],"attach":bool,"skipIfEmpty":bool}; other keys are kept.
struct DeliverySpec {
  std::vector<std::string> emails{};
  bool attach = false;
  bool skip_if_empty = false;
};
// InvalidArgument when the text is not such an object.
StatusOr<DeliverySpec> ParseDeliveryJson(std::string_view text);

// The links a mail carries, signed by api/ with the API's secret (app/
// wires them, so subscription/ does not depend on api/).
struct DeliveryLinks {
  // A signed download link of the task's SUCCEEDED file, valid until
  // `expires_at_ms`; following it is audited like any signed link. An error
  // (the type was removed) leaves the link out and the mail says why.
  std::function<StatusOr<std::string>(const task::Task& task, int64_t expires_at_ms)> download;
  // The signed unsubscribe link of one recipient of a subscription.
  std::function<std::string(int64_t subscription_id, const std::string& recipient)> unsubscribe;
  // Epoch ms of the process's clock (the one the links are checked by).
  std::function<int64_t()> now_ms;
};

// What one round did, for the metrics (docs/observability.md).
struct DeliveryFigures {
  int mailed = 0;         // runs whose file was mailed
  int skipped_empty = 0;  // runs with 0 rows and skipIfEmpty
  int failed = 0;         // failed runs: notices sent or suppressed inside the grace period
  int notices = 0;        // ... of which a notice was sent
  int not_mailed = 0;     // runs with nothing to mail (no recipients, the task gone)
  int mails = 0;          // mail rows written
};

class SubscriptionDelivery {
 public:
  // Not owned; each outlives the delivery.
  SubscriptionDelivery(store::RunDeliveryLedger* runs, store::TaskCatalog* tasks,
                       store::MailOutbox* mails, DeliveryLinks links, DeliveryOptions options);

  // One round (above). A store failure ends the round with its status; what
  // was recorded stays, and the next round goes on from there.
  StatusOr<DeliveryFigures> RunRound();

 private:
  Status DeliverOne(const store::DeliverableRun& run, DeliveryFigures& figures);
  Status MailFile(const store::DeliverableRun& run, const DeliverySpec& spec,
                  const task::Task& task, DeliveryFigures& figures);
  // `why` is recorded on the run; `told` is the same in the mail's language.
  Status Notice(const store::DeliverableRun& run, const DeliverySpec& spec, const std::string& why,
                const std::string& told, DeliveryFigures& figures);
  // Records the run's delivery; adds one to `*counted` when this call did
  // (not another instance).
  Status Mark(const store::DeliverableRun& run, store::RunDelivery delivery,
              const std::string& detail, int* counted);

  store::RunDeliveryLedger* const runs_;
  store::TaskCatalog* const tasks_;
  store::MailOutbox* const mails_;
  const DeliveryLinks links_;
  const DeliveryOptions options_;
};

}  // namespace export_center::subscription
