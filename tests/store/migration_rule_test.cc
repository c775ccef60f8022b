// The compatibility rule of migrations (docs/store.md#compatibility-rule), enforced on
// the migration list as every dialect expands it: a migration may add tables, nullable
// columns or columns with a default, and indexes; it may not drop or rename anything a
// release still in support reads, nor change a column's meaning. A statement outside
// the rule passes only with a planned exception (kPlannedExceptions below): the
// migration, the reason, the release that stopped reading what it drops and the
// release that may finally drop it — two releases apart.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "store/dialect.h"
#include "store/migrations.h"

namespace export_center::store {
namespace {

// A statement outside the rule, allowed by a two-release plan: release
// `stopped_reading_in` no longer reads what the statement drops or changes, and
// `dropped_in` (at least one release later) ships the migration, whose
// compatible_from must be `stopped_reading_in` — so a binary older than that
// refuses the schema and names the release to run.
struct PlannedException {
  int migration = 0;
  std::string statement;  // as written in migrations.cc, before the dialect expands it
  std::string reason;
  std::string stopped_reading_in;
  std::string dropped_in;
};

// None today. Migration 6's DROP INDEX is within the rule: see DropIndexWithinRule.
const std::vector<PlannedException> kPlannedExceptions = {};

std::string Trim(std::string s) {
  const char* space = " \t\n";
  s.erase(0, s.find_first_not_of(space));
  s.erase(s.find_last_not_of(space) + 1);
  return s;
}

std::vector<std::string> SplitTopLevel(const std::string& text) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string part;
  for (char ch : text) {
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (ch == ',' && depth == 0) {
      parts.push_back(Trim(part));
      part.clear();
    } else {
      part += ch;
    }
  }
  if (!Trim(part).empty()) parts.push_back(Trim(part));
  return parts;
}

struct Index {
  std::string table;
  std::vector<std::string> columns;
  bool unique = false;
  int migration = 0;
};

// The schema as the migrations before the one being checked left it.
struct Schema {
  std::set<std::string> tables;
  std::map<std::string, Index> indexes;
};

// What one migration has done so far, statement by statement.
struct MigrationScope {
  std::set<std::string> new_tables;
  std::set<std::string> new_columns;  // "table.column"
  std::vector<Index> new_indexes;
};

const std::filesystem::path kSources = std::filesystem::path(EC_SOURCE_DIR) / "src";

// Every file under `root` but migrations.cc that names `name` (an index hint, a
// comment relying on it): dropping it would break or mislead that code.
std::vector<std::string> SourcesNaming(const std::filesystem::path& root, const std::string& name) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    if (entry.path().filename() == "migrations.cc") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(name) != std::string::npos) {
      found.push_back(std::filesystem::relative(entry.path(), root.parent_path()).string());
    }
  }
  return found;
}

// Dropping an index is within the rule when nothing can notice: no code names it,
// it was no constraint (not UNIQUE), and the same migration first creates an index
// on the same table that leads with the dropped one's columns, so every lookup it
// served the new one serves (results never depend on an index, only speed; here
// not even speed). Migration 6 is such a drop. "" when allowed, else why not.
std::string DropIndexWithinRule(const std::string& name, const std::string& table,
                                const Schema& schema, const MigrationScope& scope,
                                const std::filesystem::path& sources) {
  auto it = schema.indexes.find(name);
  if (it == schema.indexes.end() || it->second.table != table) {
    return "drops index " + name + " that no earlier migration created on " + table;
  }
  if (it->second.unique) return "drops the unique index " + name + ", a constraint";
  bool replaced = false;
  for (const Index& index : scope.new_indexes) {
    if (index.table != table || index.columns.size() < it->second.columns.size()) continue;
    replaced = replaced || std::equal(it->second.columns.begin(), it->second.columns.end(),
                                      index.columns.begin());
  }
  if (!replaced) {
    return "drops index " + name + " without first creating one that leads with its columns";
  }
  std::vector<std::string> naming = SourcesNaming(sources, name);
  if (!naming.empty()) return "drops index " + name + ", which " + naming[0] + " names";
  return "";
}

