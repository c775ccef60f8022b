// ColumnPolicy: the decision per requester, masking by code points (Chinese
// names too), hashing, the stored JSON, and the columns and rows of a file.

#include "task/column_policy.h"

#include <gtest/gtest.h>

#include <set>

namespace export_center::task {
namespace {

ColumnDecision Mask(std::string key, int first, int last) {
  ColumnDecision d;
  d.key = std::move(key);
  d.action = ColumnAction::kMask;
  d.keep_first = first;
  d.keep_last = last;
  return d;
}

ColumnDecision Hash(std::string key, int chars) {
  ColumnDecision d;
  d.key = std::move(key);
  d.action = ColumnAction::kHash;
  d.hash_chars = chars;
  return d;
}

ColumnDecision Omit(std::string key) {
  ColumnDecision d;
  d.key = std::move(key);
  return d;
}

TEST(MaskText, KeepsTheFirstAndLastCharacters) {
  EXPECT_EQ(MaskText("13812345678", 3, 4), "138****5678");
  EXPECT_EQ(MaskText("abcdef", 0, 0), "******");
  EXPECT_EQ(MaskText("abcdef", 0, 2), "****ef");
}

TEST(MaskText, CountsCodePointsNotBytes) {
  EXPECT_EQ(MaskText("张三丰", 1, 0), "张**");
  EXPECT_EQ(MaskText("欧阳娜娜", 1, 1), "欧**娜");
  EXPECT_EQ(MaskText("a😀b😀c", 1, 1), "a***c");
}

TEST(MaskText, AlwaysMasksAtLeastOneCharacter) {
  EXPECT_EQ(MaskText("张三", 1, 1), "张*");  // keep-last gives way first
  EXPECT_EQ(MaskText("1234", 3, 4), "123*");
  EXPECT_EQ(MaskText("1", 3, 4), "*");
  EXPECT_EQ(MaskText("", 3, 4), "");
}

TEST(MaskText, RepairsInvalidUtf8) {
  EXPECT_EQ(MaskText("a\xff"
                     "b",
                     1, 1),
            "a*b");
  EXPECT_EQ(MaskText("\xff"
                     "bc",
                     1, 0),
            "\xEF\xBF\xBD**");
}

TEST(HashText, IsTheHexSha256CutToItsLength) {
  // sha256("abc"), FIPS 180-2 appendix B.1.
  const std::string full = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  EXPECT_EQ(HashText("abc", 64), full);
  EXPECT_EQ(HashText("abc", 16), full.substr(0, 16));
  EXPECT_EQ(HashText("张三", 64).size(), 64u);
  EXPECT_NE(HashText("张三", 64), HashText("张四", 64));
}

TEST(DecideColumnPolicy, OnlyRulesWhosePermissionIsMissing) {
  std::vector<ColumnRule> rules = {{"phone", "crm:customer:contact", Mask("phone", 3, 4)},
                                   {"salary", "crm:customer:salary", Omit("salary")},
                                   {"id_card", "crm:customer:contact", Hash("id_card", 16)}};
  std::set<std::string> held = {"crm:customer:salary"};
  ColumnPolicy policy =
      DecideColumnPolicy(rules, [&](const std::string& p) { return held.count(p) > 0; });
  ASSERT_EQ(policy.decisions.size(), 2u);
  EXPECT_EQ(policy.decisions[0].key, "phone");
  EXPECT_EQ(policy.decisions[1].key, "id_card");
  EXPECT_EQ(policy.masked(), 2);
  EXPECT_EQ(policy.omitted(), 0);

  held = {"crm:customer:salary", "crm:customer:contact"};
  EXPECT_TRUE(
      DecideColumnPolicy(rules, [&](const std::string& p) { return held.count(p) > 0; }).empty());
}

ColumnPolicy PolicyOf(std::vector<ColumnDecision> decisions) {
  ColumnPolicy p;
  p.decisions = std::move(decisions);
  return p;
}

// A file is handed to a reader only when it is no wider than the reader's own
// (docs/http-api.md#column-governance-of-downloads).
TEST(ColumnsWiderThan, ComparesEveryColumnTheReaderMayNotSeeInFull) {
  const ColumnPolicy reader = PolicyOf({Mask("phone", 3, 4), Omit("balance"), Hash("id", 16)});
  // The reader's own file, and any narrower one, is fine.
  EXPECT_TRUE(ColumnsWiderThan(reader, reader).empty());
  EXPECT_TRUE(
      ColumnsWiderThan(PolicyOf({Omit("phone"), Omit("balance"), Hash("id", 8)}), reader).empty());
  EXPECT_TRUE(ColumnsWiderThan(PolicyOf({Mask("phone", 0, 4), Omit("balance"), Omit("id")}), reader)
                  .empty());
  // A file of a requester who saw everything: every governed column is wider.
  EXPECT_EQ(ColumnsWiderThan(ColumnPolicy{}, reader),
            (std::vector<std::string>{"phone", "balance", "id"}));
  // Kept where the reader omits, more characters kept or hashed, mask for hash.
  EXPECT_EQ(ColumnsWiderThan(PolicyOf({Mask("phone", 3, 5), Mask("balance", 0, 0), Hash("id", 17)}),
                             reader),
            (std::vector<std::string>{"phone", "balance", "id"}));
  EXPECT_EQ(
      ColumnsWiderThan(PolicyOf({Hash("phone", 8), Omit("balance"), Mask("id", 0, 0)}), reader),
      (std::vector<std::string>{"phone", "id"}));
  // What the file hides that the reader may see does not matter.
  EXPECT_TRUE(
      ColumnsWiderThan(PolicyOf({Omit("phone"), Omit("balance"), Omit("id"), Omit("name")}), reader)
          .empty());
  EXPECT_TRUE(ColumnsWiderThan(PolicyOf({Omit("name")}), ColumnPolicy{}).empty());
}

TEST(ColumnPolicyJson, RoundTrips) {
  ColumnPolicy policy;
  policy.decisions = {Mask("phone", 3, 4), Omit("salary"), Hash("id_card", 16)};
  std::string text = ColumnPolicyToJson(policy);
  EXPECT_EQ(
      text,
      R"([{"action":"mask","keepFirst":3,"keepLast":4,"key":"phone"},)"
      R"({"action":"omit","key":"salary"},{"action":"hash","hashChars":16,"key":"id_card"}])");
  auto back = ColumnPolicyFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ColumnPolicyToJson(*back), text);
  EXPECT_EQ(back->omitted(), 1);
  EXPECT_EQ(back->masked(), 2);
}

TEST(ColumnPolicyJson, EmptyIsTheEmptyText) {
  EXPECT_EQ(ColumnPolicyToJson(ColumnPolicy{}), "");
  auto empty = ColumnPolicyFromJson("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(ColumnPolicyFromJson("{}").ok());
  EXPECT_FALSE(ColumnPolicyFromJson(R"([{"key":"a","action":"shout"}])").ok());
  EXPECT_FALSE(ColumnPolicyFromJson("[1]").ok());
}

TEST(GovernedText, EveryCellType) {
  EXPECT_EQ(GovernedText(CellValue{}), std::nullopt);
  EXPECT_EQ(GovernedText(CellValue{std::string("x")}), "x");
  EXPECT_EQ(GovernedText(CellValue{int64_t{-42}}), "-42");
  EXPECT_EQ(GovernedText(CellValue{Decimal{"68141.10"}}), "68141.10");
  EXPECT_EQ(GovernedText(CellValue{true}), "true");
  EXPECT_EQ(GovernedText(CellValue{*Date::FromYmd(2026, 3, 7)}), "2026-03-07");
  EXPECT_EQ(GovernedText(CellValue{DateTime{0}}), "1970-01-01T00:00:00.000Z");
}

TEST(ColumnPolicyApplier, OmitsMasksAndHashesByKey) {
  std::vector<Column> source = {{"id", "ID", ColumnType::kInteger, 0, 2, ""},
                                {"name", "姓名", ColumnType::kString, 0, 2, ""},
                                {"phone", "手机", ColumnType::kInteger, 14, 0, "0"},
                                {"salary", "薪资", ColumnType::kDecimal, 0, 2, ""},
                                {"id_card", "身份证", ColumnType::kString, 0, 2, ""}};
  ColumnPolicy policy;
  policy.decisions = {Mask("phone", 3, 4), Omit("salary"), Hash("id_card", 8), Mask("name", 1, 0),
                      Omit("not_sent")};
  ColumnPolicyApplier applier(policy, source);

  const std::vector<Column>& columns = applier.Columns();
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].key, "id");
  EXPECT_EQ(columns[0].type, ColumnType::kInteger);
  EXPECT_EQ(columns[1].key, "name");
  EXPECT_EQ(columns[2].key, "phone");
  EXPECT_EQ(columns[2].type, ColumnType::kString);  // a masked cell is text
  EXPECT_EQ(columns[2].title, "手机");
  EXPECT_EQ(columns[2].width, 14);
  EXPECT_EQ(columns[2].format, "");  // a number format means nothing for text
  EXPECT_EQ(columns[3].key, "id_card");

