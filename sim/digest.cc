#include "sim/digest.h"

#include <openssl/evp.h>

namespace testbed::sim {

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
  Sha256Lines h;
  for (const auto& l : lines) h.add(l);
  return h.hex();
}

Sha256Lines::Sha256Lines() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}
Sha256Lines::~Sha256Lines() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256Lines::add(const std::string& line) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), line.data(), line.size());
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), "\n", 1);
}

std::string Sha256Lines::hex() {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d, &n);
  return HexOf(d, n);
}

}  // namespace testbed::sim