// "" when the statement keeps the rule, else why not. Updates schema and scope.
std::string Classify(const std::string& sql, int version, Schema& schema, MigrationScope& scope,
                     const std::filesystem::path& sources) {
  static const std::regex kCreateTable(R"(^CREATE TABLE IF NOT EXISTS (\w+) \((.*)\)[^)]*$)");
  static const std::regex kCreateIndex(
      R"(^CREATE (UNIQUE )?INDEX IF NOT EXISTS (\w+) ON (\w+) \(([^()]*)\)$)");
  static const std::regex kAddColumn(R"(^ALTER TABLE (\w+) ADD COLUMN IF NOT EXISTS (\w+) (.*)$)");
  static const std::regex kInsert(R"(^INSERT (IGNORE )?INTO (\w+) .*$)");
  static const std::regex kUpdate(R"(^UPDATE (\w+) SET (.*?)( WHERE .*)?$)");
  static const std::regex kDropIndex(R"(^DROP INDEX IF EXISTS (\w+) ON (\w+)$)");
  std::smatch m;
  if (std::regex_match(sql, m, kCreateTable)) {
    if (schema.tables.count(m[1])) return "creates table " + m[1].str() + ", which exists";
    scope.new_tables.insert(m[1]);
    return "";
  }
  if (std::regex_match(sql, m, kCreateIndex)) {
    Index index{m[3], {}, m[1].matched, version};
    for (const std::string& column : SplitTopLevel(m[4])) index.columns.push_back(column);
    if (index.unique && !scope.new_tables.count(index.table)) {
      // An older release may write rows the new constraint refuses.
      return "adds the unique index " + m[2].str() + " to the existing table " + index.table;
    }
    scope.new_indexes.push_back(index);
    schema.indexes[m[2]] = index;
    return "";
  }
  if (std::regex_match(sql, m, kAddColumn)) {
    const std::string definition = " " + m[3].str() + " ";
    if (!schema.tables.count(m[1]) && !scope.new_tables.count(m[1])) {
      return "adds a column to the unknown table " + m[1].str();
    }
    if (definition.find(" NOT NULL ") != std::string::npos &&
        definition.find(" DEFAULT ") == std::string::npos) {
      // An older release's INSERT does not name it.
      return "adds the column " + m[2].str() + " NOT NULL without a default";
    }
    scope.new_columns.insert(m[1].str() + "." + m[2].str());
    return "";
  }
  if (std::regex_match(sql, m, kInsert)) {
    if (!scope.new_tables.count(m[2])) {
      return "inserts into " + m[2].str() + ", which this migration did not create";
    }
    return "";
  }
  if (std::regex_match(sql, m, kUpdate)) {
    // Only a backfill of a column this migration added: any other UPDATE
    // changes what existing rows mean to a release that reads them.
    for (const std::string& assignment : SplitTopLevel(m[2])) {
      const std::string column = Trim(assignment.substr(0, assignment.find('=')));
      if (!scope.new_columns.count(m[1].str() + "." + column)) {
        return "updates " + m[1].str() + "." + column + ", which this migration did not add";
      }
    }
    return "";
  }
  if (std::regex_match(sql, m, kDropIndex)) {
    std::string why = DropIndexWithinRule(m[1], m[2], schema, scope, sources);
    if (why.empty()) schema.indexes.erase(m[1]);
    return why;
  }
  return "is not one of the statements the rule allows (create a table or an index, add a "
         "nullable column or one with a default, fill in what the migration added)";
}

