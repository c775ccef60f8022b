#pragma once
// The Remoting request and response codes this client uses (RocketMQ's
// RequestCode, ResponseCode and RemotingSysResponseCode).

namespace export_center::rocketmq::remoting {

namespace request_code {
inline constexpr int kPullMessage = 11;
inline constexpr int kQueryConsumerOffset = 14;
inline constexpr int kUpdateConsumerOffset = 15;
inline constexpr int kUpdateAndCreateTopic = 17;
inline constexpr int kGetMaxOffset = 30;
inline constexpr int kGetMinOffset = 31;
inline constexpr int kHeartBeat = 34;
inline constexpr int kUnregisterClient = 35;
inline constexpr int kConsumerSendMsgBack = 36;
inline constexpr int kGetConsumerListByGroup = 38;
inline constexpr int kCheckTransactionState = 39;
inline constexpr int kNotifyConsumerIdsChanged = 40;
inline constexpr int kGetRouteInfoByTopic = 105;
inline constexpr int kGetBrokerClusterInfo = 106;
inline constexpr int kUpdateAndCreateSubscriptionGroup = 200;
inline constexpr int kGetAllSubscriptionGroupConfig = 201;
inline constexpr int kSendMessageV2 = 310;
}  // namespace request_code

namespace response_code {
inline constexpr int kSuccess = 0;
inline constexpr int kSystemError = 1;
inline constexpr int kSystemBusy = 2;
inline constexpr int kRequestCodeNotSupported = 3;
inline constexpr int kFlushDiskTimeout = 10;
inline constexpr int kSlaveNotAvailable = 11;
inline constexpr int kFlushSlaveTimeout = 12;
inline constexpr int kMessageIllegal = 13;
inline constexpr int kServiceNotAvailable = 14;
inline constexpr int kNoPermission = 16;
inline constexpr int kTopicNotExist = 17;
inline constexpr int kPullNotFound = 19;
inline constexpr int kPullRetryImmediately = 20;
inline constexpr int kPullOffsetMoved = 21;
inline constexpr int kQueryNotFound = 22;
inline constexpr int kSubscriptionNotExist = 24;
inline constexpr int kSubscriptionNotLatest = 25;
inline constexpr int kSubscriptionGroupNotExist = 26;
inline constexpr int kInvalidParameter = 29;
}  // namespace response_code

}  // namespace export_center::rocketmq::remoting
