#include "subscription/delivery.h"

#include <cctz/time_zone.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <utility>

#include "common/time_format.h"
#include "schedule/schedule.h"
#include "task/language.h"

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

// Every text of a subscription's mails, one table per language: the
// templates' {names} are filled by Fill, whose values are never read again
// (a task named "{link}" stays so).
struct MailTexts {
  std::string_view subject;           // {name} {period}
  std::string_view ran;               // {name} {type} {format} {when} {period} {rows} {file} {size}
  std::string_view period_range;      // {from} {to}
  std::string_view download;          // {until} {link}
  std::string_view no_link;           // {why}
  std::string_view attached;          //
  std::string_view not_attached_off;  //
  std::string_view not_attached_gone;
  std::string_view not_attached_cap;  // {size} {cap}
  std::string_view in_center;         // {task}
  std::string_view failed_subject;    // {name} {when}
  std::string_view failed_body;       // {name} {type} {when} {why} {grace}
  std::string_view run_failed;        // {detail}
  std::string_view no_detail;
  std::string_view task_ended;  // {task} {state}
  std::string_view colon;       // before the task's failure message
  std::string_view hours;       // {n}
  std::string_view seconds;     // {n}
  std::string_view bytes;       // {n}
  std::string_view footer;      // {id} {owner} {link}
};

constexpr MailTexts kEnglish{
    "[Export Center] {name} — {period}",
    "Your subscription \"{name}\" ({type}, {format}) ran at {when}.\n\nPeriod: {period}\nRows: "
    "{rows}\nFile: {file} ({size})\n\n",
    "{from} to {to}",
    "Download it (the link works until {until}):\n{link}\n\n",
    "No download link: {why}\n\n",
    "The file is attached.",
    "The file is not attached: attachments are switched off here (subscriptions.attach).",
    "The file is not attached: it is no longer stored.",
    "The file is not attached: it is {size}, over the {cap} limit for attachments "
    "(mail.attachment-max-bytes). Use the link.",
    "The file is also in your download center (task {task}).\n",
    "[Export Center] Failed: {name} — run of {when}",
    "The run of your subscription \"{name}\" ({type}) at {when} did not deliver a file: {why}.\n\n"
    "The run history of the subscription is in the download center. Further failures within "
    "{grace} are not mailed; after several failures in a row the subscription pauses itself.\n",
    "the run failed: {detail}",
    "no detail recorded",
    "its task {task} ended {state}",
    ": ",
    "{n} h",
    "{n} s",
    "{n} bytes",
    "\n--\nYou receive this as a recipient of subscription {id} of {owner} in the export "
    "center.\nTo stop receiving it: {link}\n",
};

constexpr MailTexts kChinese{
    "[导出中心] {name} — {period}",
    "你的订阅“{name}”（{type}，{format}）已于 {when} 运行。\n\n时间范围：{period}\n行数：{rows}\n"
    "文件：{file}（{size}）\n\n",
    "{from} 至 {to}",
    "下载（链接有效期至 {until}）：\n{link}\n\n",
    "没有下载链接：{why}\n\n",
    "文件已作为附件随邮件发送。",
    "文件未附上：此处已关闭附件（subscriptions.attach）。",
    "文件未附上：文件已不再保存。",
    "文件未附上：文件大小为 {size}，超过附件上限 {cap}（mail.attachment-max-bytes）。"
    "请使用上面的链接下载。",
    "文件也在你的下载中心（任务 {task}）。\n",
    "[导出中心] 失败：{name} — {when} 的运行",
    "你的订阅“{name}”（{type}）在 {when} 的运行没有产出文件：{why}。\n\n"
    "订阅的运行记录在下载中心。{grace}内再次失败不再发邮件；连续失败多次后，订阅会自动暂停。\n",
    "运行失败：{detail}",
    "没有记录详情",
    "任务 {task} 结束于 {state}",
    "：",
    "{n} 小时",
    "{n} 秒",
    "{n} 字节",
    "\n--\n你收到这封邮件，是因为你是导出中心里 {owner} 的订阅 {id} 的收件人。\n"
    "如不想再收到，请打开以下链接退订：\n{link}\n",
};

