// libFuzzer target for the provider batch decoder (source/provider/provider_batch_source.h):
// the envelope, the simdjson fast path and its nlohmann fallback, the schema
// checks across batches (schemaHash, columns, snapshotToken), every typed
// cell (task::ParseWireValue), the cursor rules and the row caps.
//
// The input is a sequence of answers (service_answers.h: NUL-separated, an
// optional "NNN " status); the source pulls pages until one fails, the last
// page comes, or the answers run out. Properties beside "no crash, no leak":
// every row has one cell per column, a page never holds more rows than the
// batch size, and no more than max_rows are ever handed out.

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "service_answers.h"
#include "source/provider/provider_batch_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace source = export_center::source;
  const std::vector<export_center::fakes::ScriptedAnswer> answers =
      source::fuzz::SplitAnswers(std::string_view(reinterpret_cast<const char*>(data), size));
  size_t next = 0;

  source::ProviderBatchOptions options;
  options.service = {"customer-service", "http://127.0.0.1:9", "fuzz-token"};
  options.path = "/internal/exports/v1/CUSTOMER_LIST/batches";
  options.export_type = "CUSTOMER_LIST";
  options.task_id = 42;
  options.tenant_id = "t1";
  options.requested_by = "alice";
  options.batch_size = 8;
  options.max_rows = 20;
  options.client.max_response_bytes = 1 << 20;
  export_center::fakes::ScriptedHttpClientFactory http(
      source::fuzz::AnswerInOrder(&answers, &next));
  auto src = source::NewProviderBatchSource(options, &http);

  int64_t rows = 0;
  while (next < answers.size()) {
    auto page = src->NextPage();
    if (!page.ok()) break;
    if (page->rows.size() > static_cast<size_t>(options.batch_size)) std::abort();
    for (const auto& row : page->rows) {
      if (row.size() != src->columns().size()) std::abort();
    }
    rows += static_cast<int64_t>(page->rows.size());
    if (rows > options.max_rows) std::abort();
    if (!page->has_more) break;
  }
  return 0;
}
