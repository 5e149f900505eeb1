// JSON text as JavaScript's JSON.stringify writes it (the seeds' SDK is TypeScript): object
// members in the Json's order, numbers as Number.prototype.toString prints them (2, not 2.0;
// 1e-7, not 1e-07). Shared by the model (maxValueBytes counts these bytes) and the ports.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace testbed::model {

std::string JsonStringify(const nlohmann::json& v);
// The same for a value whose members keep an order (a JavaScript object literal's, or a parsed
// text's): written as JSON.stringify writes an object's own keys, array indices ("0", "1", ...)
// first in ascending order, then the other members in their order.
std::string JsonStringify(const nlohmann::ordered_json& v);
// JSON.stringify(s) for a string, appended to `out`.
void JsonAppendString(const std::string& s, std::string& out);

// JSON.parse: nlohmann::json::parse(text, nullptr, false), and where nlohmann refuses a \u
// escape of a lone surrogate (JavaScript accepts one), a parse that keeps it as its WTF-8
// bytes, as JsonStringify writes them back. An integer past 2^53 is rounded to a double, as
// JavaScript reads every number. A discarded value when `text` is not JSON, or starts with a
// UTF-8 byte-order mark (JSON.parse refuses U+FEFF).
nlohmann::json JsonParse(const std::string& text);

// The code points of a UTF-8 (or WTF-8: a lone surrogate) string, as a JavaScript string holds
// it; a byte that starts no sequence reads as U+FFFD, as a UTF-8 decoder hands it over.
std::u32string CodePoints(std::string_view s);
// The UTF-8 of code points (WTF-8 for a lone surrogate).
std::string Utf8(std::u32string_view code_points);
// The UTF-16 code units of a UTF-8 string: what a JavaScript string's length and indices count.
std::u16string Utf16(std::string_view s);

// JsonParse keeping each object's members in the text's order (a later duplicate key takes the
// first one's place, as in JavaScript).
nlohmann::ordered_json JsonParseOrdered(const std::string& text);

// What `{ ...current, [field]: previous + delta }` sees of `current` in JavaScript, for the SDK's
// increment (seed 001 507-511): `value` spread into an object (an object's members, an array's
// elements or a string's UTF-16 code units under "0", "1", ...; nothing for null, a number or a
// boolean), and `typeof current[field] === "number" ? current[field] : 0` (a string's or an
// array's "length" included). Found by the state runtime's judge.
// For nlohmann::json and nlohmann::ordered_json (an object keeps its members' order).
template <typename Json>
struct BasicSpread {
  Json object;
  double previous = 0;
};
using Spread = BasicSpread<nlohmann::json>;
template <typename Json>
BasicSpread<Json> SpreadForIncrement(const Json& value, const std::string& field);

// JsonParse, memoized.
// Memoized per thread: the clients parse the same envelope text many times (a set reads the
// value the last set wrote; a tombstone check and the envelope parse read one text). Parsing is
// pure, so the memo cannot change a result; it is bounded and cleared when full. The reference
// is valid until the next call on the same thread.
const nlohmann::json& ParseJsonMemo(const std::string& text);

}  // namespace testbed::model
