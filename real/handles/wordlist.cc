#include "real/handles/wordlist.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>

#include "model/json_text.h"
#include "sim/prng.h"

namespace testbed::real::handles {

namespace {
template <typename S>
int Distance(const S& a, const S& b, int limit) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  if (std::abs(n - m) > limit) return limit + 1;
  std::vector<int> prev(m + 1), cur(m + 1);
  for (int j = 0; j <= m; ++j) prev[j] = j;
  for (int i = 1; i <= n; ++i) {
    cur[0] = i;
    int row_min = cur[0];
    for (int j = 1; j <= m; ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(prev, cur);
  }
  return std::min(prev[m], limit + 1);
}
}  // namespace

int EditDistance(const std::string& a, const std::string& b, int limit) {
  return Distance(a, b, limit);
}

const std::vector<std::string>& IssuableHandleWords() {
  static const std::vector<std::string> words = [] {
    static const std::string consonants = "bcdfghjklmnprstvwz", vowels = "aeiou";
    sim::Prng rng(0x68616e646c6573);  // "handles"
    std::vector<std::string> out;
    while (out.size() < kHandleWordCount) {
      const int length = static_cast<int>(rng.range(5, 7));
      std::string w;
      for (int i = 0; i < length; ++i)
        w += i % 2 == 0 ? consonants[rng.below(consonants.size())] : vowels[rng.below(5)];
      if (std::all_of(out.begin(), out.end(),
                      [&](const std::string& x) { return EditDistance(w, x, 2) >= 3; }))
        out.push_back(w);
    }
    return out;
  }();
  return words;
}

std::optional<std::string> FindHandleWordWithinDistance(const std::string& segment, int distance) {
  static const absl::flat_hash_map<std::string, size_t> index = [] {
    absl::flat_hash_map<std::string, size_t> m;
    const auto& words = IssuableHandleWords();
    for (size_t i = 0; i < words.size(); ++i) m[words[i]] = i;
    return m;
  }();
  if (index.contains(segment)) return segment;
  if (distance <= 0) return std::nullopt;
  // In UTF-16 code units, as the JavaScript counts a segment's characters.
  static const std::vector<std::u16string> words16 = [] {
    std::vector<std::u16string> out;
    for (const std::string& w : IssuableHandleWords()) out.push_back(model::Utf16(w));
    return out;
  }();
  const std::u16string units = model::Utf16(segment);
  for (size_t i = 0; i < words16.size(); ++i)
    if (Distance(units, words16[i], distance) <= distance) return IssuableHandleWords()[i];
  return std::nullopt;
}

}  // namespace testbed::real::handles
