#include "common/byte_sink.h"

#include <string>

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

}  // namespace export_center