// The mails' languages by the one language rule (task/language.h): the
// subscription's locale, its exact tag then its primary subtag; English
// when it has none or none matches. "zh" is the Chinese table too.
const MailTexts& TextsFor(const std::string& locale) {
  static const std::vector<std::string_view> kTags = {"en", "zh-CN", "zh"};
  static const MailTexts* const kTables[] = {&kEnglish, &kChinese, &kChinese};
  return *kTables[task::ChooseLanguage(kTags, task::Languages{locale, "en"})];
}

// `text` with each {name} of `values` replaced; other braces stay.
std::string Fill(std::string_view text,
                 std::initializer_list<std::pair<std::string_view, std::string>> values) {
  std::string out;
  out.reserve(text.size() + 64);
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    if (open == std::string_view::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string_view::npos) break;
    out.append(text, i, open - i);
    const std::string_view name = text.substr(open + 1, close - open - 1);
    bool filled = false;
    for (const auto& [key, value] : values) {
      if (key == name) {
        out += value;
        filled = true;
        break;
      }
    }
    if (!filled) out.append(text, open, close - open + 1);
    i = close + 1;
  }
  out.append(text, i, std::string_view::npos);
  return out;
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
std::string Period(const MailTexts& t, const task::Task& task, int64_t slot_ms,
                   const std::string& zone_name) {
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
  if (dates.front() == dates.back()) return dates.front();
  return Fill(t.period_range, {{"from", dates.front()}, {"to", dates.back()}});
}

std::string Size(const MailTexts& t, int64_t bytes) {
  char buf[32];
  if (bytes >= 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(bytes) / 1024.0);
  } else {
    return Fill(t.bytes, {{"n", std::to_string(bytes)}});
  }
  return buf;
}

std::string Footer(const MailTexts& t, const store::DeliverableRun& run,
                   const std::string& unsubscribe) {
  return Fill(
      t.footer,
      {{"id", std::to_string(run.subscription_id)}, {"owner", run.owner}, {"link", unsubscribe}});
}