// Every breach of the rule in `migrations` as `dialect` expands them, for a binary
// of `release` built from `sources`; a breach a planned exception names is allowed
// when its plan holds.
std::vector<std::string> RuleViolations(const std::vector<Migration>& migrations,
                                        const std::vector<PlannedException>& exceptions,
                                        const Dialect& dialect, std::string_view release,
                                        const std::filesystem::path& sources = kSources) {
  std::vector<std::string> violations;
  std::set<const PlannedException*> used;
  Schema schema;
  int previous = 0;
  for (const Migration& m : migrations) {
    const std::string where = dialect.name + ": migration " + std::to_string(m.version);
    if (m.version <= previous) violations.push_back(where + ": versions must grow");
    previous = m.version;
    if (CompareReleases(m.compatible_from, release) > 0) {
      violations.push_back(where + ": compatible_from " + m.compatible_from +
                           " is newer than this release " + std::string(release));
    }
    MigrationScope scope;
    bool excepted = false;
    for (const std::string& statement : m.statements) {
      std::string why = Classify(dialect.Expand(statement), m.version, schema, scope, sources);
      if (why.empty()) continue;
      const PlannedException* plan = nullptr;
      for (const PlannedException& e : exceptions) {
        if (e.migration == m.version && e.statement == statement) plan = &e;
      }
      if (plan == nullptr) {
        violations.push_back(where + " " + why + ": \"" + statement + "\"");
        continue;
      }
      used.insert(plan);
      excepted = true;
      if (plan->reason.empty()) violations.push_back(where + ": its exception gives no reason");
      if (CompareReleases(plan->stopped_reading_in, plan->dropped_in) >= 0) {
        violations.push_back(where + ": release " + plan->dropped_in +
                             " may not drop what release " + plan->stopped_reading_in +
                             " still reads: two releases at least");
      }
      if (m.compatible_from != plan->stopped_reading_in) {
        violations.push_back(where + ": compatible_from must be " + plan->stopped_reading_in +
                             ", the release that stopped reading it");
      }
      if (CompareReleases(release, plan->dropped_in) < 0) {
        violations.push_back(where + ": planned for release " + plan->dropped_in + ", not " +
                             std::string(release));
      }
    }
    for (const std::string& table : scope.new_tables) schema.tables.insert(table);
    if (!excepted && m.compatible_from != kOldestRelease) {
      violations.push_back(where + ": only adds, so every release works with it: compatible_from " +
                           std::string(kOldestRelease) + ", not " + m.compatible_from);
    }
  }
  for (const PlannedException& e : exceptions) {
    if (!used.count(&e)) {
      violations.push_back(dialect.name + ": the exception for migration " +
                           std::to_string(e.migration) + " matches no statement outside the rule");
    }
  }
  return violations;
}

