#include "sim/digest.h"

#include <openssl/evp.h>

namespace testbed {

std::string HexOf(const unsigned char* bytes, unsigned int n) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += hex[bytes[i] >> 4];
    out += hex[bytes[i] & 15];
  }
  return out;
}

std::string Sha256Hex(const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), d, &n, EVP_sha256(), nullptr);
  return HexOf(d, n);
}

std::string Sha256HexOfLines(const std::vector<std::string>& lines) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (const auto& l : lines) {
    EVP_DigestUpdate(ctx, l.data(), l.size());
    EVP_DigestUpdate(ctx, "\n", 1);
  }
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx, d, &n);
  EVP_MD_CTX_free(ctx);
  return HexOf(d, n);
}

}  // namespace testbed
