#pragma once
// RowSourceWrapper: a RowSource that forwards every call to the source it
// wraps (leveldb's EnvWrapper is the model). Every decorator of a RowSource
// derives from it and overrides only what it changes, so what the source
// reports beside its rows — columns(), the SourceFacts on its first page
// (passed on with the page) and in facts() — and Interrupt() reach the
// caller through any stack of decorators. A new fact is a member of
// SourceFacts (row_source.h) and needs no line here or in any decorator
// (docs/conventions.md#wrappers-and-metrics).
//
// Thread-compatible like any RowSource; Interrupt is the inner source's and
// thread-safe.

#include <memory>
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
  SourceFacts facts() const override { return inner_->facts(); }
  void Interrupt(const Status& reason) override { inner_->Interrupt(reason); }

 protected:
  RowSource* inner() const { return inner_.get(); }

 private:
  // Destroyed after the derived decorator's members: a decorator's worker
  // that calls the inner source is stopped before the source goes.
  const std::unique_ptr<RowSource> inner_;
};

}  // namespace export_center::source
