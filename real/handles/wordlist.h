// ./handle-wordlist.js, which seed 002 imports but does not show, filled in as documented
// choices from what the seed's comments and constants imply:
//   - bound handles have 2 words, public ones 4 (standard) or 5 (high strength): "Bound 2-word
//     handles", "public 4/5-word handles";
//   - 1,296 issuable words: "a 1.68M (bound) or 2.8T+ (public) key space" is 1296^2 and 1296^4;
//   - words of at most 10 letters ("5 x 10 (words)");
//   - "the wordlist has pairwise edit distance >= 3", so a distance-1 repair resolves a segment
//     to at most one word.
// The words are generated once, deterministically (consonant-vowel shapes of 5 to 7 letters,
// each kept only when it is at least 3 edits from every word kept before); every word is
// issuable (ISSUABLE_HANDLE_WORDS is the whole list).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace testbed::real::handles {

inline constexpr int kBoundHandleWordCount = 2;
inline constexpr int kPublicHandleWordCount = 4;
inline constexpr int kHighPublicHandleWordCount = 5;
inline constexpr size_t kHandleWordCount = 1296;

const std::vector<std::string>& IssuableHandleWords();
// findHandleWordWithinDistance: the word equal to `segment`, or the one word within `distance`
// edits of it (distance 0 or 1), or nullopt (handle.js tests `word === null`). Edits count
// UTF-16 code units, as the JavaScript's string does: "é" is one edit, not two bytes.
std::optional<std::string> FindHandleWordWithinDistance(const std::string& segment, int distance);
// Levenshtein distance, stopping early once it exceeds `limit` (returns limit + 1 then).
int EditDistance(const std::string& a, const std::string& b, int limit);

}  // namespace testbed::real::handles
