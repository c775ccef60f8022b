#include "usecase/subscriptions.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "common/ids.h"
#include "common/utf8.h"
#include "notify/mail/mail_recipients.h"
#include "schedule/cron.h"
#include "schedule/relative_date.h"
#include "schedule/schedule.h"
#include "usecase/create_request.h"
#include "usecase/subscription_parameters.h"

namespace export_center::usecase {

using json = nlohmann::json;
using store::Subscription;

namespace {

constexpr int64_t kMinuteMs = 60'000;

// "field: message", the field first as every error of a body names it.
Status FieldError(const std::string& field, const std::string& message) {
  return InvalidArgument(field + ": " + message);
}

Status OnlyKeys(const json& object, const std::string& field,
                std::initializer_list<const char*> keys) {
  for (const auto& [key, value] : object.items()) {
    if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return key == k; }) ==
        keys.end()) {
      return FieldError(
          field.empty() ? utf8::Excerpt(key, 40) : field + "." + utf8::Excerpt(key, 40),
          "unknown field");
    }
  }
  return Status::Ok();
}

// "HH:MM" → hour and minute.
Status ReadTime(const json& schedule, schedule::Preset& preset) {
  auto t = schedule.find("time");
  if (t == schedule.end()) return FieldError("schedule.time", "is required, as HH:MM");
  const std::string text = t->is_string() ? t->get<std::string>() : "";
  auto digit = [&](size_t i) { return text[i] >= '0' && text[i] <= '9'; };
  if (text.size() != 5 || text[2] != ':' || !digit(0) || !digit(1) || !digit(3) || !digit(4)) {
    return FieldError("schedule.time", "must be HH:MM, such as 09:00");
  }
  preset.hour = (text[0] - '0') * 10 + (text[1] - '0');
  preset.minute = (text[3] - '0') * 10 + (text[4] - '0');
  if (preset.hour > 23 || preset.minute > 59) {
    return FieldError("schedule.time", "'" + text + "' is not a time of day");
  }
  return Status::Ok();
}

