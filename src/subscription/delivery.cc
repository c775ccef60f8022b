#include "subscription/delivery.h"

#include <cctz/time_zone.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <utility>

#include "common/time_format.h"
#include "schedule/schedule.h"

namespace export_center::subscription {
namespace {

using json = nlohmann::json;

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// FNV-1a 64: stable across builds and processes (std::hash is not), so two
// instances derive the same Message-ID for one recipient.
std::string StableHash(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// <sub.<id>.<slot>.<kind>.<recipient hash>@export-center>: one per run,
// kind and recipient, the same on every instance and every repeat.
std::string MessageId(const store::DeliverableRun& run, std::string_view kind,
                      const std::string& recipient) {
  return "<sub." + std::to_string(run.subscription_id) + "." + std::to_string(run.slot_at) + "." +
         std::string(kind) + "." + StableHash(Lower(recipient)) + "@export-center>";
}

// "2024-03-04 09:00 Asia/Shanghai": the slot as its schedule reads it.
std::string LocalSlot(int64_t slot_ms, const std::string& zone_name) {
  auto zone = schedule::LoadZone(zone_name);
  const auto tp = std::chrono::system_clock::time_point(std::chrono::milliseconds(slot_ms));
  if (!zone.ok()) return cctz::format("%Y-%m-%d %H:%M UTC", tp, cctz::utc_time_zone());
  return cctz::format("%Y-%m-%d %H:%M ", tp, *zone) + zone_name;
}

// The period the file covers: the dates among the task's parameters
// (relative dates are resolved to them at the run), earliest to latest; the
// run's local day when it has none.
std::string Period(const task::Task& task, int64_t slot_ms, const std::string& zone_name) {
  static const std::regex kDate(R"(^\d{4}-\d{2}-\d{2}$)");
  std::vector<std::string> dates;
  json params = json::parse(task.parameters_json, nullptr, false);
  if (params.is_object()) {
    for (const auto& [key, value] : params.items()) {
      if (value.is_string() && std::regex_match(value.get<std::string>(), kDate)) {
        dates.push_back(value.get<std::string>());
      }
    }
  }
  if (dates.empty()) return LocalSlot(slot_ms, zone_name).substr(0, 10);
  std::sort(dates.begin(), dates.end());
  return dates.front() == dates.back() ? dates.front() : dates.front() + " to " + dates.back();
}

std::string Size(int64_t bytes) {
  char buf[32];
  if (bytes >= 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  }
  return buf;
}

std::string Footer(const store::DeliverableRun& run, const std::string& unsubscribe) {
  return "\n--\nYou receive this as a recipient of subscription " +
         std::to_string(run.subscription_id) + " of " + run.owner +
         " in the export center.\nTo stop receiving it: " + unsubscribe + "\n";
}

}  // namespace

StatusOr<DeliverySpec> ParseDeliveryJson(std::string_view text) {
  json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) return InvalidArgument("delivery is not a JSON object");
  DeliverySpec spec;
  if (doc.contains("emails")) {
    if (!doc["emails"].is_array()) return InvalidArgument("delivery.emails is not an array");
    for (const json& e : doc["emails"]) {
      if (!e.is_string()) return InvalidArgument("delivery.emails holds a non-string");
      spec.emails.push_back(e.get<std::string>());
    }
  }
  if (doc.contains("attach")) {
    if (!doc["attach"].is_boolean()) return InvalidArgument("delivery.attach is not a boolean");
    spec.attach = doc["attach"].get<bool>();
  }
  if (doc.contains("skipIfEmpty")) {
    if (!doc["skipIfEmpty"].is_boolean()) {
      return InvalidArgument("delivery.skipIfEmpty is not a boolean");
    }
    spec.skip_if_empty = doc["skipIfEmpty"].get<bool>();
  }
  return spec;
}

SubscriptionDelivery::SubscriptionDelivery(store::RunDeliveryLedger* runs,
                                           store::TaskCatalog* tasks, store::MailOutbox* mails,
                                           DeliveryLinks links, DeliveryOptions options)
    : runs_(runs),
      tasks_(tasks),
      mails_(mails),
      links_(std::move(links)),
      options_(std::move(options)) {}

StatusOr<DeliveryFigures> SubscriptionDelivery::RunRound() {
  DeliveryFigures figures;
  EC_ASSIGN_OR_RETURN(std::vector<store::DeliverableRun> due,
                      runs_->SelectDeliverableRuns(options_.batch));
  for (const store::DeliverableRun& run : due) {
    EC_RETURN_IF_ERROR(DeliverOne(run, figures));
  }
  return figures;
}

Status SubscriptionDelivery::DeliverOne(const store::DeliverableRun& run,
                                        DeliveryFigures& figures) {
  StatusOr<DeliverySpec> spec = ParseDeliveryJson(run.delivery_json);
  if (!spec.ok()) {
    return Mark(run, store::RunDelivery::kNotMailed,
                "the delivery settings are unreadable: " + spec.status().message(),
                &figures.not_mailed);
  }
  if (run.outcome == store::RunOutcome::kFailed) {
    return Notice(run, *spec, "the run failed: " + run.detail.value_or("no detail recorded"),
                  figures);
  }
  StatusOr<task::Task> task = tasks_->GetTask(run.task_id.value_or(0));
  if (!task.ok()) {
    if (task.status().code() != StatusCode::kNotFound) return task.status();
    return Mark(run, store::RunDelivery::kNotMailed,
                "task " + std::to_string(run.task_id.value_or(0)) + " is gone",
                &figures.not_mailed);
  }
  if (task->status != task::TaskState::kSucceeded) {
    std::string why = "its task " + std::to_string(task->id) + " ended " +
                      std::string(task::ToString(task->status));
    if (task->failure_message) why += ": " + *task->failure_message;
    return Notice(run, *spec, why, figures);
  }
  if (spec->skip_if_empty && task->total_rows.value_or(0) == 0) {
    return Mark(run, store::RunDelivery::kSkippedEmpty, "skipped: empty", &figures.skipped_empty);
  }
  return MailFile(run, *spec, *task, figures);
}

Status SubscriptionDelivery::MailFile(const store::DeliverableRun& run, const DeliverySpec& spec,
                                      const task::Task& task, DeliveryFigures& figures) {
  if (spec.emails.empty()) {
    return Mark(run, store::RunDelivery::kNotMailed, "no recipients", &figures.not_mailed);
  }
  const std::string file_name = task.file_name.value_or("export");
  const int64_t size = task.size_bytes.value_or(0);
  const std::string period = Period(task, run.slot_at, run.time_zone);
  const int64_t expires_at = links_.now_ms() + options_.link_ttl_ms;
  StatusOr<std::string> link = links_.download(task, expires_at);

  // Attached only when asked and under the cap; the mail says which.
  bool attached = false;
  std::string attachment_line;
  if (spec.attach) {
    if (!options_.attachments) {
      attachment_line =
          "The file is not attached: attachments are switched off here (subscriptions.attach).";
    } else if (!task.object_key) {
      attachment_line = "The file is not attached: it is no longer stored.";
    } else if (size > options_.attachment_max_bytes) {
      attachment_line = "The file is not attached: it is " + Size(size) + ", over the " +
                        Size(options_.attachment_max_bytes) +
                        " limit for attachments (mail.attachment-max-bytes). Use the link.";
    } else {
      attached = true;
      attachment_line = "The file is attached.";
    }
  }

  std::string body = "Your subscription \"" + run.task_name + "\" (" + run.export_type + ", " +
                     std::string(task::ToString(task.format)) + ") ran at " +
                     LocalSlot(run.slot_at, run.time_zone) + ".\n\nPeriod: " + period +
                     "\nRows: " + std::to_string(task.total_rows.value_or(0)) +
                     "\nFile: " + file_name + " (" + Size(size) + ")\n\n";
  if (link.ok()) {
    body += "Download it (the link works until " + FormatIsoMillis(expires_at) + "):\n" + *link +
            "\n\n";
  } else {
    body += "No download link: " + link.status().message() + "\n\n";
  }
  if (!attachment_line.empty()) body += attachment_line + "\n\n";
  body += "The file is also in your download center (task " + std::to_string(task.id) + ").\n";

  store::NewMail mail;
  mail.subscription_id = run.subscription_id;
  mail.task_id = task.id;
  mail.subject = "[Export Center] " + run.task_name + " — " + period;
  if (attached) {
    mail.attachment_key = task.object_key;
    mail.attachment_name = file_name;
    mail.attachment_type = task.content_type.value_or("application/octet-stream");
  }
  for (const std::string& to : spec.emails) {
    mail.message_id = MessageId(run, "file", to);
    mail.recipients = {to};
    mail.body_text = body + Footer(run, links_.unsubscribe(run.subscription_id, to));
    EC_RETURN_IF_ERROR(mails_->EnqueueMail(mail).status());
  }
  std::string detail = "mailed to " + std::to_string(spec.emails.size()) + " recipient(s)";
  if (spec.attach) detail += attached ? ", attached" : ", not attached";
  int marked = 0;
  EC_RETURN_IF_ERROR(Mark(run, store::RunDelivery::kMailed, detail, &marked));
  figures.mailed += marked;
  figures.mails += marked * static_cast<int>(spec.emails.size());
  return Status::Ok();
}

Status SubscriptionDelivery::Notice(const store::DeliverableRun& run, const DeliverySpec& spec,
                                    const std::string& why, DeliveryFigures& figures) {
  if (spec.emails.empty()) return Mark(run, store::RunDelivery::kNotMailed, why, &figures.failed);
  EC_ASSIGN_OR_RETURN(bool may_send, runs_->ClaimFailureNotice(run.subscription_id, run.slot_at,
                                                               options_.failure_grace_period_ms));
  if (!may_send) {
    return Mark(run, store::RunDelivery::kNoticeSuppressed,
                why + " (not mailed: a failure notice went out within the grace period)",
                &figures.failed);
  }
  const std::string when = LocalSlot(run.slot_at, run.time_zone);
  const int64_t grace_hours = options_.failure_grace_period_ms / (3600 * 1000);
  store::NewMail mail;
  mail.subscription_id = run.subscription_id;
  mail.task_id = run.task_id;
  mail.subject = "[Export Center] Failed: " + run.task_name + " — run of " + when;
  const std::string body =
      "The run of your subscription \"" + run.task_name + "\" (" + run.export_type + ") at " +
      when + " did not deliver a file: " + why +
      ".\n\nThe run history of the subscription is in the download center. Further failures "
      "within " +
      (grace_hours > 0 ? std::to_string(grace_hours) + " h"
                       : std::to_string(options_.failure_grace_period_ms / 1000) + " s") +
      " are not mailed; after several failures in a row the subscription pauses itself.\n";
  for (const std::string& to : spec.emails) {
    mail.message_id = MessageId(run, "failed", to);
    mail.recipients = {to};
    mail.body_text = body + Footer(run, links_.unsubscribe(run.subscription_id, to));
    EC_RETURN_IF_ERROR(mails_->EnqueueMail(mail).status());
  }
  int marked = 0;
  EC_RETURN_IF_ERROR(Mark(run, store::RunDelivery::kNoticeSent, why, &marked));
  figures.failed += marked;
  figures.notices += marked;
  figures.mails += marked * static_cast<int>(spec.emails.size());
  return Status::Ok();
}

Status SubscriptionDelivery::Mark(const store::DeliverableRun& run, store::RunDelivery delivery,
                                  const std::string& detail, int* counted) {
  EC_ASSIGN_OR_RETURN(store::MarkOutcome outcome,
                      runs_->MarkRunDelivery(run.subscription_id, run.slot_at, delivery, detail));
  if (outcome == store::MarkOutcome::kClaimLost) {
    // Another instance decided this run first; its mails have the same
    // Message-IDs, so ours were not written twice. It counts it.
    return Status::Ok();
  }
  ++*counted;
  spdlog::info("subscription {} run {}: {} ({})", run.subscription_id, FormatIsoMillis(run.slot_at),
               store::ToString(delivery), detail);
  return Status::Ok();
}

}  // namespace export_center::subscription
