#pragma once
// AppConfig: the whole YAML configuration of one export-center process.
//
// LoadConfig reads one YAML file (see config/export-center.sample.yaml),
// lets an environment variable override any key (EXPORT_CENTER_SECTION__KEY,
// docs/configuration.md#environment), and validates every value. All
// errors are reported together, each with its key path and what is allowed.
// The registry sections (provider-services, definitions) are mapped by
// config/registry_yaml.h from the same file; the customer-service section
// belongs to the sample service and is skipped.
//
// Each section fills the options struct of the component that reads it
// (dispatch::ConsumerOptions for `consumer:`, ...): config/ only maps YAML
// onto them, and is the only component that knows the file exists.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/options.h"
#include "common/status.h"
#include "dispatch/options.h"
#include "notify/mail/mail_options.h"
#include "notify/notification_options.h"
#include "render/render_options.h"
#include "source/options.h"
#include "storage/storage_options.h"
#include "store/database_options.h"
#include "subscription/subscription_options.h"
#include "task/limits.h"
#include "task/preview.h"

namespace export_center::config {

// Where a setting's effective value came from, for `export-center check`.
struct SettingSource {
  std::string key;     // "consumer.concurrency"
  std::string origin;  // "file", "default", or the environment variable's name
  std::string shown;   // the value as printed; "(hidden)" for a secret
};

// The process's own setting, read by app/ alone: no component to own it.
struct LoggingConfig {
  std::string level = "info";  // trace | debug | info | warn | error
};

struct AppConfig {
  std::string path;         // the file it was loaded from
  std::string instance_id;  // default hostname:pid
  api::ServerOptions server;
  store::DatabaseOptions database;
  storage::StorageOptions storage;
  api::AuthOptions auth;
  task::LimitsOptions limits;
  task::PreviewOptions preview;
  dispatch::ConsumerOptions consumer;
  dispatch::PublisherOptions publisher;
  dispatch::ReconcilerOptions reconciler;
  dispatch::ChannelOptions channel;
  notify::NotificationOptions notifications;
  notify::mail::MailOptions mail;
  subscription::SubscriptionOptions subscriptions{};
  source::ProviderClientOptions provider;
  render::RenderOptions render;
  std::map<std::string, source::DatasourceOptions> datasources;
  LoggingConfig logging;
  // The sample business service `export-center demo` starts: "customer-service" (C++,
  // examples/customer-service) or "order-service" (Java, examples/order-service-java), named
  // by which of the two sections the file has. Each service reads its own section.
  std::string demo_service = "customer-service";
  // Names of the environment variables that overrode a file value, for the
  // start-up log (never their values).
  std::vector<std::string> env_overrides;
  // Every setting read, in the order config.cc reads them, with where its value came from (file,
  // an environment variable, the default) and the value, secrets hidden.
  std::vector<SettingSource> settings;
};

// Loads, applies env overrides, validates. Relative paths are resolved against
// the working directory. InvalidArgument lists every problem, one per line.
// A YAML syntax error is reported as "PATH:LINE:COLUMN: message"; a missing
// file as NotFound.
StatusOr<AppConfig> LoadConfig(const std::string& path);

// Parses and validates YAML text (LoadConfig minus the file read); `path` is
// recorded and names the text in messages. Used by tests.
StatusOr<AppConfig> ParseConfig(std::string_view yaml, const std::string& path);

// "customer-service" -> "CUSTOMER_SERVICE": the suffix of per-name env vars.
std::string UpperSnake(const std::string& name);

}  // namespace export_center::config
