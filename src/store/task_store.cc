#include "store/task_store.h"

namespace export_center::store {

std::string_view ToString(OutboxStatus status) {
  switch (status) {
    case OutboxStatus::kPending:
      return "PENDING";
    case OutboxStatus::kClaimed:
      return "CLAIMED";
    case OutboxStatus::kSent:
      return "SENT";
    case OutboxStatus::kQuarantined:
      return "QUARANTINED";
  }
  return "UNKNOWN";
}

std::string_view ToString(ClaimMiss miss) {
  switch (miss) {
    case ClaimMiss::kTaskMissing:
      return "TASK_MISSING";
    case ClaimMiss::kNewerVersion:
      return "NEWER_VERSION";
    case ClaimMiss::kOlderVersion:
      return "OLDER_VERSION";
    case ClaimMiss::kFinished:
      return "FINISHED";
    case ClaimMiss::kRunningLeaseLive:
      return "RUNNING_LEASE_LIVE";
    case ClaimMiss::kRunningLeaseExpired:
      return "RUNNING_LEASE_EXPIRED";
    case ClaimMiss::kPendingBackoff:
      return "PENDING_BACKOFF";
    case ClaimMiss::kLostRace:
      return "LOST_RACE";
    case ClaimMiss::kTenantAtLimit:
      return "TENANT_AT_LIMIT";
  }
  return "UNKNOWN";
}

}  // namespace export_center::store
