// Hex digests (OpenSSL): trace hashes, scope discriminators, script SHA1s.
#pragma once

#include <string>
#include <vector>

namespace testbed {

std::string HexOf(const unsigned char* bytes, unsigned int n);
std::string Sha256Hex(const std::string& data);
// SHA-256 over the lines, each followed by '\n' (trace hashes).
std::string Sha256HexOfLines(const std::vector<std::string>& lines);

}  // namespace testbed
