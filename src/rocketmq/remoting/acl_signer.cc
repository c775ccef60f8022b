#include "rocketmq/remoting/acl_signer.h"

#include "common/digest.h"
#include "common/encoding.h"

namespace export_center::rocketmq::remoting {

std::string AclSignature(const std::map<std::string, std::string>& ext_fields,
                         std::string_view body, std::string_view secret_key) {
  // std::map iterates in byte order of the names, which is the order of the
  // broker's TreeMap<String> for the ASCII names RocketMQ uses.
  std::string content;
  for (const auto& [name, value] : ext_fields) {
    if (name != kSignatureField) content += value;
  }
  content.append(body);
  return Base64Encode(HmacSha1(secret_key, content));
}

void SignRequest(const AclCredentials& credentials, RemotingCommand* request) {
  if (!credentials.enabled()) return;
  request->ext_fields[kAccessKeyField] = credentials.access_key;
  request->ext_fields.erase(kSignatureField);
  request->ext_fields[kSignatureField] =
      AclSignature(request->ext_fields, request->body, credentials.secret_key);
}

}  // namespace export_center::rocketmq::remoting
