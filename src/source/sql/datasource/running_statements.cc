#include "source/sql/datasource/running_statements.h"

#include <utility>

namespace export_center::source {

RunningStatements::Registration::Registration(Registration&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), it_(other.it_) {}

RunningStatements::Registration& RunningStatements::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    if (owner_ != nullptr) owner_->End(it_);
    owner_ = std::exchange(other.owner_, nullptr);
    it_ = other.it_;
  }
  return *this;
}

RunningStatements::Registration::~Registration() {
  if (owner_ != nullptr) owner_->End(it_);
}

StatusOr<RunningStatements::Registration> RunningStatements::Begin(Canceller cancel) {
  MutexLock lock(&mu_);
  if (!reason_.ok()) return reason_;
  running_.push_front(std::move(cancel));
  return Registration(this, running_.begin());
}

void RunningStatements::Interrupt(Status reason) {
  MutexLock lock(&mu_);
  if (reason_.ok()) reason_ = reason.ok() ? Cancelled("interrupted") : std::move(reason);
  for (const Canceller& cancel : running_) cancel();
}

Status RunningStatements::reason() const {
  MutexLock lock(&mu_);
  return reason_;
}

void RunningStatements::End(std::list<Canceller>::iterator it) {
  MutexLock lock(&mu_);
  running_.erase(it);
}

}  // namespace export_center::source
