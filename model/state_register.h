// The state store's contract for one key, as a model for the linearizability checker:
// a versioned register with expiry and tombstones. Pure: time is an argument.
//
// Choices where the seeds leave room, written down here:
//   1. Expiry follows the Redis store: an entry with expiry E is alive at t while t <= E
//      (the Lua scripts write SET ... PXAT E and Redis keeps the key through E). The SDK's
//      memory backend prunes at E (Date.parse(expiresAt) <= now); the property
//      "one expiry boundary" compares the two, the model does not paper over it.
//   2. Versions: a write to an absent, expired or deleted key writes version 1; every later
//      write writes the current version + 1 (set: current?.version + 1; compareAndSet:
//      expectedVersion + 1, with absent meaning expected 0, as the CAS script reads it).
//   3. delete leaves no value: get returns null and the next CAS expects 0 (the tombstone is
//      "deleted: true", which the scripts and get() treat as absent).
//   4. beta.3 writes a relative TTL (SET ... PX ttl): Redis sets the expiry when it runs the
//      SET, somewhere inside the operation's interval, so the write carries a window
//      [expires_at_ms, expires_hi_ms]. The key is surely alive through the low end, surely
//      gone after the high end, and either in between (the checker tries both).
//   5. createdAt/updatedAt are not part of this model; the "value reads back exactly as
//      written" and createdAt properties are checked separately.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace testbed::model {

struct RegisterOp {
  enum class Kind { kGet, kSet, kCas, kDelete };
  Kind kind = Kind::kGet;
  // inputs
  std::string value;          // set, cas
  int64_t expected = 0;       // cas
  int64_t expires_at_ms = 0;  // set, cas: the absolute expiry the client computed
  int64_t expires_hi_ms = 0;  // set, cas: the latest possible expiry (0: expires_at_ms)
  // outputs (ignored when the operation is ambiguous)
  bool ok = true;           // cas: swapped; get: found
  std::string out_value;    // get: the value; cas failure: the current value ("" if none)
  int64_t out_version = 0;  // get/set/cas: the version read or written; cas failure: current
};

struct RegisterState {
  bool exists = false;
  std::string value;
  int64_t version = 0;
  int64_t expires_at = 0;
  int64_t expires_hi = 0;  // >= expires_at
};

class StateRegisterModel {
 public:
  using State = RegisterState;
  using Op = RegisterOp;

  // A deliberately broken variant for the negative test: set does not bump the version.
  explicit StateRegisterModel(bool broken_versions = false) : broken_(broken_versions) {}

  State init() const { return {}; }
  // The memo key, appended to `out`: the numbers' bytes, then the value (no state is printed
  // from it).
  void append_key(const State& s, std::string& out) const {
    if (!s.exists) {
      out += '-';
      return;
    }
    const int64_t fields[3] = {s.version, s.expires_at, s.expires_hi};
    out.append(reinterpret_cast<const char*>(fields), sizeof fields);
    out += s.value;
  }

  bool read_only(const Op& op) const { return op.kind == RegisterOp::Kind::kGet; }

  // At most two outcomes (before and after an expiry): kept inline, no allocation.
  using Steps = absl::InlinedVector<std::pair<State, int64_t>, 2>;
  Steps step(const State& s, const Op& op, int64_t lo, int64_t hi, bool ambiguous = false) const;

 private:
  bool broken_;
};

}  // namespace testbed::model
