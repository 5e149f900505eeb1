#include "model/json_file.h"

#include <iterator>
#include <stdexcept>

namespace testbed::model {
namespace {

void CheckDepth(std::string_view text, const std::string& what) {
  if (const size_t depth = JsonDepth(text); depth > kMaxJsonDepth)
    throw std::invalid_argument(what + ": arrays and objects nested " + std::to_string(depth) +
                                " deep (at most " + std::to_string(kMaxJsonDepth) + ")");
}

}  // namespace

size_t JsonDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json ReadJson(std::istream& in, const std::string& what) {
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CheckDepth(text, what);
  return nlohmann::json::parse(text, nullptr, false);
}

nlohmann::ordered_json ParseOrderedJson(const std::string& text, const std::string& what) {
  CheckDepth(text, what);
  return nlohmann::ordered_json::parse(text);
}

}  // namespace testbed::model
