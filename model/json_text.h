// JSON text as JavaScript's JSON.stringify writes it (the seeds' SDK is TypeScript): object
// members in the Json's order, numbers as Number.prototype.toString prints them (2, not 2.0;
// 1e-7, not 1e-07). Shared by the model (maxValueBytes counts these bytes) and the ports.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace testbed::model {

std::string JsonStringify(const nlohmann::json& v);
// JSON.stringify(s) for a string, appended to `out`.
void JsonAppendString(const std::string& s, std::string& out);

// JSON.parse: nlohmann::json::parse(text, nullptr, false), and where nlohmann refuses a \u
// escape of a lone surrogate (JavaScript accepts one), a parse that keeps it as its WTF-8
// bytes, as JsonStringify writes them back. An integer past 2^53 is rounded to a double, as
// JavaScript reads every number. A discarded value when `text` is not JSON.
nlohmann::json JsonParse(const std::string& text);

// JsonParse, memoized.
// Memoized per thread: the clients parse the same envelope text many times (a set reads the
// value the last set wrote; a tombstone check and the envelope parse read one text). Parsing is
// pure, so the memo cannot change a result; it is bounded and cleared when full. The reference
// is valid until the next call on the same thread.
const nlohmann::json& ParseJsonMemo(const std::string& text);

}  // namespace testbed::model