  Row row = applier.Apply({int64_t{7}, std::string("张三丰"), int64_t{13812345678},
                           Decimal{"100.00"}, std::string("abc")});
  ASSERT_EQ(row.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(row[0]), 7);
  EXPECT_EQ(std::get<std::string>(row[1]), "张**");
  EXPECT_EQ(std::get<std::string>(row[2]), "138****5678");
  EXPECT_EQ(std::get<std::string>(row[3]), "ba7816bf");

  Row empty = applier.Apply({int64_t{8}, CellValue{}, CellValue{}, CellValue{}, CellValue{}});
  EXPECT_TRUE(std::holds_alternative<std::monostate>(empty[1]));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(empty[2]));
}

// A total over masked values would show what the mask hides: a governed
// column keeps its labels and merges but loses its total.
TEST(ColumnPolicyApplier, AGovernedColumnLosesItsTotal) {
  std::vector<Column> source = {{"salary", "薪资", ColumnType::kDecimal, 0, 2, ""},
                                {"bonus", "奖金", ColumnType::kDecimal, 0, 2, ""}};
  source[0].total = TotalKind::kSum;
  source[1].total = TotalKind::kSum;
  ColumnPolicy policy;
  policy.decisions = {Mask("salary", 1, 0)};
  ColumnPolicyApplier applier(policy, source);
  EXPECT_EQ(applier.Columns()[0].total, TotalKind::kNone);
  EXPECT_EQ(applier.Columns()[1].total, TotalKind::kSum);
}

}  // namespace
}  // namespace export_center::task
