#pragma once
// ConnectionCheckout: one statement's turn on a datasource connection — the
// skeleton every Query, Describe and Explain of a ReadOnlyDatasource backend
// runs through (docs/sql-template-route.md#read-only-datasources), written
// once here:
//
//   1. refused with the interrupt's reason once Interrupt was called: not
//      even a connection is taken;
//   2. a connection for `schema` from `take` (the idle cache's, its session
//      reset, or a new one);
//   3. the caller's work on it — which registers its statement with the
//      datasource's RunningStatements right before it runs, under the
//      statement's deadline (the backend's Register), so the registration
//      ends when the work returns;
//   4. a failed outcome passed through `explain` (the interrupt's reason
//      when Interrupt cancelled the statement, else the statement's own);
//   5. the connection handed to `give_back` with that outcome, which returns
//      it to the idle cache or closes it (connection trouble).
//
// A backend builds one per datasource with its three steps; a new statement
// kind is one Run call with a lambda. Thread-safe as the steps are.

#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/status.h"
#include "source/sql/datasource/running_statements.h"

namespace export_center::source {

template <typename Connection>  // an owning, movable handle, e.g. a unique_ptr
class ConnectionCheckout {
 public:
  struct Steps {
    std::function<StatusOr<Connection>(std::string_view schema)> take;
    std::function<Status(Status failed)> explain;
    std::function<void(Connection connection, const Status& outcome)> give_back;
  };

  // REQUIRES: running outlives this; every step is set.
  ConnectionCheckout(const RunningStatements* running, Steps steps)
      : running_(running), steps_(std::move(steps)) {}

  // Runs `work(connection)` (returning StatusOr<T>) on a checked-out
  // connection, steps 1–5 above.
  template <typename Work>
  std::invoke_result_t<Work, Connection&> Run(std::string_view schema, Work&& work) const {
    using Result = std::invoke_result_t<Work, Connection&>;
    EC_RETURN_IF_ERROR(running_->reason());  // interrupted: not even a connection
    EC_ASSIGN_OR_RETURN(Connection connection, steps_.take(schema));
    Result result = std::forward<Work>(work)(connection);
    if (!result.ok()) result = steps_.explain(result.status());
    steps_.give_back(std::move(connection), result.status());
    return result;
  }

 private:
  const RunningStatements* const running_;
  const Steps steps_;
};

}  // namespace export_center::source
