#include "real/state/js_namespace.h"

#include <filesystem>

#include "model/json_text.h"

namespace testbed::real::state {

using Json = nlohmann::json;

namespace {

Json Ttl(std::optional<int64_t> ttl_ms) { return ttl_ms ? Json(*ttl_ms) : Json(nullptr); }

// A StateValue as the driver answers it (the value as JSON.stringify wrote it).
std::optional<StateValue> ValueOf(const Json& v) {
  if (v.is_null()) return std::nullopt;
  StateValue s;
  s.key = v["key"].get<std::string>();
  const std::string text = v["value"].is_string() ? v["value"].get<std::string>() : "null";
  s.value = model::JsonParse(text);
  s.version = v["version"].is_number() ? v["version"].get<int64_t>() : 0;
  s.expires_at = v["expiresAt"].is_string() ? v["expiresAt"].get<std::string>() : "";
  s.created_at = v["createdAt"].is_string() ? v["createdAt"].get<std::string>() : "";
  s.updated_at = v["updatedAt"].is_string() ? v["updatedAt"].get<std::string>() : "";
  // The value's members in the order the JavaScript holds them (StateValue::ordered_value).
  s.envelope = "{\"value\":" + text + "}";
  return s;
}

StateValue Required(const Json& v, const char* method) {
  std::optional<StateValue> s = ValueOf(v);
  if (!s) throw std::runtime_error(std::string("the JavaScript ") + method + " answered no value");
  return std::move(*s);
}

}  // namespace

bool HasJavaScript(const std::string& version) {
  return version == "beta24" || version == "beta30";
}

JsNamespace::JsNamespace(sim::Ctx& ctx, js::Host& host, const ClientCode& code,
                         const std::string& version, std::optional<std::string> provider_id,
                         const std::string& name, const NamespaceOptions& options,
                         const std::optional<std::string>& connection,
                         std::unique_ptr<StateNamespace> port)
    : ctx_(&ctx),
      host_(host),
      id_(host.NewId()),
      scripts_(code.SwapFor(version)),
      port_(std::move(port)) {
  const Json o{{"scope", options.provider_scope ? "provider" : "connection"},
               {"defaultTtl", options.default_ttl_ms},
               {"maxTtl", options.max_ttl_ms},
               {"maxEntries", options.max_entries},
               {"maxValueBytes", options.max_value_bytes}};
  host_.Exchange(
      Json{{"k", "open"},
           {"id", id_},
           {"dir",
            code.dir.empty() ? Json(nullptr) : Json(std::filesystem::absolute(code.dir).string())},
           {"version", version},
           {"provider", provider_id ? Json(*provider_id) : Json(nullptr)},
           {"name", name},
           {"options", o},
           {"memory", port_ == nullptr},
           {"connection", connection ? Json(*connection) : Json(nullptr)}});
}

JsNamespace::~JsNamespace() {
  try {
    host_.Close(id_);
  } catch (const std::exception&) {
    // The driver stopped: the next operation says so.
  }
}

sim::Task<Json> JsNamespace::Run(std::string method, Json args) {
  js::OpHooks hooks;
  hooks.scripts = scripts_;
  js::OpResult op =
      co_await js::RunOp(*ctx_, host_, id_, std::move(method), std::move(args), std::move(hooks));
  if (op.last_expires_at_ms) last_expires_at_ms_ = *op.last_expires_at_ms;
  if (!op.failed) co_return std::move(op.value);
  const std::string name = op.error.value("name", ""), message = op.error.value("message", "");
  if (name == "UnsupportedProviderStateError") co_return sim::Fail(StateError(message));
  throw std::runtime_error("the JavaScript client threw " + name + ": " + message);
}

sim::Task<std::vector<StateValue>> JsNamespace::list(std::optional<int64_t> limit,
                                                     std::optional<std::string> prefix) {
  Json args = Json::array();
  args.push_back(limit ? Json(*limit) : Json(nullptr));
  args.push_back(prefix ? Json(*prefix) : Json(nullptr));
  Json rows = co_await Run("list", std::move(args));
  std::vector<StateValue> out;
  for (const Json& r : rows) out.push_back(Required(r, "list"));
  co_return out;
}

sim::Task<std::optional<StateValue>> JsNamespace::get(std::string key) {
  Json args = Json::array({key});
  Json v = co_await Run("get", std::move(args));
  co_return ValueOf(v);
}

sim::Task<StateValue> JsNamespace::set(std::string key, WriteValue value,
                                       std::optional<int64_t> ttl_ms) {
  Json args = Json::array({key, value.stringify(), Ttl(ttl_ms)});
  Json v = co_await Run("set", std::move(args));
  co_return Required(v, "set");
}

sim::Task<CasResult> JsNamespace::compare_and_set(std::string key, int64_t expected_version,
                                                  WriteValue value, std::optional<int64_t> ttl_ms) {
  Json args = Json::array({key, expected_version, value.stringify(), Ttl(ttl_ms)});
  Json v = co_await Run("cas", std::move(args));
  CasResult r;
  r.ok = v["ok"].get<bool>();
  r.value = ValueOf(v["value"]);
  r.current = ValueOf(v["current"]);
  co_return r;
}

sim::Task<void> JsNamespace::del(std::string key) {
  Json args = Json::array({key});
  co_await Run("delete", std::move(args));
}

sim::Task<StateValue> JsNamespace::increment(std::string key, std::string field, double delta,
                                             std::optional<int64_t> ttl_ms) {
  Json args = Json::array({key, field, delta, Ttl(ttl_ms)});
  Json v = co_await Run("increment", std::move(args));
  co_return Required(v, "increment");
}

}  // namespace testbed::real::state
