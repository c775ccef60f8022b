#pragma once
// `export-center check --config F [--json]`: an operator's pre-flight
// (docs/deploy.md#before-the-first-start). Checks a configuration end to end
// and says what is wrong, changing nothing: the configuration and registry
// load; the task store answers and its schema is the binary's latest; the
// storage is writable; the command channel's topics and groups exist; every
// datasource a sql-template definition names answers `SELECT 1`; every
// provider service's base URL answers HTTP; the JWT settings are usable;
// with a plan tenant, each enabled sql-template scenario's plan advice
// (docs/sql-template-route.md#plan-advice), one `warn` line per advice.
//
// Each step prints one line "ok|FAIL|skip  <step>  <detail>" on stdout (with
// --json one JSON object per line: {"status", "step", "detail"}); a failing
// step does not stop the others, except the configuration's: without it
// there is nothing to check. No secret or token is printed: configured
// secrets and URL passwords are masked in every detail.

#include <string>

namespace export_center::app {

// Returns the exit code: 0 when every step passed, warned or was skipped
// (nothing of its kind configured), 1 when one failed. `plan_tenant`
// (--plan-tenant): the tenant the scenarios are planned for; empty: no plan step.
int RunCheck(const std::string& config_path, bool json, const std::string& plan_tenant = "");

}  // namespace export_center::app
