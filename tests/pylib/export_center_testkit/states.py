"""The task states as a waiting script groups them (docs/task-lifecycle.md;
the names are task::ToString's in src/task/task.cc, which testkit_test.py
checks these lists against)."""

# The states of a task still on its way: the per-user and per-type limits
# count these.
ACTIVE = ("PENDING", "RUNNING")

# The states an export attempt ends in. EXPIRED is not among them: it follows
# SUCCEEDED later, when the reconciler deletes the file.
ENDED = ("SUCCEEDED", "FAILED", "CANCELLED", "STALE", "INCONSISTENT")

# The end states of the provider route: STALE and INCONSISTENT come only from
# the sql-template route's version and count checks, so a provider export
# that reaches neither of these keeps being waited for, and a wait that times
# out says so.
PROVIDER_ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")

# After SUCCEEDED, once the retention period deleted the file.
EXPIRED = "EXPIRED"
