#pragma once
// FaultInjector: lets reliability tests make the sample provider misbehave.
//
//   POST /admin/faults {"fail503": N, "hangMs": M, "hangCount": K,
//                       "enrichFail": E, "criticalEnrich": B, "brokenEnrichSql": B,
//                       "batchCell": {"column": C, "value": V, "nested": N} | null,
//                       "sqlReplace": [{"from": F, "to": T}, ...]}
//     the next N batch calls answer HTTP 503; the next K batch or enrich calls first sleep M ms;
//     the next E /dispatch/enrich calls answer HTTP 500; criticalEnrich marks
//     every enriched column of /dispatch/sql answers critical; brokenEnrichSql
//     makes their enrich SQL name a missing table (sql-template route enrichment);
//     batchCell sets column C of the first row of every batch answer to the
//     JSON value V (data a business's table may really hold: a Chinese date
//     written as text), inside N arrays when nested is given (a hostile
//     answer: [[[…V…]]] N deep, written as text); sqlReplace replaces F by T in the sqlTemplate of every
//     /dispatch/sql answer (a template that selects such a value)
//   GET  /admin/stats -> {"batchCalls": n, "fail503Pending": .., "hangPending": ..}
//
// Admin routes answer only loopback callers presenting the internal token.
// Thread-safe.

#include <httplib.h>

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace customer_service {

class FaultInjector {
 public:
  // Installs the pre-routing hook on batch calls and the admin routes.
  void Install(httplib::Server& server, std::string token);

 private:
  // Returns true when the call was answered with an injected 503.
  bool BeforeBatch(httplib::Response& res);
  // Returns true when the enrich call was answered with an injected 500.
  bool BeforeEnrich(httplib::Response& res);
  // Rewrites a /dispatch/sql answer as criticalEnrich / brokenEnrichSql /
  // sqlReplace ask.
  void AfterSql(httplib::Response& res);
  // Rewrites a batch answer as batchCell asks.
  void AfterBatch(httplib::Response& res);
  void SetFaults(const httplib::Request& req, httplib::Response& res);
  void Stats(httplib::Response& res);
  // Replaces an answer's body after routing.
  static void SetBody(httplib::Response& res, std::string body);

  std::mutex mu_;
  int64_t batch_calls_ = 0;                               // guarded by mu_
  int64_t fail503_ = 0;                                   // guarded by mu_
  int64_t hang_ms_ = 0;                                   // guarded by mu_
  int64_t hang_count_ = 0;                                // guarded by mu_
  int64_t enrich_fail_ = 0;                               // guarded by mu_
  bool critical_enrich_ = false;                          // guarded by mu_
  bool broken_enrich_sql_ = false;                        // guarded by mu_
  nlohmann::json batch_cell_;                             // guarded by mu_; null: none
  nlohmann::json sql_replace_ = nlohmann::json::array();  // guarded by mu_
};

}  // namespace customer_service
