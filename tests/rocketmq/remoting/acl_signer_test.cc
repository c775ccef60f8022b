// Request signing for ACL-enabled brokers, pinned against RocketMQ's own Java
// client: the expected signatures were computed by AclClientRPCHook
// (rocketmq-client 5.3.3) in AclSignatureReference.java beside this file.

#include "rocketmq/remoting/acl_signer.h"

#include <gtest/gtest.h>

#include "rocketmq/client_instance.h"

namespace export_center::rocketmq::remoting {
namespace {

using rocketmq::CodeStatus;
using rocketmq::IsAuthenticationRemark;

const AclCredentials kCredentials{"center-ak", "center-secret-1234"};

TEST(AclSigner, SendRequestMatchesTheJavaClient) {
  RemotingCommand send = RemotingCommand::Request(310);
  send.Set("a", "export-center-publisher")
      .Set("b", "test-export-center-command-v1")
      .Set("e", 3)
      .Set("i",
           "TAGS\x01"
           "export\x02");
  send.body = "{\"taskId\":\"42\",\"名\":\"値\"}";
  SignRequest(kCredentials, &send);
  EXPECT_EQ(*send.Ext("AccessKey"), "center-ak");
  EXPECT_EQ(*send.Ext("Signature"), "uU6T+oPrTxa639/UCLpMXp4yGhw=");
  EXPECT_EQ(send.ext_fields.size(), 6u) << "the four fields, AccessKey and Signature";
}

TEST(AclSigner, NoFieldsNoBodySignsTheAccessKeyAlone) {
  RemotingCommand cluster_info = RemotingCommand::Request(106);
  SignRequest(kCredentials, &cluster_info);
  EXPECT_EQ(*cluster_info.Ext("Signature"), "n9lUlyhvp9S/pjU8cSsijzWmdgM=");
}

TEST(AclSigner, BodyOnlyMatchesTheJavaClient) {
  RemotingCommand heartbeat = RemotingCommand::Request(34);
  heartbeat.body = "{\"clientID\":\"1\"}";
  SignRequest(kCredentials, &heartbeat);
  EXPECT_EQ(*heartbeat.Ext("Signature"), "Y2yH8ESR7cwIRKz7NLyEfnFIglI=");
}

TEST(AclSigner, OrderIsByFieldNameNotInsertion) {
  // "AccessKey" sorts before lower-case names: its value comes first.
  const std::string sig = AclSignature({{"b", "2"}, {"a", "1"}, {"AccessKey", "k"}}, "", "s");
  EXPECT_EQ(sig, AclSignature({{"AccessKey", "k"}, {"a", "1"}, {"b", "2"}}, "", "s"));
  EXPECT_NE(sig, AclSignature({{"AccessKey", "k"}, {"a", "2"}, {"b", "1"}}, "", "s"));
  // Only values are signed, and an old Signature field is left out.
  EXPECT_EQ(
      sig, AclSignature({{"AccessKey", "k"}, {"a", "1"}, {"b", "2"}, {"Signature", "x"}}, "", "s"));
}

TEST(AclSigner, SigningAgainReplacesTheSignature) {
  RemotingCommand r = RemotingCommand::Request(34);
  r.Set("consumerGroup", "g");
  SignRequest(kCredentials, &r);
  const std::string first = *r.Ext("Signature");
  SignRequest(kCredentials, &r);  // a resent request
  EXPECT_EQ(*r.Ext("Signature"), first);
  r.Set("consumerGroup", "h");
  SignRequest(kCredentials, &r);
  EXPECT_NE(*r.Ext("Signature"), first);
}

TEST(AclSigner, WithoutCredentialsNothingIsAdded) {
  RemotingCommand r = RemotingCommand::Request(106);
  SignRequest(AclCredentials{}, &r);
  EXPECT_TRUE(r.ext_fields.empty());
}

TEST(AclSigner, DifferentSecretDifferentSignature) {
  RemotingCommand a = RemotingCommand::Request(106);
  RemotingCommand b = RemotingCommand::Request(106);
  SignRequest(kCredentials, &a);
  SignRequest(AclCredentials{"center-ak", "wrong"}, &b);
  EXPECT_NE(*a.Ext("Signature"), *b.Ext("Signature"));
}

// The broker answers NO_PERMISSION for both checks; its remark tells them apart.
TEST(AclSigner, NoPermissionRemarksOfTheBrokerAreClassified) {
  // RocketMQ 5.3.3's authentication failures, as the test broker sends them.
  for (const char* remark : {"check signature failed.", "username cannot be null.",
                             "User:nobody is not found.", "User:center is disabled."}) {
    EXPECT_TRUE(IsAuthenticationRemark(remark)) << remark;
    EXPECT_EQ(CodeStatus(16, "send", remark).code(), StatusCode::kUnauthenticated) << remark;
  }
  // Authorization: a right the user lacks, even on a resource named like a credential.
  for (const char* remark :
       {"User:serve has no permission to access Topic:t from 127.0.0.1, no matched policies.",
        "User:serve has no permission to access Group:signature-check from 10.0.0.1, the "
        "decision is deny.",
        "the topic[t] sending message is forbidden"}) {
    EXPECT_FALSE(IsAuthenticationRemark(remark)) << remark;
    EXPECT_EQ(CodeStatus(16, "send", remark).code(), StatusCode::kPermissionDenied) << remark;
  }
}

}  // namespace
}  // namespace export_center::rocketmq::remoting
