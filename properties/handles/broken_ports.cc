#include "properties/handles/broken_ports.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <stdexcept>

#include "real/handles/handle.h"

namespace testbed::props::handles {
namespace {

using real::handles::HandleState;
using real::handles::HandleStorage;
namespace state = real::state;

enum class Break {
  kNoSlide,       // [1] a read's sliding touch is dropped
  kNoGrace,       // [2] a record's storage ends at its deadline, without the grace
  kOtherResult,   // [3] a committed record replays another result
  kDiscardKeeps,  // [4] a discard's tombstone is dropped (and reported written)
  kDataDropped,   // [6] a field of the data is lost on the way back
  kCursorLonger,  // [7] a cursor is created with twice its ttl (its record's deadlines)
};

// The port's storage of one namespace, with one promise broken on the way in or out.
class BrokenStorage : public HandleStorage {
 public:
  BrokenStorage(std::unique_ptr<HandleStorage> port, Break b) : port_(std::move(port)), b_(b) {}
  sim::Task<std::optional<state::StateValue>> get(std::string key) override {
    std::optional<state::StateValue> v = co_await port_->get(key);
    if (v && b_ == Break::kOtherResult && v->value.value("status", "") == "committed")
      v->value["result"] = Json{{"by", -1}};
    if (v && b_ == Break::kDataDropped && v->value.contains("data") && v->value["data"].is_object())
      v->value["data"].erase("note");
    co_return v;
  }
  sim::Task<state::CasResult> compare_and_set(std::string key, int64_t expected,
                                              state::WriteValue written_value,
                                              int64_t ttl_ms) override {
    if (b_ == Break::kCursorLonger && expected == 0 &&
        written_value.json.value("type", "") == "cursor") {
      nlohmann::ordered_json c = nlohmann::ordered_json::parse(written_value.stringify());
      const int64_t ttl = c["max_expires_at_ms"].get<int64_t>() - c["created_at_ms"].get<int64_t>();
      c["expires_at_ms"] = c["expires_at_ms"].get<int64_t>() + ttl;
      c["max_expires_at_ms"] = c["max_expires_at_ms"].get<int64_t>() + ttl;
      written_value = state::WriteValue(c);  // (its text too: the record is written as text)
    }
    const Json& value = written_value.json;
    const std::string status = value.value("status", "");
    if (b_ == Break::kNoGrace)
      ttl_ms = std::max<int64_t>(1, ttl_ms - (status == "committed" ? 1000 : 1500));
    if (b_ == Break::kDiscardKeeps && status == "discarded") {
      state::CasResult kept;
      kept.ok = true;
      co_return kept;
    }
    if (b_ == Break::kNoSlide && status == "active" && expected > 0) {
      const std::optional<state::StateValue> now = co_await port_->get(key);
      if (now && now->version == expected && now->value.value("status", "") == "active" &&
          now->value.value("data", Json()) == value.value("data", Json()))
        co_return state::CasResult{};  // a touch: lost, as if another write had won
    }
    const state::CasResult written =
        co_await port_->compare_and_set(key, expected, std::move(written_value), ttl_ms);
    co_return written;
  }
  void bind(sim::Ctx& ctx) override { port_->bind(ctx); }

 private:
  std::unique_ptr<HandleStorage> port_;
  Break b_;
};

template <Break B>
class BrokenState : public HandleState {
 public:
  explicit BrokenState(std::unique_ptr<HandleState> port) : port_(std::move(port)) {}
  std::unique_ptr<HandleStorage> ns(std::optional<std::string> connection, const std::string& name,
                                    state::NamespaceOptions options) override {
    return std::make_unique<BrokenStorage>(port_->ns(connection, name, options), B);
  }

 private:
  std::unique_ptr<HandleState> port_;
};

template <Break B>
std::unique_ptr<HandleState> Broken(const std::string& version, sim::Ctx& ctx,
                                    const state::VersionScripts& scripts, std::string provider_id) {
  return std::make_unique<BrokenState<B>>(
      real::handles::RedisState(version, ctx, scripts, std::move(provider_id)));
}

// options.state.forConnection(connection) answered with the provider scope, so every
// connection shares bound drafts (what the port did on state beta.23, which has no
// forConnection; the JavaScript would throw a TypeError there instead).
class SharedScopeState : public HandleState {
 public:
  explicit SharedScopeState(std::unique_ptr<HandleState> port) : port_(std::move(port)) {}
  std::unique_ptr<HandleStorage> ns(std::optional<std::string>, const std::string& name,
                                    state::NamespaceOptions options) override {
    return port_->ns(std::nullopt, name, options);
  }

 private:
  std::unique_ptr<HandleState> port_;
};

std::unique_ptr<HandleState> SharedScope(const std::string& version, sim::Ctx& ctx,
                                         const state::VersionScripts& scripts,
                                         std::string provider_id) {
  return std::make_unique<SharedScopeState>(
      real::handles::RedisState(version, ctx, scripts, std::move(provider_id)));
}

}  // namespace

const std::vector<PortVariant>& PortVariants() {
  static const std::vector<PortVariant> kVariants = {
      {"shipped", 0, "the version's port, as shipped", real::handles::RedisState},
      {"broken-1-no-slide", 1, "a read's sliding touch is dropped", Broken<Break::kNoSlide>},
      {"broken-2-no-grace", 2, "a record's storage ends at its deadline, without the grace",
       Broken<Break::kNoGrace>},
      {"broken-3-other-result", 3, "a committed record replays another result",
       Broken<Break::kOtherResult>},
      {"broken-4-discard-keeps", 4, "a discard's tombstone is dropped, and reported written",
       Broken<Break::kDiscardKeeps>},
      {"broken-5-shared-scope", 5,
       "forConnection answers with the provider scope: every connection shares bound drafts",
       SharedScope},
      {"broken-6-data-dropped", 6, "a field of the data is lost on the way back",
       Broken<Break::kDataDropped>},
      {"broken-7-cursor-longer", 7, "a cursor is created with twice its ttl",
       Broken<Break::kCursorLonger>},
  };
  return kVariants;
}

const PortVariant& FindPortVariant(const std::string& name) {
  for (const PortVariant& v : PortVariants())
    if (v.name == name) return v;
  throw std::invalid_argument(absl::StrCat("no handle port variant \"", name, "\""));
}

std::vector<std::string> PortVariantNames() {
  std::vector<std::string> out;
  for (const PortVariant& v : PortVariants()) out.push_back(v.name);
  return out;
}

}  // namespace testbed::props::handles
