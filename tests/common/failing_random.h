#pragma once
// Makes OpenSSL's RAND_bytes fail for the life of one object, so tests can
// show what the code does when the system's random source is broken.

#define OPENSSL_SUPPRESS_DEPRECATED  // RAND_set_rand_method is the only way in
#include <openssl/rand.h>

namespace export_center::testing {

class FailingRandom {
 public:
// OPENSSL_SUPPRESS_DEPRECATED above does nothing when a header included before this one
// already read <openssl/rand.h>; the pragmas keep the deliberate calls quiet either way.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  FailingRandom() : previous_(RAND_get_rand_method()) { RAND_set_rand_method(&kFailing); }
  ~FailingRandom() { RAND_set_rand_method(previous_); }
#pragma GCC diagnostic pop
  FailingRandom(const FailingRandom&) = delete;
  FailingRandom& operator=(const FailingRandom&) = delete;

 private:
  static int Fail(unsigned char*, int) { return 0; }
  static int Status() { return 0; }
  static constexpr RAND_METHOD kFailing = {nullptr, Fail, nullptr, nullptr, Fail, Status};
  const RAND_METHOD* previous_;
};

}  // namespace export_center::testing
