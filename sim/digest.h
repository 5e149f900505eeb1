// Hex digests (OpenSSL): trace hashes, scope discriminators, script SHA1s.
#pragma once

#include <string>
#include <vector>

namespace testbed::sim {

std::string HexOf(const unsigned char* bytes, unsigned int n);
std::string Sha256Hex(const std::string& data);
// SHA-256 over the lines, each followed by '\n' (trace hashes).
std::string Sha256HexOfLines(const std::vector<std::string>& lines);

// The same hash, fed a line at a time (nothing kept).
class Sha256Lines {
 public:
  Sha256Lines();
  ~Sha256Lines();
  Sha256Lines(const Sha256Lines&) = delete;
  Sha256Lines& operator=(const Sha256Lines&) = delete;
  void add(const std::string& line);
  std::string hex();  // finishes; call once

 private:
  void* ctx_;
};

}  // namespace testbed::sim
