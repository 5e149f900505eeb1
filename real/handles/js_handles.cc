#include "real/handles/js_handles.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "model/json_text.h"
#include "real/js_host.h"

namespace testbed::real::handles {

namespace {

using Json = nlohmann::json;

// A value as JSON text for the driver: a number JSON cannot hold as {"$nf": "NaN"} (the
// driver's revive), members as the Json holds them.
Json Encoded(const Json& v) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    const double d = v.get<double>();
    return Json{{"$nf", std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity"}};
  }
  if (v.is_array()) {
    Json a = Json::array();
    for (const Json& e : v) a.push_back(Encoded(e));
    return a;
  }
  if (v.is_object()) {
    Json o = Json::object();
    for (const auto& [k, e] : v.items()) o[k] = Encoded(e);
    return o;
  }
  return v;
}
std::string Text(const Json& v) { return Encoded(v).dump(); }

Json Decoded(Json v) {
  if (v.is_object() && v.size() == 1 && v.contains("$nf") && v["$nf"].is_string()) {
    const std::string n = v["$nf"].get<std::string>();
    if (n == "NaN") return std::numeric_limits<double>::quiet_NaN();
    return n == "Infinity" ? std::numeric_limits<double>::infinity()
                           : -std::numeric_limits<double>::infinity();
  }
  if (v.is_array() || v.is_object())
    for (auto& e : v) e = Decoded(std::move(e));
  return v;
}
// JSON text from the driver (null: no value).
Json Parsed(const Json& text) {
  if (!text.is_string()) return Json();
  return Decoded(model::JsonParse(text.get<std::string>()));
}

std::string Dir(const ClientCode& code) {
  return code.dir.empty() ? "" : std::filesystem::absolute(code.dir).string();
}
Json DirJson(const ClientCode& code) { return code.dir.empty() ? Json(nullptr) : Json(Dir(code)); }

// A call's arguments: the kind as defineHandleKind gives it, then `second`. (Built outside the
// coroutines: g++ 12 miscompiles a braced list inside one.)
Json Args(const HandleKind& kind, std::string second) {
  return Json::array({KindJs(kind).dump(), std::move(second)});
}

HandleRecord RecordOf(const Json& r) {
  HandleRecord out;
  out.handle = r["handle"].get<std::string>();
  out.kind = r["kind"].get<std::string>();
  out.status = r["status"].get<std::string>();
  out.data = Parsed(r["data"]);
  if (r["result"].is_string()) out.result = Parsed(r["result"]);
  out.created_at = r["createdAt"].get<std::string>();
  out.expires_at = r["expiresAt"].get<std::string>();
  return out;
}

class JsHandles : public HandleRuntime {
 public:
  JsHandles(js::Host& host, int64_t state, const std::string& version, const ClientCode& code,
            const HandleOptions& options, sim::Ctx& ctx, sim::Prng& rng)
      : host_(host),
        id_(host.NewId()),
        scripts_(code.SwapFor(version)),
        ctx_(ctx),
        rng_(rng),
        options_(options) {
    host_.Exchange(
        Json{{"k", "handles"},
             {"id", id_},
             {"dir", DirJson(code)},
             {"version", version},
             {"provider", options.provider_id},
             {"state", state},
             {"connection", options.connection_id ? Json(*options.connection_id) : Json(nullptr)},
             {"leaseMs", options.commit_lease_ms}});
  }
  ~JsHandles() override {
    try {
      host_.Close(id_);
    } catch (const std::exception&) {
      // The driver stopped: the next operation says so.
    }
  }

  sim::Task<std::string> create(const HandleKind& kind, Json data) override {
    Json v = co_await Run("create", Args(kind, Text(data)));
    co_return v.get<std::string>();
  }
  sim::Task<HandleRecord> read(const HandleKind& kind, std::string handle) override {
    Json v = co_await Run("read", Args(kind, handle));
    co_return RecordOf(v);
  }
  sim::Task<HandleRecord> update(const HandleKind& kind, std::string handle,
                                 std::function<Json(Json)> updater) override {
    Json v = co_await Run("update", Args(kind, handle), {}, updater);
    co_return RecordOf(v);
  }
  sim::Task<CommitOutcome> commit(const HandleKind& kind, std::string handle, Work work) override {
    Json v = co_await Run("commit", Args(kind, handle), work);
    co_return CommitOutcome{v["status"].get<std::string>(), v["handle"].get<std::string>(),
                            Parsed(v["result"])};
  }
  sim::Task<void> discard(const HandleKind& kind, std::string handle) override {
    co_await Run("discard", Args(kind, handle));
  }

