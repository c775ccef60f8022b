#include "common/byte_sink.h"

#include <openssl/evp.h>

#include <string>

#include "common/encoding.h"

namespace export_center {

Status CountingSink::Append(std::string_view bytes) {
  if (max_bytes_ != 0 && written_ + bytes.size() > max_bytes_) {
    return LimitExceeded("file exceeds the maximum file size of " + std::to_string(max_bytes_) +
                         " bytes");
  }
  EC_RETURN_IF_ERROR(inner_->Append(bytes));
  written_ += bytes.size();
  return Status::Ok();
}

struct Sha256Sink::State {
  State() : context(EVP_MD_CTX_new()) { EVP_DigestInit_ex(context, EVP_sha256(), nullptr); }
  ~State() { EVP_MD_CTX_free(context); }
  EVP_MD_CTX* context;
};

Sha256Sink::Sha256Sink(ByteSink* inner) : inner_(inner), state_(std::make_unique<State>()) {}
Sha256Sink::~Sha256Sink() = default;

Status Sha256Sink::Append(std::string_view bytes) {
  EC_RETURN_IF_ERROR(inner_->Append(bytes));
  EVP_DigestUpdate(state_->context, bytes.data(), bytes.size());
  return Status::Ok();
}

Sha256Sink::Digest Sha256Sink::digest() const {
  // A copy of the running context is finalized, so appending may go on.
  Digest out{};
  EVP_MD_CTX* copy = EVP_MD_CTX_new();
  unsigned int length = 0;
  EVP_MD_CTX_copy_ex(copy, state_->context);
  EVP_DigestFinal_ex(copy, out.data(), &length);
  EVP_MD_CTX_free(copy);
  return out;
}

std::string HexOf(const Sha256Sink::Digest& digest) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

}  // namespace export_center
