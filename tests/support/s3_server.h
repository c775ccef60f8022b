#pragma once
// S3Server: a throwaway real S3-compatible server (S3Proxy) for one test
// binary, started and stopped by scripts/test-s3.sh (docs/storage.md#tests).
//
// Start() makes a temp directory and runs `test-s3.sh start DIR`, which
// launches S3Proxy on 127.0.0.1 and a free port with one bucket and a key
// pair, and reads DIR/s3.env. Stop() stops the server (by its pid, through
// the script) and keeps its objects; Restart() brings it back on the same
// port with the same objects. The destructor stops it and deletes the
// directory. Only the thread that owns the object may call its methods.

#include <memory>
#include <string>

#include "common/status.h"

namespace export_center::testing {

class S3Server {
 public:
  // Unavailable when java or the S3Proxy jar is missing (run
  // scripts/install-s3proxy.sh), Internal when the server does not start.
  // `tls`: over https only, its certificate signed by a CA the script makes
  // (ca_cert_file()); other_ca_cert_file() is a CA that signs nothing.
  static StatusOr<std::unique_ptr<S3Server>> Start(bool tls = false);

  ~S3Server();
  S3Server(const S3Server&) = delete;
  S3Server& operator=(const S3Server&) = delete;

  Status Stop();
  Status Restart();

  const std::string& endpoint() const { return endpoint_; }  // http://127.0.0.1:PORT
  const std::string& bucket() const { return bucket_; }
  const std::string& region() const { return region_; }
  const std::string& access_key() const { return access_key_; }
  const std::string& secret_key() const { return secret_key_; }
  // With tls: the PEM of the CA that signed the server's certificate, and of
  // one that did not; empty otherwise.
  const std::string& ca_cert_file() const { return ca_cert_file_; }
  const std::string& other_ca_cert_file() const { return other_ca_cert_file_; }
  // The folder holding s3.env and the server's log.
  const std::string& dir() const { return dir_; }

 private:
  S3Server() = default;
  Status RunScript(const std::string& command);
  Status ReadEnv();

  std::string dir_;
  bool tls_ = false;
  bool running_ = false;
  std::string endpoint_, bucket_, region_, access_key_, secret_key_;
  std::string ca_cert_file_, other_ca_cert_file_;
};

// One server per test binary and per `tls`, started on first use and stopped
// at exit; nullptr, with *error saying why, when it cannot start.
S3Server* SharedS3Server(bool tls, std::string* error);

}  // namespace export_center::testing