std::vector<Dialect> EveryDialect() {
  return {SqliteDialect(), PostgresDialect(), MysqlDialect(MysqlFlavor::kMysql),
          MysqlDialect(MysqlFlavor::kMariaDb)};
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST(MigrationRule, EveryMigrationInEveryDialectKeepsTheRule) {
  for (const Dialect& d : EveryDialect()) {
    std::vector<std::string> violations =
        RuleViolations(AllMigrations(), kPlannedExceptions, d, ThisRelease());
    EXPECT_TRUE(violations.empty()) << Join(violations);
  }
}

// The migrations of this binary plus one more holding `statement`.
std::vector<Migration> WithNext(const std::string& statement,
                                std::vector<std::string> before = {}) {
  std::vector<Migration> migrations = AllMigrations();
  before.push_back(statement);
  migrations.push_back({LatestSchemaVersion() + 1, "next", before});
  return migrations;
}

TEST(MigrationRule, StatementsOutsideTheRuleFail) {
  const std::vector<std::string> outside = {
      "DROP TABLE export_download_audit",
      "DROP TABLE IF EXISTS export_download_audit",
      "ALTER TABLE export_task DROP COLUMN contract_version",
      "ALTER TABLE export_task RENAME COLUMN task_name TO name",
      "ALTER TABLE export_task RENAME TO export_job",
      "ALTER TABLE export_task ALTER COLUMN format TYPE VARCHAR(16)",
      "ALTER TABLE export_task MODIFY COLUMN format VARCHAR(16) NOT NULL",
      "ALTER TABLE export_task CHANGE format file_format VARCHAR(8) NOT NULL",
      "ALTER TABLE export_task ADD COLUMN IF NOT EXISTS owner_team VARCHAR(64) NOT NULL",
      "ALTER TABLE export_task ADD COLUMN owner_team VARCHAR(64) NULL",
      "UPDATE export_task SET status = 'FAILED' WHERE status = 'STALE'",
      "DELETE FROM export_outbox WHERE status = 'SENT'",
      "TRUNCATE TABLE export_task_event",
      "INSERT INTO export_task_guard (name, created_at) VALUES ('OTHER', 0)",
      "CREATE UNIQUE INDEX IF NOT EXISTS uk_export_task_name ON export_task (task_name)",
      "CREATE TABLE IF NOT EXISTS export_task (id BIGINT NOT NULL PRIMARY KEY)",
      // Dropped without a replacement that leads with its columns.
      "DROP INDEX IF EXISTS idx_export_task_dedupe ON export_task",
      // A constraint, however replaced.
      "DROP INDEX IF EXISTS uk_export_outbox_event ON export_outbox",
      "DROP INDEX IF EXISTS idx_export_task_no_such_index ON export_task",
  };
  for (const Dialect& d : EveryDialect()) {
    for (const std::string& statement : outside) {
      std::vector<std::string> violations =
          RuleViolations(WithNext(statement), kPlannedExceptions, d, ThisRelease());
      ASSERT_EQ(violations.size(), 1u) << statement << "\n" << Join(violations);
      EXPECT_NE(violations[0].find(statement), std::string::npos) << violations[0];
    }
  }
}

TEST(MigrationRule, WhatOnlyAddsPasses) {
  const std::vector<std::vector<std::string>> additive = {
      {"CREATE TABLE IF NOT EXISTS export_next (id BIGINT NOT NULL PRIMARY KEY,"
       " name VARCHAR(64) NOT NULL){TABLE_OPTIONS}",
       "CREATE UNIQUE INDEX IF NOT EXISTS uk_export_next_name ON export_next (name)",
       "{INSERT_IGNORE} export_next (id, name) VALUES (1, 'first'){ON_CONFLICT_IGNORE}"},
      {"ALTER TABLE export_task ADD COLUMN IF NOT EXISTS owner_team VARCHAR(64) NULL"},
      {"ALTER TABLE export_task ADD COLUMN IF NOT EXISTS priority INTEGER NOT NULL DEFAULT 0"},
      {"ALTER TABLE export_task ADD COLUMN IF NOT EXISTS failure_detail {TEXT} NULL",
       "UPDATE export_task SET failure_detail = failure_message WHERE failure_detail IS NULL"},
      {"CREATE INDEX IF NOT EXISTS idx_export_task_format ON export_task (format, id)"},
      // The index dropped is served by its replacement's leading columns.
      {"CREATE INDEX IF NOT EXISTS idx_export_task_dedupe_format"
       " ON export_task (requested_by, export_type, params_hash, format)",
       "DROP INDEX IF EXISTS idx_export_task_dedupe ON export_task"},
  };
  for (const Dialect& d : EveryDialect()) {
    for (const auto& statements : additive) {
      std::vector<Migration> migrations = AllMigrations();
      migrations.push_back({LatestSchemaVersion() + 1, "next", statements});
      std::vector<std::string> violations =
          RuleViolations(migrations, kPlannedExceptions, d, ThisRelease());
      EXPECT_TRUE(violations.empty()) << statements.back() << "\n" << Join(violations);
    }
  }
}

// An index the code names (a hint such as MySQL's FORCE INDEX, or a comment the
// code relies on) stays, even with a replacement.
TEST(MigrationRule, AnIndexTheCodeNamesIsNotDropped) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() /
                                     ("ec-migration-rule-" + std::to_string(getpid())) / "src";
  std::filesystem::create_directories(root / "store");
  std::ofstream(root / "store" / "hinted.cc") << "const char kSql[] = \"SELECT id FROM export_task "
                                                 "FORCE INDEX (idx_export_task_dedupe)\";\n";
  const std::vector<Migration> migrations =
      WithNext("DROP INDEX IF EXISTS idx_export_task_dedupe ON export_task",
               {"CREATE INDEX IF NOT EXISTS idx_export_task_dedupe_format"
                " ON export_task (requested_by, export_type, params_hash, format)"});
  std::vector<std::string> violations = RuleViolations(
      migrations, kPlannedExceptions, MysqlDialect(MysqlFlavor::kMariaDb), ThisRelease(), root);
  std::filesystem::remove_all(root.parent_path());
  ASSERT_EQ(violations.size(), 1u) << Join(violations);
  EXPECT_NE(violations[0].find("src/store/hinted.cc names"), std::string::npos) << violations[0];
  EXPECT_TRUE(RuleViolations(migrations, kPlannedExceptions, MysqlDialect(MysqlFlavor::kMariaDb),
                             ThisRelease())
                  .empty());
}

