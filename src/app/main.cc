// export-center: the command line. `export-center --version` prints the release and the
// commit (common/build_info.h). Subcommands:
//   serve   --config FILE          run API, publisher, consumers and reconciler
//   migrate --config FILE          create or upgrade the schema, then exit
//   check   --config FILE [--json] [--plan-tenant T] check the configuration end to end,
//           changing nothing (with T: each sql-template scenario's plan advice)
//   token   --config FILE --user U --tenant T --app PLATFORM|MERCHANT --perm P ...
//                                   print a development JWT
//   demo    --config FILE          serve + the sample customer service + one export
//   rocketmq init --config FILE    create the channel's topics and groups (idempotent)
//   storage list --config FILE     print every stored object and partial upload/file
//   sql render --template-file T --params-file P [--untrusted NAME[,NAME...]]
//                                   print {"sql": ..., "bindings": [...]} for a template;
//                                   a ${} reading an --untrusted name fails

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "api/auth.h"
#include "app/backends.h"
#include "app/check_command.h"
#include "app/commands.h"
#include "common/build_info.h"
#include "common/thread_guard.h"
#include "config/config.h"
#include "source/sql/sql_template/sql_render_command.h"

namespace ec = export_center;

namespace {

int Fail(const ec::Status& status) {
  std::cerr << "export-center: " << status.message() << "\n";
  return 2;
}

ec::StatusOr<ec::config::AppConfig> Load(const std::string& path) {
  auto config = ec::config::LoadConfig(path);
  if (!config.ok()) return config.status().WithContext("invalid configuration " + path);
  return config;
}

int RunMigrate(const std::string& path) {
  auto config = Load(path);
  if (!config.ok()) return Fail(config.status());
  auto store = ec::app::OpenTaskStore(config->database);
  if (!store.ok()) return Fail(store.status());
  if (auto s = (*store)->Migrate(); !s.ok()) return Fail(s);
  if (auto s = (*store)->CheckGuardRow(); !s.ok()) return Fail(s);
  std::cout << "schema is up to date (" << config->database.kind << ")\n";
  return 0;
}

int RunRocketMqInit(const std::string& path) {
  auto config = Load(path);
  if (!config.ok()) return Fail(config.status());
  spdlog::set_level(spdlog::level::from_str(config->logging.level));
  ec::Status s = ec::app::InitCommandChannel(
      config->channel, [](const std::string& line) { std::cout << line << std::endl; });
  if (!s.ok()) return Fail(s.WithContext("rocketmq init"));
  std::cout << "rocketmq: topics and groups are ready\n";
  return 0;
}

int RunToken(const std::string& path, const ec::app::TokenOptions& options) {
  auto config = Load(path);
  if (!config.ok()) return Fail(config.status());
  auto token = ec::app::MintDevToken(*config, options);
  if (!token.ok()) return Fail(token.status());
  std::cout << *token << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists: every thread gets at least 8 MiB of stack
  // (docs/fuzzing.md#nesting).
  if (!ec::RaiseDefaultThreadStack()) {
    std::cerr << "export-center: warning: could not raise the default thread stack\n";
  }
  CLI::App cli{"export-center: a shared export and download center"};
  // Answered before the subcommand is required: `export-center --version` alone.
  cli.set_version_flag("--version", "export-center " + ec::build_info::Describe(),
                       "print the version and the commit, then exit");
  cli.require_subcommand(1);
  std::string config_path;

  auto* serve = cli.add_subcommand("serve", "run the center");
  serve->add_option("--config", config_path, "YAML configuration file")->required();
  auto* migrate = cli.add_subcommand("migrate", "create or upgrade the database schema");
  migrate->add_option("--config", config_path, "YAML configuration file")->required();
  auto* check = cli.add_subcommand(
      "check", "check store, storage, channel, datasources, provider services and auth");
  check->add_option("--config", config_path, "YAML configuration file")->required();
  bool check_json = false;
  check->add_flag("--json", check_json, "one JSON object per step");
  std::string check_plan_tenant;
  check->add_option("--plan-tenant", check_plan_tenant,
                    "also read each sql-template scenario's first page as this tenant and list "
                    "its plan advice");
  auto* demo = cli.add_subcommand("demo", "run the center with the sample customer service");
  demo->add_option("--config", config_path, "YAML configuration file")->required();

  ec::app::TokenOptions token_options;
  auto* token = cli.add_subcommand("token", "print a development JWT");
  token->add_option("--config", config_path, "YAML configuration file")->required();
  token->add_option("--user", token_options.user, "subject (user id)")->required();
  token->add_option("--tenant", token_options.tenant, "tenant id")->required();
  token->add_option("--app", token_options.app, "PLATFORM or MERCHANT")
      ->check(CLI::IsMember({"PLATFORM", "MERCHANT"}));
  token->add_option("--perm", token_options.perms, "permission (repeatable)");
  token->add_option("--ttl", token_options.ttl_seconds, "lifetime in seconds")
      ->check(CLI::Range(1, 365 * 86400));

  auto* rocketmq = cli.add_subcommand("rocketmq", "RocketMQ command-channel tools");
  auto* rocketmq_init = rocketmq->add_subcommand(
      "init", "create the command topic, the DLQ topic and both consumer groups (idempotent)");
  rocketmq_init->add_option("--config", config_path, "YAML configuration file")->required();
  rocketmq->require_subcommand(1);
  auto* storage = cli.add_subcommand("storage", "storage tools");
  auto* storage_list = storage->add_subcommand(
      "list", "print key, size and complete|partial of every stored object");
  storage_list->add_option("--config", config_path, "YAML configuration file")->required();
  storage->require_subcommand(1);

  auto* sql = cli.add_subcommand("sql", "SQL-template tools");
  auto* render = sql->add_subcommand("render", "render a MyBatis template to SQL + bindings");
  std::string template_file, params_file;
  render->add_option("--template-file", template_file, "the template (XML or text)")->required();
  render->add_option("--params-file", params_file, "the parameters (JSON object)")->required();
  std::vector<std::string> untrusted;
  render
      ->add_option("--untrusted", untrusted,
                   "parameters a user types freely (comma-separated, repeatable): a ${} that "
                   "reads one fails the render")
      ->delimiter(',');
  sql->require_subcommand(1);

  CLI11_PARSE(cli, argc, argv);

  if (render->parsed()) {
    std::set<std::string> names;
    for (const std::string& name : untrusted) {
      if (!name.empty()) names.insert(name);
    }
    return ec::sql_template::RunSqlRender(template_file, params_file, names);
  }

  if (serve->parsed()) return ec::app::RunServe(config_path);
  if (migrate->parsed()) return RunMigrate(config_path);
  if (check->parsed()) return ec::app::RunCheck(config_path, check_json, check_plan_tenant);
  if (token->parsed()) return RunToken(config_path, token_options);
  if (demo->parsed()) return ec::app::RunDemo(config_path);
  if (rocketmq_init->parsed()) return RunRocketMqInit(config_path);
  if (storage_list->parsed()) return ec::app::RunStorageList(config_path);
  return 1;
}