// The List-Unsubscribe URL of a mail (store/mail_outbox.h): the recipient's
// unsubscribe link when it is http(s) (one-click needs https, RFC 8058: the
// server's public base URL), within 900 bytes and printable ASCII without
// spaces or brackets — as api/ signs it; else none (the footer still has it).
std::optional<std::string> OneClick(const std::string& url) {
  if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) return std::nullopt;
  if (url.size() > 900) return std::nullopt;
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '<' || c == '>') return std::nullopt;
  }
  return url;
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
  const MailTexts& t = TextsFor(run.locale);
  if (run.outcome == store::RunOutcome::kFailed) {
    // Recorded in English (the operators' record); told in the mail's language.
    const std::string recorded = "the run failed: " + run.detail.value_or("no detail recorded");
    const std::string told =
        Fill(t.run_failed, {{"detail", run.detail.value_or(std::string(t.no_detail))}});
    return Notice(run, *spec, recorded, told, figures);
  }
  StatusOr<task::Task> task = tasks_->GetTask(run.task_id.value_or(0));
  if (!task.ok()) {
    if (task.status().code() != StatusCode::kNotFound) return task.status();
    return Mark(run, store::RunDelivery::kNotMailed,
                "task " + std::to_string(run.task_id.value_or(0)) + " is gone",
                &figures.not_mailed);
  }
  if (task->status != task::TaskState::kSucceeded) {
    const std::string state(task::ToString(task->status));
    std::string recorded = "its task " + std::to_string(task->id) + " ended " + state;
    std::string told = Fill(t.task_ended, {{"task", std::to_string(task->id)}, {"state", state}});
    if (task->failure_message) {
      recorded += ": " + *task->failure_message;
      told += std::string(t.colon) + *task->failure_message;
    }
    return Notice(run, *spec, recorded, told, figures);
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
  const MailTexts& t = TextsFor(run.locale);
  const std::string file_name = task.file_name.value_or("export");
  const int64_t size = task.size_bytes.value_or(0);
  const std::string period = Period(t, task, run.slot_at, run.time_zone);
  const int64_t expires_at = links_.now_ms() + options_.link_ttl_ms;
  StatusOr<std::string> link = links_.download(task, expires_at);

  // Attached only when asked and under the cap; the mail says which.
  bool attached = false;
  std::string attachment_line;
  if (spec.attach) {
    if (!options_.attachments) {
      attachment_line = t.not_attached_off;
    } else if (!task.object_key) {
      attachment_line = t.not_attached_gone;
    } else if (size > options_.attachment_max_bytes) {
      attachment_line = Fill(t.not_attached_cap, {{"size", Size(t, size)},
                                                  {"cap", Size(t, options_.attachment_max_bytes)}});
    } else {
      attached = true;
      attachment_line = t.attached;
    }
  }

  std::string body = Fill(t.ran, {{"name", run.task_name},
                                  {"type", run.export_type},
                                  {"format", std::string(task::ToString(task.format))},
                                  {"when", LocalSlot(run.slot_at, run.time_zone)},
                                  {"period", period},
                                  {"rows", std::to_string(task.total_rows.value_or(0))},
                                  {"file", file_name},
                                  {"size", Size(t, size)}});
  if (link.ok()) {
    body += Fill(t.download, {{"until", FormatIsoMillis(expires_at)}, {"link", *link}});
  } else {
    body += Fill(t.no_link, {{"why", link.status().message()}});
  }
  if (!attachment_line.empty()) body += attachment_line + "\n\n";
  body += Fill(t.in_center, {{"task", std::to_string(task.id)}});

  store::NewMail mail;
  mail.subscription_id = run.subscription_id;
  mail.task_id = task.id;
  mail.subject = Fill(t.subject, {{"name", run.task_name}, {"period", period}});
  if (attached) {
    mail.attachment_key = task.object_key;
    mail.attachment_name = file_name;
    mail.attachment_type = task.content_type.value_or("application/octet-stream");
  }
  for (const std::string& to : spec.emails) {
    const std::string unsubscribe = links_.unsubscribe(run.subscription_id, to);
    mail.message_id = MessageId(run, "file", to);
    mail.recipients = {to};
    mail.body_text = body + Footer(t, run, unsubscribe);
    mail.list_unsubscribe = OneClick(unsubscribe);
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
                                    const std::string& why, const std::string& told,
                                    DeliveryFigures& figures) {
  if (spec.emails.empty()) return Mark(run, store::RunDelivery::kNotMailed, why, &figures.failed);
  EC_ASSIGN_OR_RETURN(bool may_send, runs_->ClaimFailureNotice(run.subscription_id, run.slot_at,
                                                               options_.failure_grace_period_ms));
  if (!may_send) {
    return Mark(run, store::RunDelivery::kNoticeSuppressed,
                why + " (not mailed: a failure notice went out within the grace period)",
                &figures.failed);
  }
  const MailTexts& t = TextsFor(run.locale);
  const std::string when = LocalSlot(run.slot_at, run.time_zone);
  const int64_t grace_hours = options_.failure_grace_period_ms / (3600 * 1000);
  const std::string grace =
      grace_hours > 0
          ? Fill(t.hours, {{"n", std::to_string(grace_hours)}})
          : Fill(t.seconds, {{"n", std::to_string(options_.failure_grace_period_ms / 1000)}});
  store::NewMail mail;
  mail.subscription_id = run.subscription_id;
  mail.task_id = run.task_id;
  mail.subject = Fill(t.failed_subject, {{"name", run.task_name}, {"when", when}});
  const std::string body = Fill(t.failed_body, {{"name", run.task_name},
                                                {"type", run.export_type},
                                                {"when", when},
                                                {"why", told},
                                                {"grace", grace}});
  for (const std::string& to : spec.emails) {
    const std::string unsubscribe = links_.unsubscribe(run.subscription_id, to);
    mail.message_id = MessageId(run, "failed", to);
    mail.recipients = {to};
    mail.body_text = body + Footer(t, run, unsubscribe);
    mail.list_unsubscribe = OneClick(unsubscribe);
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
