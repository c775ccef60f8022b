#pragma once
// RowWriter: writes a batch's rows straight as JSON text in the wire format
// of wire_values.h (docs/provider-contract.md#values-on-the-wire), with no
// JSON object per row and no heap string per cell — the cheap way to fill a
// BatchResponse. A row as a nlohmann::json costs a map node and a string for
// every cell, and then a second pass to print them; at a thousand rows per
// batch that was most of a provider's time.
//
//   sdk::RowWriter rows(Columns());
//   for (const auto& c : customers) {
//     rows.Row().Integer(c.id).String(c.name).Decimal(c.balance_cents, 2)...;
//   }
//   response.written = std::move(rows);  // instead of response.rows
//
// After Row(), one call per column, in Columns() order. A row with another
// number of cells is a provider bug: error() says which, and the SDK
// answers 500 instead of sending rows the center would misread.
// Not thread-safe: one batch, one thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sdk/wire_values.h"

namespace export_center::sdk {

class RowWriter {
 public:
  explicit RowWriter(const std::vector<Column>& columns);

  RowWriter& Row();  // starts the next row

  RowWriter& Null();
  RowWriter& String(std::string_view text);  // invalid UTF-8 becomes U+FFFD
  RowWriter& String(const std::string& text) { return String(std::string_view(text)); }
  RowWriter& String(const char* text) { return String(std::string_view(text)); }
  RowWriter& Integer(int64_t value);  // as a decimal string, like IntegerValue
  RowWriter& Boolean(bool value);
  RowWriter& Decimal(int64_t unscaled, int scale);  // like DecimalValue
  RowWriter& Date(int year, int month, int day);    // like DateValue
  RowWriter& DateTime(int64_t epoch_ms);            // like DateTimeValue
  // Null when the value is absent.
  RowWriter& String(const std::optional<std::string>& text);
  RowWriter& DateTime(const std::optional<int64_t>& epoch_ms);

  size_t rows() const { return rows_; }
  // The first misuse ("row 7 has 9 cells for 10 columns"), or nullopt.
  std::optional<std::string> error() const;
  // Appends `[{…},{…}]` to `out`. REQUIRES: !error().
  void AppendJson(std::string* out) const;

 private:
  void Key();
  std::optional<std::string> CellCountError() const;

  std::vector<std::string> keys_;  // `"key":` per column, escaped once
  std::string out_;
  size_t rows_ = 0;
  size_t cells_ = 0;  // in the current row
  std::optional<std::string> error_;
};

// Appends `text` as a JSON string literal (quotes included). Invalid UTF-8
// becomes U+FFFD, as nlohmann::json's dump with error_handler_t::replace.
void AppendJsonString(std::string* out, std::string_view text);

}  // namespace export_center::sdk
