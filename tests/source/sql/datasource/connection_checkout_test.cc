// ConnectionCheckout, the one skeleton of a datasource statement: refused
// without a connection once interrupted, the failure answered with the
// interrupt's reason when the statement was cancelled, the connection given
// back with the outcome after every run (the backends on real databases:
// datasource_deadline_test).

#include "source/sql/datasource/connection_checkout.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace export_center::source {
namespace {

using Connection = std::unique_ptr<int>;

struct Recorder {
  int taken = 0;
  std::vector<Status> given_back;  // each outcome, in order
  std::vector<std::string> schemas;
};

class ConnectionCheckoutTest : public ::testing::Test {
 protected:
  ConnectionCheckout<Connection> Make() {
    return ConnectionCheckout<Connection>(&running_,
                                          {[this](std::string_view schema) -> StatusOr<Connection> {
                                             ++recorder_.taken;
                                             recorder_.schemas.emplace_back(schema);
                                             if (refuse_take_) return Unavailable("cannot connect");
                                             return std::make_unique<int>(recorder_.taken);
                                           },
                                           [this](Status failed) {
                                             Status reason = running_.reason();
                                             return reason.ok() ? failed : reason;
                                           },
                                           [this](Connection conn, const Status& outcome) {
                                             EXPECT_NE(conn, nullptr);
                                             recorder_.given_back.push_back(outcome);
                                           }});
  }

  RunningStatements running_;
  Recorder recorder_;
  bool refuse_take_ = false;
};

TEST_F(ConnectionCheckoutTest, RunsOnATakenConnectionAndGivesItBack) {
  auto checkout = Make();
  auto answer = checkout.Run("sales", [](Connection& conn) -> StatusOr<int> { return *conn * 10; });
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(*answer, 10);
  EXPECT_EQ(recorder_.schemas, std::vector<std::string>{"sales"});
  ASSERT_EQ(recorder_.given_back.size(), 1u);
  EXPECT_TRUE(recorder_.given_back[0].ok());
}

TEST_F(ConnectionCheckoutTest, AFailureIsGivenBackWithItsOwnStatus) {
  auto checkout = Make();
  auto answer =
      checkout.Run("", [](Connection&) -> StatusOr<int> { return Unavailable("connection lost"); });
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  ASSERT_EQ(recorder_.given_back.size(), 1u);
  // The backend decides from it to close the connection (mysql's connection trouble).
  EXPECT_EQ(recorder_.given_back[0].code(), StatusCode::kUnavailable);
}

TEST_F(ConnectionCheckoutTest, ACancelledStatementAnswersTheInterruptsReason) {
  auto checkout = Make();
  auto answer = checkout.Run("", [this](Connection&) -> StatusOr<int> {
    EC_ASSIGN_OR_RETURN(auto registration, running_.Begin([] {}));
    running_.Interrupt(DeadlineExceeded("the preview ran past its limit"));
    return Internal("canceling statement due to user request");  // what the driver says
  });
  EXPECT_EQ(answer.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(answer.status().message(), "the preview ran past its limit");
  ASSERT_EQ(recorder_.given_back.size(), 1u);
  EXPECT_EQ(recorder_.given_back[0].code(), StatusCode::kDeadlineExceeded);
}

TEST_F(ConnectionCheckoutTest, AnInterruptedDatasourceTakesNoConnection) {
  running_.Interrupt(Cancelled("the attempt was aborted"));
  auto checkout = Make();
  bool ran = false;
  auto answer = checkout.Run("", [&](Connection&) -> StatusOr<int> {
    ran = true;
    return 1;
  });
  EXPECT_EQ(answer.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(ran);
  EXPECT_EQ(recorder_.taken, 0);
  EXPECT_TRUE(recorder_.given_back.empty());
}

TEST_F(ConnectionCheckoutTest, NoConnectionNoRunNothingGivenBack) {
  refuse_take_ = true;
  auto checkout = Make();
  bool ran = false;
  auto answer = checkout.Run("", [&](Connection&) -> StatusOr<int> {
    ran = true;
    return 1;
  });
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(ran);
  EXPECT_TRUE(recorder_.given_back.empty());
}

}  // namespace
}  // namespace export_center::source
