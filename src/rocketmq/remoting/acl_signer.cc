#include "rocketmq/remoting/acl_signer.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

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
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha1(), secret_key.data(), static_cast<int>(secret_key.size()),
       reinterpret_cast<const unsigned char*>(content.data()), content.size(), mac, &mac_len);
  std::string base64(4 * ((mac_len + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(base64.data()), mac,
                                static_cast<int>(mac_len));
  base64.resize(static_cast<size_t>(n));
  return base64;
}

void SignRequest(const AclCredentials& credentials, RemotingCommand* request) {
  if (!credentials.enabled()) return;
  request->ext_fields[kAccessKeyField] = credentials.access_key;
  request->ext_fields.erase(kSignatureField);
  request->ext_fields[kSignatureField] =
      AclSignature(request->ext_fields, request->body, credentials.secret_key);
}

}  // namespace export_center::rocketmq::remoting
