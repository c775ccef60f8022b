// libFuzzer target for the replies of the SQL contract
// (source/sql/sql_contract_client.h): the envelope of every /dispatch/* answer,
// /dispatch/sql's contract (ParseSqlContract: columns and their flags,
// uniqueKey, enrichSqls, the base64 Excel template, templateType), and the
// data of /dispatch/count, /dispatch/version and /dispatch/enrich.
//
// The input is a sequence of answers (service_answers.h: NUL-separated, an
// optional "NNN " status), given in turn to the four calls. Properties beside
// "no crash, no leak": a count is never negative, a version is never empty,
// enrich results match the keys one to one, a contract has a template.

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "service_answers.h"
#include "source/sql/sql_contract_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace source = export_center::source;
  const std::vector<export_center::fakes::ScriptedAnswer> answers =
      source::fuzz::SplitAnswers(std::string_view(reinterpret_cast<const char*>(data), size));
  size_t next = 0;

  source::SqlContractClientOptions options;
  options.service = {"order-service", "http://127.0.0.1:9", "fuzz-token"};
  options.query_id = "ORDER_LIST";
  options.client.max_response_bytes = 1 << 20;
  export_center::fakes::ScriptedHttpClientFactory http(
      source::fuzz::AnswerInOrder(&answers, &next));
  auto client = source::NewHttpSqlContractClient(options, &http);
  const nlohmann::json params = {{"day", "2026-12-01"}};

  if (auto contract = client->GetSqlTemplate(params); contract.ok()) {
    if (contract->sql_template.empty()) std::abort();
    if (contract->TaskColumns().size() != contract->columns.size()) std::abort();
  }
  if (auto count = client->CountForList(params); count.ok() && *count < 0) std::abort();
  if (auto version = client->GetVersion(params); version.ok() && version->empty()) std::abort();
  source::EnrichRequest enrich;
  enrich.key_column = "customer_id";
  enrich.keys = {1, "2", nullptr};
  enrich.columns = {"customer_name"};
  enrich.parameters = params;
  if (auto filled = client->Enrich(enrich); filled.ok() && filled->size() != enrich.keys.size()) {
    std::abort();
  }
  return 0;
}