 private:
  // Runs `method`: its answer, or what it threw (a HandleError as the port's, the work's own
  // error as the work threw it).
  sim::Task<Json> Run(std::string method, Json args, Work work = {},
                      std::function<Json(Json)> updater = {}) {
    js::OpHooks hooks;
    hooks.scripts = scripts_;
    if (work) hooks.work = work;
    hooks.ask = [this, updater](const Json& q) -> Json {
      const std::string k = q.value("k", "");
      if (k == "int") return rng_.below(q["max"].get<uint64_t>());
      if (k == "uuid") return RandomUuid(rng_);
      if (k == "updater" && updater) return Text(updater(Parsed(q["data"])));
      throw std::runtime_error("the handle runtime asked " + k + ", which has no answer here");
    };
    hooks.event = [this](const Json& e) {
      if (e.value("k", "") != "tel" || !options_.on_telemetry) return;
      const Json& t = e["t"];
      Telemetry out;
      out.provider_id = t.value("providerId", "");
      out.kind = t.value("kind", "");
      out.type = t.value("type", "");
      out.operation = t.value("operation", "");
      out.outcome = t.value("outcome", "");
      out.normalization = t.value("normalization", "");
      out.words = t.value("words", 0);
      options_.on_telemetry(out);
    };
    js::OpResult r = co_await js::RunOp(ctx_, host_, id_, method, std::move(args), hooks);
    if (!r.failed) co_return std::move(r.value);
    if (r.work_error) std::rethrow_exception(r.work_error);
    const std::string name = r.error.value("name", ""), message = r.error.value("message", "");
    if (name == "HandleError") {
      const bool transport = r.error.contains("cause") &&
                             state::StateError(r.error["cause"].get<std::string>()).transport();
      throw HandleError(r.error.value("code", ""), message, Parsed(r.error["details"]), transport);
    }
    throw std::runtime_error("the JavaScript handle runtime's " + method + " threw " + name + ": " +
                             message);
  }

  js::Host& host_;
  int64_t id_;
  std::shared_ptr<const ScriptSwap> scripts_;  // the catalog's changed scripts of the version
  sim::Ctx& ctx_;
  sim::Prng& rng_;
  HandleOptions options_;
};

class JsState : public HandleState {
 public:
  JsState(const std::string& version, const ClientCode& code,
          std::optional<std::string> provider_id, std::unique_ptr<HandleState> port)
      : host_(js::Host::ForThisThread()),
        id_(host_.NewId()),
        version_(version),
        code_(code),
        port_(std::move(port)) {
    host_.Exchange(Json{{"k", "state"},
                        {"id", id_},
                        {"dir", DirJson(code)},
                        {"version", version},
                        {"memory", !provider_id},
                        {"provider", provider_id ? Json(*provider_id) : Json(nullptr)}});
  }
  ~JsState() override {
    try {
      host_.Close(id_);
    } catch (const std::exception&) {
      // The driver stopped.
    }
  }
  std::unique_ptr<HandleStorage> ns(std::optional<std::string> connection, const std::string& name,
                                    state::NamespaceOptions options) override {
    return port_->ns(std::move(connection), name, std::move(options));
  }
  std::unique_ptr<HandleRuntime> runtime(const HandleOptions& options, sim::Ctx& ctx,
                                         sim::Prng& rng) override {
    return std::make_unique<JsHandles>(host_, id_, version_, code_, options, ctx, rng);
  }

 private:
  js::Host& host_;
  int64_t id_;
  std::string version_;
  ClientCode code_;
  std::unique_ptr<HandleState> port_;
};

}  // namespace

std::unique_ptr<HandleState> JsRedisState(const std::string& version, const ClientCode& code,
                                          std::string provider_id,
                                          std::unique_ptr<HandleState> port) {
  return std::make_unique<JsState>(version, code, std::move(provider_id), std::move(port));
}

std::unique_ptr<HandleState> JsMemoryState(const std::string& version, const ClientCode& code,
                                           std::unique_ptr<HandleState> port) {
  return std::make_unique<JsState>(version, code, std::nullopt, std::move(port));
}

}  // namespace testbed::real::handles