// Migration 6 itself would not pass without the index it creates first.
TEST(MigrationRule, MigrationSixDropsOnlyAnIndexItReplaces) {
  std::vector<Migration> migrations = AllMigrations();
  for (Migration& m : migrations) {
    if (m.version == 6) m.statements.erase(m.statements.begin());
  }
  std::vector<std::string> violations =
      RuleViolations(migrations, kPlannedExceptions, SqliteDialect(), ThisRelease());
  ASSERT_EQ(violations.size(), 1u) << Join(violations);
  EXPECT_NE(violations[0].find("idx_export_task_updated_at without first creating"),
            std::string::npos)
      << violations[0];
}

// A drop of what an older release reads: 1.1.0 stops reading the column, 1.2.0
// drops it with compatible_from 1.1.0, so 1.0.x refuses that schema.
TEST(MigrationRule, AnExceptionNeedsATwoReleasePlan) {
  const std::string drop = "ALTER TABLE export_task DROP COLUMN contract_version";
  auto check = [&](PlannedException plan, std::string compatible_from, std::string release) {
    std::vector<Migration> migrations = WithNext(drop);
    migrations.back().compatible_from = compatible_from;
    plan.migration = migrations.back().version;
    plan.statement = drop;
    return RuleViolations(migrations, {plan}, SqliteDialect(), release);
  };
  const PlannedException good{0, "", "1.1.0 reads the contract version from the task event",
                              "1.1.0", "1.2.0"};
  EXPECT_TRUE(check(good, "1.1.0", "1.2.0").empty()) << Join(check(good, "1.1.0", "1.2.0"));
  EXPECT_TRUE(check(good, "1.1.0", "1.3.1").empty());

  PlannedException same_release = good;
  same_release.dropped_in = "1.1.0";
  EXPECT_EQ(check(same_release, "1.1.0", "1.2.0").size(), 1u);
  PlannedException no_reason = good;
  no_reason.reason.clear();
  EXPECT_EQ(check(no_reason, "1.1.0", "1.2.0").size(), 1u);
  // Older binaries would not refuse the schema.
  EXPECT_EQ(check(good, std::string(kOldestRelease), "1.2.0").size(), 1u);
  // Shipped before its planned release.
  EXPECT_EQ(check(good, "1.1.0", "1.1.5").size(), 1u);

  // An exception that names nothing outside the rule is stale.
  PlannedException stale = good;
  stale.migration = 3;
  stale.statement = "DROP TABLE export_notification";
  EXPECT_EQ(RuleViolations(AllMigrations(), {stale}, SqliteDialect(), ThisRelease()).size(), 1u);
}

TEST(MigrationRule, ReleasesCompareByNumber) {
  EXPECT_LT(CompareReleases("0.9.0", "1.0.0"), 0);
  EXPECT_LT(CompareReleases("1.9.0", "1.10.0"), 0);
  EXPECT_EQ(CompareReleases("1.2", "1.2.0"), 0);
  EXPECT_GT(CompareReleases("2.0.0", "1.99.99"), 0);
  EXPECT_GE(CompareReleases(ThisRelease(), kOldestRelease), 0);
}

}  // namespace
}  // namespace export_center::store
