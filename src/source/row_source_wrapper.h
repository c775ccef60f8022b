#pragma once
// RowSourceWrapper: a RowSource that forwards every call to the source it
// wraps (leveldb's EnvWrapper is the model). Every decorator of a RowSource
// derives from it and overrides only what it changes, so a fact the source
// reports beside its pages — columns(), terminal_state(), failure_code(),
// excel_template(), plan_advice() — and Interrupt() reach the caller through
// any stack of decorators; a new fact is added here once, not to each
// decorator (docs/conventions.md#wrappers-and-metrics).
//
// Thread-compatible like any RowSource; Interrupt is the inner source's and
// thread-safe.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "source/row_source.h"

namespace export_center::source {

class RowSourceWrapper : public RowSource {
 public:
  // REQUIRES: inner != nullptr.
  explicit RowSourceWrapper(std::unique_ptr<RowSource> inner) : inner_(std::move(inner)) {}
  RowSourceWrapper(const RowSourceWrapper&) = delete;
  RowSourceWrapper& operator=(const RowSourceWrapper&) = delete;

  // RowSource:
  const std::vector<task::Column>& columns() const override { return inner_->columns(); }
  StatusOr<Page> NextPage() override { return inner_->NextPage(); }
  std::optional<task::TaskState> terminal_state() const override {
    return inner_->terminal_state();
  }
  std::optional<std::string> failure_code() const override { return inner_->failure_code(); }
  std::shared_ptr<const std::string> excel_template() const override {
    return inner_->excel_template();
  }
  std::vector<task::PlanAdvice> plan_advice() const override { return inner_->plan_advice(); }
  void Interrupt(const Status& reason) override { inner_->Interrupt(reason); }

 protected:
  RowSource* inner() const { return inner_.get(); }

 private:
  // Destroyed after the derived decorator's members: a decorator's worker
  // that calls the inner source is stopped before the source goes.
  const std::unique_ptr<RowSource> inner_;
};

}  // namespace export_center::source
