// model-matches-implementation's judging: each call's answers by the contract and by beta.24's
// claim as built, placed at an instant of the call's span, explained by a known cause or named as
// a disagreement (model_matches_implementation.h).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "model/state_store.h"
#include "properties/state/model_matches_implementation.h"
#include "sim/clock.h"

namespace testbed::props::state::model_matches {

std::string ShowEntry(const std::optional<model::StoreEntry>& e) {
  if (!e) return "null";
  return e->key + "=" + real::state::Stringify(e->value) + " v" + std::to_string(e->version) +
         " createdAt " + real::state::IsoTime(e->created_at) + " expiresAt " +
         real::state::IsoTime(e->expires_at);
}

std::optional<model::StoreEntry> FromImpl(const std::optional<real::state::StateValue>& v) {
  if (!v) return std::nullopt;
  model::StoreEntry e;
  e.key = v->key;
  e.value = v->value;
  e.version = v->version;
  e.expires_at = real::state::ParseIsoTime(v->expires_at).value_or(-1);
  e.created_at = real::state::ParseIsoTime(v->created_at).value_or(-1);
  e.updated_at = real::state::ParseIsoTime(v->updated_at).value_or(-1);
  return e;
}

// Entries agree when every field a caller sees agrees: key, value, version, createdAt,
// updatedAt and expiresAt.
bool Same(const std::optional<model::StoreEntry>& a, const std::optional<model::StoreEntry>& b) {
  if (!a || !b) return !a && !b;
  return a->key == b->key && a->value == b->value && a->version == b->version &&
         a->created_at == b->created_at && a->updated_at == b->updated_at &&
         a->expires_at == b->expires_at;
}

// How well the implementation's entry matches a model's: 2 exactly, 1 but for a value cjson
// bent (value-read-back judges that on its own), 0 not.
int MatchLevel(const std::optional<model::StoreEntry>& impl,
               const std::optional<model::StoreEntry>& modelled) {
  if (Same(impl, modelled)) return 2;
  if (!impl || !modelled) return 0;
  model::StoreEntry unbent = *modelled;
  unbent.value = impl->value;
  return Same(impl, unbent) && BentOnlyAsCjsonDoes(modelled->value, impl->value) ? 1 : 0;
}

// The key's real lifetime on the server against the expiry its envelope states (PTTL read
// straight from the backend, outside the trace): "" when they agree, else what differs. The
// run is sequential and fault-free, so the writer's clock is the server's and the two must be
// the same millisecond.
std::string LifetimeDiffers(sim::World& world, const std::string& redis_key,
                            const std::optional<model::StoreEntry>& written, int64_t now) {
  if (!written) return "";
  const sim::Reply pttl = world.backend().execute({"PTTL", redis_key}, now);
  const int64_t stated = written->expires_at - now;
  if (pttl.integer == stated || (stated < 0 && pttl.integer == -2)) return "";  // ended by now
  return "the key's expiry on the server is " +
         (pttl.integer == -1   ? std::string("none (it never expires)")
          : pttl.integer == -2 ? std::string("gone (no key)")
                               : std::to_string(pttl.integer) + " ms away") +
         ", where the envelope states expiresAt " + real::state::IsoTime(written->expires_at) +
         " (" + std::to_string(stated) + " ms away)";
}

model::StateStoreModel SequentialClient::Viewed(model::StateStoreModel x, bool quota_only) {
  if (quota_only)
    x.quota_by_index(true);
  else
    x.count_by_index(true);
  return x;
}

void SequentialClient::Place(Step& s, const model::StateStoreModel& m_before) {
  if (s.end_ms == s.now || design_) return;
  int best_level = s.judge(s.r);
  int64_t best_t = s.now;
  for (int64_t t = s.now + 1; t <= s.end_ms && best_level < 2; ++t) {
    s.when = t;
    model::StateStoreModel x = m_before;
    const model::StoreResult y = s.call(x);
    if (const int level = s.judge(y); level > best_level) {
      best_level = level;
      best_t = t;
      m_ = std::move(x);
      s.r = y;
    }
  }
  // No instant explains it by the contract: the instant whose index's view (the routes below)
  // explains it best is the one they answer at.
  for (int64_t t = s.now, view_level = best_level; t <= s.end_ms && best_level < 2; ++t)
    for (const bool quota_only : {false, true}) {
      model::StateStoreModel x = Viewed(m_before, quota_only);
      s.when = t;
      if (const int level = s.judge(s.call(x)); level > view_level) {
        view_level = level;
        best_t = t;
      }
    }
  s.when = best_t;
  s.at = "+" + std::to_string(s.now - sim::kDefaultEpochMs) + "..+" +
         std::to_string(s.end_ms - sim::kDefaultEpochMs) + "ms ";
}

Route SequentialClient::BestRoute(Step& s, const model::StateStoreModel& m_before,
                                  const std::optional<model::StateStoreModel>& design_before) {
  int same = s.judge(s.r), same_design = design_ ? s.judge(s.d) : 0;
  const int contract_plain = same, design_plain = same_design;
  const auto by_index = [&s](const model::StateStoreModel& before, model::StateStoreModel& now_m,
                             int& level) {
    model::StateStoreModel x = Viewed(before, false);
    const int viewed_level = s.judge(s.call(x));
    if (viewed_level <= level) return;
    level = viewed_level;
    now_m = std::move(x);
    now_m.count_by_index(false);
  };
  if (same < 2) by_index(m_before, m_, same);
  if (design_ && same_design < 2) by_index(*design_before, *design_, same_design);
  // Last, the contract with the quota alone by the index's view (Variant::index_quota): a
  // write of a key at its expiry millisecond that the quota refuses as a new entry.
  int same_quota = 0;
  if (same < 2) {
    model::StateStoreModel x = Viewed(m_before, true);
    same_quota = s.judge(s.call(x));
    if (same_quota > same) {
      m_ = std::move(x);
      m_.quota_by_index(false);
    }
  }
  Route best{contract_plain, false, false};
  for (const Route& x : {Route{design_plain, true, false}, Route{same, false, true},
                         Route{same_design, true, true}, Route{same_quota, false, true, true}})
    if (x.level > best.level) best = x;
  return best;
}

std::string SequentialClient::LastOps(std::string out) const {
  for (size_t k = log_.size() > 8 ? log_.size() - 8 : 0; k < log_.size(); ++k)
    out += "\n    " + log_[k];
  return out;
}

void SequentialClient::Explain(const Step& s, const Route& best, const std::string& want) {
  const auto explain = [&](const std::string& cls, const std::string& text) {
    if (!explained_.insert(cls).second) return;
    rec_->findings.push_back(
        {cls, LastOps(text + "; the last operations:") + "\n    the model answers: " + want});
  };
  if (best.claim)
    explain(kAnswersAsTheV1Claim,
            "the implementation answers as beta.24's claim is built (the first concrete "
            "scope adopts a v1 value, others lose it), not as the contract");
  if (best.instant && s.is_list())
    explain("list-drops-at-expiry-instant",
            "list() leaves out an entry at its expiry millisecond, while get() still "
            "returns it (the index is trimmed up to now, inclusive)");
  if (best.quota)
    explain("update-refused-at-expiry-instant",
            "a write of a live entry at its expiry millisecond is refused as quota "
            "exceeded: the index no longer holds the key, so the update asks for a new "
            "slot in a full scope, while get() still returns the entry");
  else if (best.instant && !s.is_list())
    explain(kQuotaFreesSlotAtExpiryInstant,
            "the quota counts an entry as gone at its expiry millisecond, while get() still "
            "returns it (the index is trimmed up to now, inclusive)");
  if (best.level == 1)
    explain(kValueBentByCjson,
            "a value comes back as cjson re-encodes it (numbers to 14 digits, an empty "
            "array as an object), otherwise as the model answers");
}

bool SequentialClient::Judge(Step& s, const model::StateStoreModel& m_before,
                             const std::optional<model::StateStoreModel>& design_before) {
  const int contract_plain = s.judge(s.r);
  const std::string want = s.show(s.r);
  const std::string want_design = design_ ? s.show(s.d) : "";
  const Route best = BestRoute(s, m_before, design_before);
  log_.push_back(s.at + s.who + ": " + s.what + " -> " + s.got);
  for (const model::StoreResult* x : {&s.r, &s.d})  // the claim's copy may outlive the contract's
    if (compact_ && x->error.empty() && x->entry)
      ends_.push_back(std::max(x->entry->expires_at, x->entry->alive_until));
  if (edges_ && s.r.error.empty() && s.r.entry) key_end_[s.key] = s.r.entry->expires_at;
  if (dense_ && s.roll >= 88) old_key_ = s.key;
  int same = contract_plain;
  if (same < 2 && best.level > 0) {
    Explain(s, best, want);
    same = 2;
  }
  if (same == 2 && !s.lifetime.empty()) {
    rec_->findings.push_back(
        {"server-expiry-differs-from-stated",
         LastOps("a write's key lives on the server for another span than it states:") + "\n    " +
             s.lifetime});
    return true;
  }
  if (same == 2) return false;
  Disagreement(s, m_before, want, want_design);
  return true;
}

void SequentialClient::Disagreement(const Step& s, const model::StateStoreModel& m_before,
                                    const std::string& want, const std::string& want_design) {
  std::string out =
      LastOps("the implementation and model/state_store disagree; the last operations:") +
      "\n    the model answers: " + want;
  if (explained_.count(kAnswersAsTheV1Claim))
    out += "\n    and beta.24's claim as built answers: " + want_design;
  const std::string op = s.roll >= 88 ? "legacy-write" : s.what.substr(0, s.what.find('('));
  const std::optional<model::StoreEntry> before =
      m_before.peek(s.connection, s.ns_name, s.mo, s.key, s.now);
  const bool straddled = before && !m_before.peek(s.connection, s.ns_name, s.mo, s.key, s.end_ms) &&
                         s.written && s.roll < 88;
  std::string cls = "disagrees-on-" + op;
  const bool continued = straddled && s.written->version == before->version + 1 &&
                         s.written->created_at == before->created_at;
  if (continued && op == "set")
    cls = kVersionContinuesAfterExpiry;
  else if (continued && op == "compareAndSet")
    cls = kStaleCasSucceedsAfterExpiry;
  else if (straddled)
    cls = op + "-straddles-expiry";
  if (cls != "disagrees-on-" + op)
    out += "\n    the call ran from +" + std::to_string(s.now - sim::kDefaultEpochMs) + " to +" +
           std::to_string(s.end_ms - sim::kDefaultEpochMs) + " ms, and " + s.key +
           "'s entry (version " + std::to_string(before->version) + ") ended at +" +
           std::to_string(before->expires_at - sim::kDefaultEpochMs) + " ms within it";
  rec_->findings.push_back({cls, out});
}

}  // namespace testbed::props::state::model_matches
