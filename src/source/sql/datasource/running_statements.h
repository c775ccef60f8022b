#pragma once
// RunningStatements: the statements a datasource has running now, so that
// another thread can cancel them (ReadOnlyDatasource::Interrupt,
// docs/sql-template-route.md#deadlines).
//
// A Query registers its statement with a canceller — PQcancel on a
// PostgreSQL connection, KILL QUERY on a second MySQL connection,
// sqlite3_interrupt — before it runs and ends the registration when it is
// done. Interrupt records its reason, calls the canceller of every statement
// registered, and refuses every later Begin with that reason, so nothing new
// starts on an interrupted datasource.
//
// Cancellers run with the registry's lock held: a registration cannot end
// (and its connection cannot be closed or reused) while its canceller runs.
// A canceller may block on the network (a cancel request, a second
// connection), so it must bound that itself (a connect timeout).
// Thread-safe.

#include <functional>
#include <list>

#include "common/mutex.h"
#include "common/status.h"

namespace export_center::source {

class RunningStatements {
 public:
  using Canceller = std::function<void()>;

  // One registered statement; ends (unregisters) when destroyed.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration();

   private:
    friend class RunningStatements;
    Registration(RunningStatements* owner, std::list<Canceller>::iterator it)
        : owner_(owner), it_(it) {}
    RunningStatements* owner_ = nullptr;
    std::list<Canceller>::iterator it_;
  };

  // Registers a statement about to run. The interrupt reason once Interrupt
  // was called (then nothing is registered).
  StatusOr<Registration> Begin(Canceller cancel) EXCLUDES(mu_);

  // Cancels every registered statement and refuses later ones with `reason`
  // (not OK). Only the first call's reason counts; later calls cancel again.
  void Interrupt(Status reason) EXCLUDES(mu_);

  // OK until Interrupt was called; then its reason. What a statement that
  // failed because it was cancelled answers instead of the database's error.
  Status reason() const EXCLUDES(mu_);

 private:
  void End(std::list<Canceller>::iterator it) EXCLUDES(mu_);

  mutable Mutex mu_;
  Status reason_ GUARDED_BY(mu_);
  std::list<Canceller> running_ GUARDED_BY(mu_);
};

}  // namespace export_center::source
