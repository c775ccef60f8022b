// The contract binary's main: the TaskStore contract's role files
// (*_contract_test.cc on task_store_fixture.h) and the SubscriptionLedger
// contract run in this one binary, so each real server (PostgreSQL, MariaDB)
// starts once for all of them and stops at the end (store_backends.h).

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {

// TaskStoreContractTest's TEST_Ps are spread over the role files; the suite is
// instantiated once, here.
EC_INSTANTIATE_ON_EVERY_BACKEND(TaskStoreContractTest);

}  // namespace export_center::store::contract

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  export_center::store::AddServerEnvironments();
  return RUN_ALL_TESTS();
}