StatusOr<int> ReadInt(const json& schedule, const char* key, int low, int high, int fallback) {
  auto v = schedule.find(key);
  if (v == schedule.end()) return fallback;
  if (!v->is_number_integer() || v->get<int64_t>() < low || v->get<int64_t>() > high) {
    return FieldError(
        std::string("schedule.") + key,
        "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high));
  }
  return static_cast<int>(v->get<int64_t>());
}

// The schedule object: a preset or {"cron": "..."}. Returns the cron and
// stores the schedule as sent, normalised, in `as_sent`.
StatusOr<schedule::CronExpression> ReadSchedule(const json& body, json& as_sent) {
  auto found = body.find("schedule");
  if (found == body.end() || !found->is_object()) {
    return FieldError("schedule", "is required: a preset or {\"cron\": \"m h dom mon dow\"}");
  }
  const json& s = *found;
  if (s.contains("cron")) {
    EC_RETURN_IF_ERROR(OnlyKeys(s, "schedule", {"cron"}));
    if (!s["cron"].is_string()) return FieldError("schedule.cron", "must be a string");
    auto cron = schedule::CronExpression::Parse(s["cron"].get<std::string>());
    if (!cron.ok()) return FieldError("schedule.cron", cron.status().message());
    as_sent = {{"cron", cron->text()}};
    return cron;
  }
  auto kind = s.find("preset");
  const std::string name = kind != s.end() && kind->is_string() ? kind->get<std::string>() : "";
  schedule::Preset preset;
  if (name == "hourly") {
    EC_RETURN_IF_ERROR(OnlyKeys(s, "schedule", {"preset", "minute"}));
    preset.kind = schedule::PresetKind::kHourly;
    EC_ASSIGN_OR_RETURN(preset.minute, ReadInt(s, "minute", 0, 59, 0));
    as_sent = {{"preset", name}, {"minute", preset.minute}};
  } else if (name == "daily") {
    EC_RETURN_IF_ERROR(OnlyKeys(s, "schedule", {"preset", "time"}));
    preset.kind = schedule::PresetKind::kDaily;
    EC_RETURN_IF_ERROR(ReadTime(s, preset));
    as_sent = {{"preset", name}, {"time", s["time"]}};
  } else if (name == "weekly") {
    EC_RETURN_IF_ERROR(OnlyKeys(s, "schedule", {"preset", "days", "time"}));
    preset.kind = schedule::PresetKind::kWeekly;
    EC_RETURN_IF_ERROR(ReadTime(s, preset));
    static const char* kDays[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
    auto days = s.find("days");
    if (days == s.end() || !days->is_array() || days->empty() || days->size() > 7) {
      return FieldError("schedule.days", "must list 1 to 7 days, such as [\"MON\", \"WED\"]");
    }
    json sent_days = json::array();
    for (size_t i = 0; i < days->size(); ++i) {
      const json& d = (*days)[i];
      const std::string field = "schedule.days[" + std::to_string(i) + "]";
      int found_day = -1;
      for (int k = 0; k < 7 && d.is_string(); ++k) {
        if (d.get<std::string>() == kDays[k]) found_day = k;
      }
      if (found_day < 0) return FieldError(field, "must be one of MON TUE WED THU FRI SAT SUN");
      if (std::find(preset.weekdays.begin(), preset.weekdays.end(), found_day) !=
          preset.weekdays.end()) {
        return FieldError(field, "names a day twice");
      }
      preset.weekdays.push_back(found_day);
      sent_days.push_back(kDays[found_day]);
    }
    as_sent = {{"preset", name}, {"days", sent_days}, {"time", s["time"]}};
  } else if (name == "monthly") {
    EC_RETURN_IF_ERROR(OnlyKeys(s, "schedule", {"preset", "day", "time"}));
    preset.kind = schedule::PresetKind::kMonthly;
    EC_RETURN_IF_ERROR(ReadTime(s, preset));
    EC_ASSIGN_OR_RETURN(preset.day_of_month, ReadInt(s, "day", 1, 28, 1));
    as_sent = {{"preset", name}, {"day", preset.day_of_month}, {"time", s["time"]}};
  } else {
    return FieldError("schedule.preset", "must be hourly, daily, weekly or monthly (or give cron)");
  }
  auto cron = schedule::PresetToCron(preset);
  if (!cron.ok()) return FieldError("schedule", cron.status().message());
  return cron;
}

// {"emails": [...], "attach": false, "skipIfEmpty": false}, normalised.
StatusOr<json> ReadDelivery(const SubscriptionDeps& deps, const json& body) {
  json out = {{"emails", json::array()}, {"attach", false}, {"skipIfEmpty", false}};
  auto found = body.find("delivery");
  if (found == body.end() || found->is_null()) return out;
  if (!found->is_object()) return FieldError("delivery", "must be an object");
  EC_RETURN_IF_ERROR(OnlyKeys(*found, "delivery", {"emails", "attach", "skipIfEmpty"}));
  for (const char* flag : {"attach", "skipIfEmpty"}) {
    auto v = found->find(flag);
    if (v == found->end() || v->is_null()) continue;
    if (!v->is_boolean())
      return FieldError(std::string("delivery.") + flag, "must be true or false");
    out[flag] = v->get<bool>();
  }
  auto emails = found->find("emails");
  if (emails == found->end() || emails->is_null()) return out;
  if (!emails->is_array()) return FieldError("delivery.emails", "must be a list of addresses");
  if (emails->empty()) return out;
  if (deps.mail == nullptr || !deps.mail->enabled || deps.mail->host.empty()) {
    return FieldError("delivery.emails", "e-mail is not configured on this server (mail:)");
  }
  std::vector<std::string> recipients;
  for (size_t i = 0; i < emails->size(); ++i) {
    if (!(*emails)[i].is_string()) {
      return FieldError("delivery.emails[" + std::to_string(i) + "]", "must be a string");
    }
    recipients.push_back((*emails)[i].get<std::string>());
  }
  EC_RETURN_IF_ERROR(notify::mail::CheckRecipients(*deps.mail, recipients, "delivery.emails"));
  out["emails"] = recipients;
  return out;
}

std::string PermsJson(const Principal& p) { return json(p.perms).dump(); }

// The owner's principal from the stored snapshot: what a run and an
// operator's edit check against.
Principal OwnerOf(const Subscription& s) {
  Principal owner;
  owner.user = s.spec.owner;
  owner.tenant = s.spec.tenant_id;
  owner.app = task::ParseAppCode(s.spec.app_code).value_or(task::AppCode::kPlatform);
  json perms = json::parse(s.spec.owner_perms, nullptr, false);
  if (perms.is_array()) {
    for (const json& perm : perms) {
      if (perm.is_string()) owner.perms.push_back(perm.get<std::string>());
    }
  }
  return owner;
}

bool IsOwner(const Principal& p, const Subscription& s) {
  return s.spec.tenant_id == p.tenant && s.spec.app_code == task::ToString(p.app) &&
         s.spec.owner == p.user;
}

// Stores the caller's permissions as the snapshot of their subscriptions:
// their runs create with what the owner holds now. A failure only delays it.
void RefreshSnapshot(const SubscriptionDeps& deps, const Principal& p) {
  auto refreshed = deps.ledger->RefreshOwnerPerms(p.tenant, p.user, PermsJson(p));
  if (!refreshed.ok()) {
    spdlog::warn("subscriptions: the permission snapshot of {} was not refreshed: {}", p.user,
                 refreshed.status().ToString());
  }
}

Status NoSuchSubscription(const std::string& id) {
  return NotFound("subscription " + utf8::Excerpt(id, 40) + " does not exist");
}

// The subscription `id` names, when `p` may manage it; NotFound otherwise.
StatusOr<Subscription> Load(const SubscriptionDeps& deps, const Principal& p,
                            const std::string& id) {
  std::optional<int64_t> parsed = ParseId(id);
  if (!parsed) return NoSuchSubscription(id);
  StatusOr<Subscription> s = deps.ledger->GetSubscription(*parsed);
  if (s.status().code() == StatusCode::kNotFound) return NoSuchSubscription(id);
  EC_RETURN_IF_ERROR(s.status());
  if (!CanManageSubscription(p, *s)) return NoSuchSubscription(id);
  return s;
}

StatusOr<schedule::Schedule> ScheduleOf(const Subscription& s) {
  EC_ASSIGN_OR_RETURN(schedule::CronExpression cron, schedule::CronExpression::Parse(s.spec.cron));
  return schedule::Schedule::Make(std::move(cron), s.spec.time_zone, s.spec.business_days_only);
}

SubscriptionView ViewOf(Subscription s) {
  SubscriptionView view;
  if (s.state == store::SubscriptionState::kActive && s.next_slot_at) {
    auto schedule = ScheduleOf(s);
    if (schedule.ok()) {
      std::optional<int64_t> slot = *s.next_slot_at;
      for (int i = 0; i < 3 && slot; ++i) {
        view.next_runs.push_back(*slot);
        slot = schedule->NextAfter(*slot);
      }
    }
  }
  view.subscription = std::move(s);
  return view;
}

StatusOr<int64_t> NextSlotAfter(const Subscription& s, int64_t now_ms) {
  EC_ASSIGN_OR_RETURN(schedule::Schedule schedule, ScheduleOf(s));
  std::optional<int64_t> next = schedule.NextAfter(now_ms);
  if (!next)
    return Conflict("the schedule of subscription " + std::to_string(s.id) + " fires no more");
  return *next;
}

}  // namespace

bool CanManageSubscription(const Principal& p, const Subscription& s) {
  if (IsOwner(p, s) || p.HasPerm(kSubscriptionOperateAllPermission)) return true;
  return p.HasPerm(kSubscriptionOperatePermission) && s.spec.tenant_id == p.tenant &&
         s.spec.app_code == task::ToString(p.app);
}

StatusOr<store::NewSubscription> CheckSubscriptionBody(const SubscriptionDeps& deps,
                                                       const json& body, const Principal& owner,
                                                       int64_t now_ms) {
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  EC_RETURN_IF_ERROR(OnlyKeys(body, "",
                              {"exportType", "format", "taskName", "parameters", "locale",
                               "schedule", "timeZone", "businessDaysOnly", "delivery", "version"}));
  auto snapshot = deps.snapshot();
  const registry::ExportDefinition* def = nullptr;
  if (auto type = body.find("exportType"); type != body.end() && type->is_string()) {
    def = snapshot->Find(type->get<std::string>());
  }

  store::NewSubscription spec;
  spec.time_zone =
      def != nullptr && !def->timezone.empty() ? def->timezone : deps.default_time_zone;
  if (auto zone = body.find("timeZone"); zone != body.end() && !zone->is_null()) {
    if (!zone->is_string() || zone->get_ref<const std::string&>().empty()) {
      return FieldError("timeZone", "must be an IANA time zone name such as Asia/Shanghai");
    }
    spec.time_zone = zone->get<std::string>();
  }
  auto zone = schedule::LoadZone(spec.time_zone);
  if (!zone.ok()) return FieldError("timeZone", zone.status().message());
  if (auto days = body.find("businessDaysOnly"); days != body.end() && !days->is_null()) {
    if (!days->is_boolean()) return FieldError("businessDaysOnly", "must be true or false");
    spec.business_days_only = days->get<bool>();
  }

  // Relative dates: checked and set aside; the create's checks see the date
  // they name today, and the stored parameters keep the relative form.
  json params = body.contains("parameters") ? body.at("parameters") : json::object();
  json relatives = json::object();
  if (params.is_object() && def != nullptr) {
    EC_ASSIGN_OR_RETURN(relatives, ReadRelativeParameters(params, *def));
    EC_ASSIGN_OR_RETURN(params, ResolveRelativeParameters(params, now_ms, *zone));
  }
  json create_body = {{"exportType", body.value("exportType", json())},
                      {"parameters", std::move(params)}};
  for (const char* key : {"format", "taskName", "locale"}) {
    if (body.contains(key)) create_body[key] = body[key];
  }
  EC_ASSIGN_OR_RETURN(CreateRequest request,
                      CheckCreateBody(create_body, owner, snapshot, deps.limits));
  if (!request.file_password_required_by.empty()) {
    return FieldError("exportType", "needs a filePassword (" + request.file_password_required_by +
                                        "), which a subscription cannot keep");
  }
  json stored = json::parse(request.canonical_parameters, nullptr, false);
  if (!stored.is_object()) stored = json::object();
  for (const auto& [name, relative] : relatives.items()) stored[name] = relative;

  json schedule_sent;
  EC_ASSIGN_OR_RETURN(schedule::CronExpression cron, ReadSchedule(body, schedule_sent));
  spec.cron = cron.text();
  auto schedule = schedule::Schedule::Make(cron, spec.time_zone, spec.business_days_only);
  if (!schedule.ok()) return FieldError("timeZone", schedule.status().message());
  Status often = schedule->CheckFiresAtMost(
      static_cast<int64_t>(std::max(1, deps.options.min_interval_minutes)) * kMinuteMs, now_ms);
  if (!often.ok()) return FieldError("schedule.cron", often.message());
  std::optional<int64_t> first = schedule->NextAfter(now_ms);
  if (!first) return FieldError("schedule.cron", "never fires");

  EC_ASSIGN_OR_RETURN(json delivery, ReadDelivery(deps, body));
  spec.tenant_id = owner.tenant;
  spec.app_code = std::string(task::ToString(owner.app));
  spec.owner = owner.user;
  spec.export_type = request.definition->name;
  spec.format = std::string(task::ToString(request.format));
  spec.task_name = request.task_name;
  spec.parameters_json = stored.dump();
  spec.delivery_json = delivery.dump();
  spec.first_slot_at = *first;
  spec.owner_perms = PermsJson(owner);
  spec.schedule_json = schedule_sent.dump();
  spec.locale = request.locale;
  return spec;
}

StatusOr<SubscriptionView> CreateSubscription(const SubscriptionDeps& deps, const Principal& p,
                                              const json& body) {
  RefreshSnapshot(deps, p);
  if (body.is_object() && body.contains("version")) {
    return FieldError("version", "is only for an edit (PUT)");
  }
  EC_ASSIGN_OR_RETURN(int64_t now, deps.ledger->DatabaseNowMs());
  EC_ASSIGN_OR_RETURN(store::NewSubscription spec, CheckSubscriptionBody(deps, body, p, now));
  EC_ASSIGN_OR_RETURN(
      Subscription made,
      deps.ledger->CreateSubscription(
          spec, store::SubscriptionCaps{deps.options.max_per_owner, deps.options.max_per_tenant}));
  spdlog::info("subscription created id={} owner={} tenantId={} exportType={} cron='{}' zone={}",
               made.id, p.user, p.tenant, made.spec.export_type, made.spec.cron,
               made.spec.time_zone);
  return ViewOf(std::move(made));
}

StatusOr<SubscriptionView> GetSubscription(const SubscriptionDeps& deps, const Principal& p,
                                           const std::string& id) {
  RefreshSnapshot(deps, p);
  EC_ASSIGN_OR_RETURN(Subscription s, Load(deps, p, id));
  return ViewOf(std::move(s));
}

StatusOr<std::vector<SubscriptionView>> ListOwnSubscriptions(const SubscriptionDeps& deps,
                                                             const Principal& p, int64_t after_id,
                                                             int limit) {
  RefreshSnapshot(deps, p);
  store::SubscriptionFilter mine;
  mine.tenant_id = p.tenant;
  mine.app_code = std::string(task::ToString(p.app));
  mine.owner = p.user;
  EC_ASSIGN_OR_RETURN(std::vector<Subscription> rows,
                      deps.ledger->FindSubscriptions(mine, after_id, limit));
  std::vector<SubscriptionView> views;
  for (Subscription& s : rows) views.push_back(ViewOf(std::move(s)));
  return views;
}

StatusOr<SubscriptionView> EditSubscription(const SubscriptionDeps& deps, const Principal& p,
                                            const std::string& id, const json& body) {
  RefreshSnapshot(deps, p);
  EC_ASSIGN_OR_RETURN(Subscription s, Load(deps, p, id));
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  auto version = body.find("version");
  if (version == body.end() || !version->is_number_integer()) {
    return FieldError("version", "is required: the version the edit was made on");
  }
  EC_ASSIGN_OR_RETURN(int64_t now, deps.ledger->DatabaseNowMs());
  const Principal owner = IsOwner(p, s) ? p : OwnerOf(s);
  EC_ASSIGN_OR_RETURN(store::NewSubscription spec, CheckSubscriptionBody(deps, body, owner, now));
  if (!IsOwner(p, s)) spec.owner_perms = s.spec.owner_perms;
  EC_ASSIGN_OR_RETURN(
      Subscription edited,
      deps.ledger->UpdateSubscription(s.id, static_cast<int32_t>(version->get<int64_t>()), spec));
  spdlog::info("subscription edited id={} by={} cron='{}' zone={}", s.id, p.user, edited.spec.cron,
               edited.spec.time_zone);
  return ViewOf(std::move(edited));
}

Status DeleteSubscription(const SubscriptionDeps& deps, const Principal& p, const std::string& id) {
  RefreshSnapshot(deps, p);
  EC_ASSIGN_OR_RETURN(Subscription s, Load(deps, p, id));
  EC_RETURN_IF_ERROR(deps.ledger->DeleteSubscription(s.id));
  spdlog::info("subscription deleted id={} by={}", s.id, p.user);
  return Status::Ok();
}

StatusOr<SubscriptionView> PauseSubscription(const SubscriptionDeps& deps, const Principal& p,
                                             const std::string& id) {
  RefreshSnapshot(deps, p);
  EC_ASSIGN_OR_RETURN(Subscription s, Load(deps, p, id));
  const std::string detail = IsOwner(p, s) ? "paused by its owner" : "paused by operator " + p.user;
  EC_RETURN_IF_ERROR(deps.ledger->PauseSubscription(s.id, "OWNER", detail));
  EC_ASSIGN_OR_RETURN(Subscription paused, deps.ledger->GetSubscription(s.id));
  return ViewOf(std::move(paused));
}

StatusOr<SubscriptionView> ResumeSubscription(const SubscriptionDeps& deps, const Principal& p,
                                              const std::string& id) {
  RefreshSnapshot(deps, p);
  EC_ASSIGN_OR_RETURN(Subscription s, Load(deps, p, id));
  EC_ASSIGN_OR_RETURN(int64_t now, deps.ledger->DatabaseNowMs());
  EC_ASSIGN_OR_RETURN(int64_t next, NextSlotAfter(s, now));
  EC_RETURN_IF_ERROR(deps.ledger->ResumeSubscription(s.id, next));
  EC_ASSIGN_OR_RETURN(Subscription resumed, deps.ledger->GetSubscription(s.id));
  return ViewOf(std::move(resumed));
}

StatusOr<store::SubscriptionRun> RunSubscriptionNow(const SubscriptionDeps& deps,
                                                    const Principal& p, const std::string& id) {
  RefreshSnapshot(deps, p);
  EC_ASSIGN_OR_RETURN(Subscription s, Load(deps, p, id));
  if (s.state != store::SubscriptionState::kActive) {
    return Conflict("subscription " + std::to_string(s.id) + " is PAUSED; resume it to run it");
  }
  EC_ASSIGN_OR_RETURN(int64_t now, deps.ledger->DatabaseNowMs());
  EC_ASSIGN_OR_RETURN(int64_t next, NextSlotAfter(s, now));
  // The slot is now; its lease is already out (a millisecond before now), so
  // the scheduler's next round takes it over like a run whose instance
  // died: one taker, recorded.
  EC_ASSIGN_OR_RETURN(std::optional<store::SubscriptionRun> run,
                      deps.ledger->ClaimSlot(s.id, now, next, "run-now", -1));
  if (!run) {
    return Conflict("subscription " + std::to_string(s.id) +
                    " just ran or changed; read it again and retry");
  }
  spdlog::info("subscription run now id={} by={} slot={}", s.id, p.user, now);
  if (deps.on_run_now) deps.on_run_now();
  return *run;
}

StatusOr<std::vector<store::SubscriptionRun>> ListSubscriptionRuns(const SubscriptionDeps& deps,
                                                                   const Principal& p,
                                                                   const std::string& id,
                                                                   int limit) {
  RefreshSnapshot(deps, p);
  EC_ASSIGN_OR_RETURN(Subscription s, Load(deps, p, id));
  return deps.ledger->ListRuns(s.id, limit);
}

StatusOr<std::vector<SubscriptionView>> ListScopeSubscriptions(
    const SubscriptionDeps& deps, const Principal& p, const std::string& tenant,
    std::optional<store::SubscriptionState> state, int64_t after_id, int limit) {
  store::SubscriptionFilter filter;
  filter.state = state;
  if (p.HasPerm(kSubscriptionOperateAllPermission)) {
    if (!tenant.empty()) filter.tenant_id = tenant;
  } else if (p.HasPerm(kSubscriptionOperatePermission)) {
    if (!tenant.empty() && tenant != p.tenant) {
      return PermissionDenied(std::string("other tenants need permission ") +
                              kSubscriptionOperateAllPermission);
    }
    filter.tenant_id = p.tenant;
    filter.app_code = std::string(task::ToString(p.app));
  } else {
    return PermissionDenied(std::string("the operators' console requires permission ") +
                            kSubscriptionOperatePermission + " or " +
                            kSubscriptionOperateAllPermission);
  }
  EC_ASSIGN_OR_RETURN(std::vector<Subscription> rows,
                      deps.ledger->FindSubscriptions(filter, after_id, limit));
  std::vector<SubscriptionView> views;
  for (Subscription& s : rows) views.push_back(ViewOf(std::move(s)));
  return views;
}

}  // namespace export_center::usecase
