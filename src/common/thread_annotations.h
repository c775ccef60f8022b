#pragma once
// Clang thread-safety annotations.
//
// Under clang these expand to the attributes that -Wthread-safety checks at
// compile time (which lock guards which member, which function needs a lock
// held or free); under any other compiler they expand to nothing. The
// annotated lock types are in common/mutex.h; scripts/check-thread-safety.sh
// runs the analysis over the tree.
//
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   void BumpLocked() REQUIRES(mu_);
//
// Reference: https://clang.llvm.org/docs/ThreadSafetyAnalysis.html

#if defined(__clang__)
#define EC_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define EC_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are a capability (a lock) named `name` in messages.
#define CAPABILITY(name) EC_THREAD_ANNOTATION(capability(name))

// On a class: an RAII guard that acquires in its constructor and releases in
// its destructor.
#define SCOPED_CAPABILITY EC_THREAD_ANNOTATION(scoped_lockable)

// On a data member: reading or writing it needs the capability held.
#define GUARDED_BY(x) EC_THREAD_ANNOTATION(guarded_by(x))

// On a pointer data member: the pointee (not the pointer) needs the capability.
#define PT_GUARDED_BY(x) EC_THREAD_ANNOTATION(pt_guarded_by(x))

// On a lock: locks that must be acquired after / before this one.
#define ACQUIRED_AFTER(...) EC_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) EC_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))

// On a function: callers must hold the capabilities exclusively / shared.
#define REQUIRES(...) EC_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) EC_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))

// On a function: it acquires / releases the capabilities (none named: `this`).
#define ACQUIRE(...) EC_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) EC_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) EC_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) EC_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))

// On a function: it acquires the capabilities only when it returns `result`.
#define TRY_ACQUIRE(...) EC_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))

// On a function: callers must not hold the capabilities (it takes them).
#define EXCLUDES(...) EC_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// On a function: it checks at run time that the capability is held, and the
// analysis may assume so afterwards.
#define ASSERT_CAPABILITY(x) EC_THREAD_ANNOTATION(assert_capability(x))

// On a function: it returns a reference to the capability `x`.
#define RETURN_CAPABILITY(x) EC_THREAD_ANNOTATION(lock_returned(x))

// On a function: the analysis skips its body. Use only where the locking is
// correct but beyond what the analysis can follow, and say why.
#define NO_THREAD_SAFETY_ANALYSIS EC_THREAD_ANNOTATION(no_thread_safety_analysis)
