#pragma once
// FaultInjector: lets reliability tests make the sample provider misbehave.
//
//   POST /admin/faults {"fail503": N, "hangMs": M, "hangCount": K,
//                       "enrichFail": E, "criticalEnrich": B, "brokenEnrichSql": B}
//     the next N batch calls answer HTTP 503; the next K batch or enrich calls first sleep M ms;
//     the next E /dispatch/enrich calls answer HTTP 500; criticalEnrich marks
//     every enriched column of /dispatch/sql answers critical; brokenEnrichSql
//     makes their enrich SQL name a missing table (sql-template route enrichment)
//   GET  /admin/stats -> {"batchCalls": n, "fail503Pending": .., "hangPending": ..}
//
// Admin routes answer only loopback callers presenting the internal token.
// Thread-safe.

#include <httplib.h>

#include <cstdint>
#include <mutex>
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
  // Rewrites a /dispatch/sql answer as criticalEnrich / brokenEnrichSql ask.
  void AfterSql(httplib::Response& res);
  void SetFaults(const httplib::Request& req, httplib::Response& res);
  void Stats(httplib::Response& res);

  std::mutex mu_;
  int64_t batch_calls_ = 0;         // guarded by mu_
  int64_t fail503_ = 0;             // guarded by mu_
  int64_t hang_ms_ = 0;             // guarded by mu_
  int64_t hang_count_ = 0;          // guarded by mu_
  int64_t enrich_fail_ = 0;         // guarded by mu_
  bool critical_enrich_ = false;    // guarded by mu_
  bool broken_enrich_sql_ = false;  // guarded by mu_
};

}  // namespace customer_service
