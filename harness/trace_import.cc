#include "harness/trace_import.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/ascii.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_replace.h>
#include <absl/strings/strip.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <system_error>

#include "harness/system.h"
#include "sim/lua_scripting.h"
#include "sim/monitor_text.h"

namespace testbed::harness {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Commands a client library sends to look after its connection, not calls of a system.
bool Housekeeping(const std::string& upper) {
  static const std::set<std::string> kNames = {"PING",   "SELECT",   "CLIENT",  "INFO",    "HELLO",
                                               "AUTH",   "QUIT",     "COMMAND", "MONITOR", "ECHO",
                                               "CONFIG", "READONLY", "RESET"};
  return kNames.count(upper) > 0;
}

// An argument as JSON: the string when it is UTF-8, else Redis's escaped form.
Json Arg(const std::string& a) {
  try {
    (void)Json(a).dump();
    return a;
  } catch (const Json::type_error&) {
    const std::string repr = sim::monitor::Repr(a);
    return Json{{"repr", repr.substr(1, repr.size() - 2)}};
  }
}

Json Argv(const std::vector<std::string>& argv) {
  Json out = Json::array();
  for (const std::string& a : argv) out.push_back(Arg(a));
  return out;
}

// A script body in its normal form: CRLF line endings as LF, leading and trailing whitespace
// dropped. Two bodies with the same normal form are the same script as deployed.
std::string NormalForm(std::string body) {
  absl::StrReplaceAll({{"\r\n", "\n"}}, &body);
  return std::string(absl::StripAsciiWhitespace(body));
}

// The forms a shipped body is deployed as, other than itself: trimmed at either end or both,
// each with LF or CRLF line endings.
std::vector<std::string> DeployedForms(const std::string& body) {
  const std::string lf = absl::StrReplaceAll(body, {{"\r\n", "\n"}});
  std::set<std::string> forms;
  for (const std::string& b : {lf, std::string(absl::StripLeadingAsciiWhitespace(lf)),
                               std::string(absl::StripTrailingAsciiWhitespace(lf)),
                               std::string(absl::StripAsciiWhitespace(lf))}) {
    forms.insert(b);
    forms.insert(absl::StrReplaceAll(b, {{"\n", "\r\n"}}));
  }
  forms.erase(body);
  return {forms.begin(), forms.end()};
}

// A progress line on stderr while a big capture is read, when stderr is a terminal.
class Progress {
 public:
  explicit Progress(const std::string& capture) : on_(isatty(2) != 0) {
    std::error_code ec;
    size_ = static_cast<int64_t>(fs::file_size(capture, ec));
    if (ec) size_ = 0;
  }
  void Show(std::istream& in, int64_t lines) {
    if (!on_ || size_ <= 0) return;
    const int64_t at = static_cast<int64_t>(in.tellg());
    std::fprintf(stderr, "\r  import: %lld of %lld MB read (%lld lines)",
                 static_cast<long long>(at >> 20), static_cast<long long>(size_ >> 20),
                 static_cast<long long>(lines));
    shown_ = true;
  }
  void Clear() {
    if (shown_) std::fprintf(stderr, "\r%60s\r", "");
  }

 private:
  bool on_;
  bool shown_ = false;
  int64_t size_ = 0;
};

struct Call {
  int64_t line = 0, micros = 0;
  int db = 0;  // the database the call ran in
  std::string client, script, sha1;
  std::vector<std::string> argv;
  std::vector<std::vector<std::string>> lua;
  size_t system = 0;
  bool foreign = false;   // no system claimed it: another application's call, replayed only
  std::string opaque;     // why it cannot be replayed (an EVALSHA of a body nobody knows)
  bool deployed = false;  // its script is a shipped one as deployed (whitespace differs)
  std::optional<std::string> reply;  // its RESP2 reply, when the capture records one (serve)
};

// One trace file being written: one system's calls in one segment.
struct Output {
  const props::System* system = nullptr;
  int segment = 0;
  std::string tmp;
  std::ofstream out;
  int64_t calls = 0;
  std::map<std::string, int> clients;  // name -> actor
  std::vector<std::string> client_names;
  std::map<std::string, std::string> scripts;  // sha1 -> catalog id ("": kept in the file)
  std::set<std::string> deployed;              // sha1s of shipped scripts as deployed
  int64_t foreign = 0;                         // calls of other applications in it
  int db = 0;                                  // the database of the system's calls
  std::set<std::string> script_dirs;           // "state/beta24"
  std::vector<std::string> versions;           // at the segment's end: Versions()
};

class Importer {
 public:
  Importer(std::string capture, std::string out_dir, const real::ScriptCatalog& catalog)
      : capture_(std::move(capture)), out_dir_(std::move(out_dir)), catalog_(catalog) {
    for (const real::ScriptFile& f : catalog.all()) {
      shipped_[absl::AsciiStrToLower(f.sha1)] = &f;
      // As deployed: a bundler or a hand-written client may trim the template literal's
      // newlines or send CRLF line endings. An EVALSHA names one of these forms by its SHA1; an
      // EVAL's body is compared in its normal form.
      for (const std::string& form : DeployedForms(f.body))
        deployed_.insert_or_assign(sim::Sha1Hex(form), Deployed{&f, form});
      normal_.insert_or_assign(NormalForm(f.body), &f);
    }
    for (const props::System* s : props::Systems()) {
      systems_.push_back(s);
      recognizers_.push_back(s->NewTraceRecognizer());
    }
  }
  ~Importer() {
    if (spill_) std::fclose(spill_);
    for (auto& o : outputs_) {
      if (o->out.is_open()) o->out.close();
      std::error_code ignored;
      if (!done_) fs::remove(o->tmp, ignored);
    }
    // A failed import leaves nothing behind: the segments' files written and the directories it
    // made go too (deepest first).
    std::error_code ignored;
    if (!done_) {
      for (const std::string& f : summary_.files) fs::remove(f, ignored);
      for (auto dir = made_.rbegin(); dir != made_.rend(); ++dir) fs::remove(*dir, ignored);
    }
  }

  ImportSummary Run() {
    std::ifstream in(capture_, std::ios::binary);
    if (!in) throw std::invalid_argument("cannot read capture " + capture_);
    std::string text;
    sim::monitor::Line line;
    std::string error;
    int64_t n = 0;
    Progress progress(capture_);
    while (std::getline(in, text)) {
      ++n;
      if ((n & 0xffff) == 0) progress.Show(in, n);
      if (in.eof()) Fail(n, "truncated: the capture ends inside this line (no line break)");
      if (n == 1 && (text == "OK" || text == "OK\r")) continue;
      if (sim::monitor::IsReplyLine(text)) {  // testbed serve --record: the last call's reply
        std::string reply;
        if (!sim::monitor::ParseReply(text, reply, error)) Fail(n, error);
        if (pending_) pending_->reply = std::move(reply);
        continue;
      }
      if (!sim::monitor::Parse(text, line, error)) Fail(n, error);
      if (line.lua()) {
        if (!pending_ || !IsScriptCall(pending_->argv))
          Fail(n, "a [lua] line with no EVAL or EVALSHA before it");
        pending_->lua.push_back(std::move(line.argv));
        continue;
      }
      Flush();
      if (line.argv.empty()) Fail(n, "no command");
      const std::string name = absl::AsciiStrToUpper(line.argv[0]);
      if (segment_start_ < 0) segment_start_ = line.micros;
      if (name == "FLUSHALL" || name == "FLUSHDB") {
        EndSegment();
        continue;
      }
      if (name == "SCRIPT" && line.argv.size() == 3 &&
          absl::AsciiStrToUpper(line.argv[1]) == "LOAD") {
        known_[sim::Sha1Hex(line.argv[2])] = line.argv[2];
        ++summary_.ignored;
        continue;
      }
      if (Housekeeping(name) || name == "SCRIPT") {
        ++summary_.ignored;
        continue;
      }
      auto call = std::make_unique<Call>();
      call->line = n;
      call->micros = line.micros;
      call->client = line.client;
      call->db = line.db;
      if (name == "EVAL" || name == "EVALSHA") {
        if (line.argv.size() < 3) Fail(n, name + " without a script and a key count");
        Resolve(name, line.argv[1], *call);
      }
      call->argv = std::move(line.argv);
      int best = 0;
      for (size_t s = 0; s < recognizers_.size(); ++s) {
        // A system lives in one database: its first call's in the segment.
        if (const auto o = open_.find(s); o != open_.end() && o->second->db != call->db) continue;
        const int bid = recognizers_[s] ? recognizers_[s]->Claims(call->argv, call->script) : 0;
        if (bid > best) {
          best = bid;
          call->system = s;
        }
      }
      // A call no system claims is another application's: kept, replayed, never judged. So is
      // a script nobody knows, whatever keys it names: no system's operation runs it.
      call->foreign = best == 0 || !call->opaque.empty();
      pending_ = std::move(call);
    }
    if (in.bad()) throw std::invalid_argument("cannot read capture " + capture_);
    progress.Clear();
    summary_.lines = n;
    Flush();
    EndSegment();
    done_ = true;
    return summary_;
  }

 private:
  [[noreturn]] void Fail(int64_t line, const std::string& what) {
    throw std::invalid_argument(absl::StrCat(capture_, ":", line, ": ", what));
  }
  static bool IsScriptCall(const std::vector<std::string>& argv) {
    const std::string name = absl::AsciiStrToUpper(argv.at(0));
    return name == "EVAL" || name == "EVALSHA";
  }

  // The script an EVAL (of `script`, a body) or EVALSHA (of `script`, a SHA1) runs: its SHA1,
  // and its catalog id when it is a shipped script, as shipped or as deployed. An EVALSHA of a
  // body nobody knows is kept opaque.
  void Resolve(const std::string& name, const std::string& script, Call& call) {
    const real::ScriptFile* file = nullptr;
    if (name == "EVAL") {
      call.sha1 = sim::Sha1Hex(script);
      known_[call.sha1] = script;
      if (const auto s = shipped_.find(call.sha1); s != shipped_.end()) {
        file = s->second;
      } else if (const auto d = normal_.find(NormalForm(script)); d != normal_.end()) {
        file = d->second;
        call.deployed = true;
      }
    } else {
      call.sha1 = absl::AsciiStrToLower(script);
      if (const auto s = shipped_.find(call.sha1); s != shipped_.end()) {
        file = s->second;
      } else if (const auto k = known_.find(call.sha1); k != known_.end()) {
        if (const auto d = normal_.find(NormalForm(k->second)); d != normal_.end()) {
          file = d->second;
          call.deployed = true;
        }
      } else if (const auto d = deployed_.find(call.sha1); d != deployed_.end()) {
        file = d->second.file;
        known_[call.sha1] = d->second.body;
        call.deployed = true;
      } else {
        call.opaque =
            "EVALSHA of a body nobody knows (no EVAL or SCRIPT LOAD of it in the "
            "capture, and no shipped script has that SHA1 in any deployed form): not "
            "replayed";
        ++summary_.opaque;
      }
    }
    if (file) call.script = file->id();
  }

  // Makes --out and each missing directory above it, remembering which it made.
  void MakeOutDir() {
    std::error_code ec;
    for (fs::path at = out_dir_; !at.empty() && !fs::exists(at, ec); at = at.parent_path())
      made_.insert(made_.begin(), at);
    for (const fs::path& dir : made_)
      if (!fs::create_directory(dir, ec) && ec)
        throw std::invalid_argument("cannot make " + dir.string());
  }

  Output& OutputFor(size_t system, int db) {
    auto it = open_.find(system);
    if (it != open_.end()) return *it->second;
    auto o = std::make_unique<Output>();
    o->system = systems_[system];
    o->segment = segment_;
    o->db = db;
    if (opened_++ == 0) MakeOutDir();
    o->tmp =
        (fs::path(out_dir_) / absl::StrCat(".import-", getpid(), "-", opened_, ".tmp")).string();
    o->out.open(o->tmp, std::ios::binary | std::ios::trunc);
    if (!o->out) throw std::invalid_argument("cannot write into " + out_dir_);
    o->out << "{\"kind\": \"recorded-trace\", \"calls\": [\n";
    CopyForeign(*o);
    Output& ref = *o;
    open_[system] = o.get();
    outputs_.push_back(std::move(o));
    return ref;
  }

  // A call as a trace holds it; `who` says whose: {"client"}, or {"foreign", "app"}.
  Json CallJson(const Call& c, Json who) const {
    Json j = std::move(who);
    j["line"] = c.line;
    j["at_us"] = c.micros - segment_start_;
    j["argv"] = Argv(c.argv);
    if (!c.sha1.empty()) j["script"] = c.script.empty() ? c.sha1 : c.script;
    if (!c.opaque.empty()) j["opaque"] = c.opaque;
    if (c.reply) j["reply"] = Arg(*c.reply);
    if (!c.lua.empty()) {
      Json lua = Json::array();
      for (const auto& argv : c.lua) lua.push_back(Argv(argv));
      j["lua"] = std::move(lua);
    }
    return j;
  }

  // Another application's call: written into every trace of the segment, in its place among
  // the systems' calls, and kept aside (on disk) for the traces of systems that begin later.
  void FlushForeign(const Call& c) {
    const std::string text = CallJson(c, {{"foreign", true}, {"app", c.client}}).dump();
    if (!c.sha1.empty() && c.opaque.empty()) {
      foreign_scripts_.emplace(c.sha1, c.script);
      if (c.deployed) foreign_deployed_.insert(c.sha1);
    }
    for (auto& [system, o] : open_) WriteForeign(*o, text, c.db);
    if (!spill_) spill_ = std::tmpfile();
    if (!spill_ || std::fputs(absl::StrCat(c.db, " ", text, "\n").c_str(), spill_) < 0)
      throw std::invalid_argument("cannot write a temporary file");
    ++summary_.foreign;
  }

  // A call in another database than the system's cannot touch its keys: kept, not replayed.
  void WriteForeign(Output& o, const std::string& text, int db) {
    o.out << (o.calls++ ? ",\n" : "")
          << (db == o.db
                  ? text
                  : absl::StrCat(text.substr(0, text.size() - 1), ",\"other_db\":", db, "}"));
    ++o.foreign;
    for (const auto& [sha1, id] : foreign_scripts_) o.scripts.emplace(sha1, id);
    o.deployed.insert(foreign_deployed_.begin(), foreign_deployed_.end());
  }

  // The segment's foreign calls so far, into a trace that begins now.
  void CopyForeign(Output& o) {
    if (!spill_ || std::ftell(spill_) == 0) return;
    std::rewind(spill_);
    char* text = nullptr;
    size_t size = 0;
    ssize_t n;
    while ((n = getline(&text, &size, spill_)) > 0) {
      const std::string line(text, n - 1);
      const size_t space = line.find(' ');
      WriteForeign(o, line.substr(space + 1), std::stoi(line.substr(0, space)));
    }
    std::free(text);
    std::fseek(spill_, 0, SEEK_END);
  }

  void Flush() {
    if (!pending_) return;
    Call& c = *pending_;
    if (c.foreign) {
      FlushForeign(c);
      pending_.reset();
      return;
    }
    Output& o = OutputFor(c.system, c.db);
    auto [client, added] = o.clients.emplace(c.client, static_cast<int>(o.client_names.size()));
    if (added) o.client_names.push_back(c.client);
    if (!c.sha1.empty()) {
      o.scripts.emplace(c.sha1, c.script);
      if (c.deployed) o.deployed.insert(c.sha1);
      if (!c.script.empty()) o.script_dirs.insert(c.script.substr(0, c.script.rfind('/')));
    }
    o.out << (o.calls++ ? ",\n" : "") << CallJson(c, {{"client", client->second}}).dump();
    ++summary_.calls;
    pending_.reset();
  }

  // The versions whose scripts the calls ran (newest first), or the one version without scripts.
  std::vector<std::string> Versions(const Output& o, const props::TraceRecognizer& r) const {
    std::vector<std::string> out;
    const auto& versions = o.system->versions();
    for (auto v = versions.rbegin(); v != versions.rend(); ++v)
      if (o.script_dirs.count(o.system->scripts_dir(v->name))) out.push_back(v->name);
    if (!out.empty() || !o.script_dirs.empty()) return out;
    std::vector<std::string> scriptless;
    for (const auto& v : versions) {
      const std::string dir = o.system->scripts_dir(v.name) + "/";
      bool has = false;
      for (const real::ScriptFile& f : catalog_.all()) has |= absl::StartsWith(f.id(), dir);
      if (!has && !r.RulesOut(v.name)) scriptless.push_back(v.name);
    }
    if (scriptless.size() == 1) out = scriptless;
    return out;
  }

  // When Versions() names none (the calls ran no script that tells): every version the calls do
  // not rule out, newest first. Replay judges the trace as each.
  std::vector<std::string> Fitting(const Output& o, const props::TraceRecognizer& r) const {
    std::vector<std::string> out;
    if (!o.script_dirs.empty()) return out;  // scripts of no single version: none fits
    const auto& versions = o.system->versions();
    for (auto v = versions.rbegin(); v != versions.rend(); ++v)
      if (!r.RulesOut(v->name)) out.push_back(v->name);
    return out;
  }

  void EndSegment() {
    for (auto& [system, o] : open_) {
      o->versions = Versions(*o, *recognizers_[system]);
      const std::vector<std::string>& versions = o->versions;
      const std::vector<std::string> fitting =
          versions.empty() ? Fitting(*o, *recognizers_[system]) : std::vector<std::string>();
      Json scripts = Json::object();
      for (const auto& [sha1, id] : o->scripts) {
        scripts[sha1] = id.empty() ? Json{{"body", Arg(known_.at(sha1))}} : Json{{"id", id}};
        if (o->deployed.count(sha1)) {  // replayed as the capture sent it
          scripts[sha1]["body"] = Arg(known_.at(sha1));
          scripts[sha1]["deployed"] =
              "the shipped script modulo leading and trailing whitespace and line endings";
        }
      }
      Json tail = {{"system", o->system->name()},
                   {"version", versions.empty() ? Json(nullptr) : Json(versions.front())},
                   {"old_versions", versions.size() > 1 ? Json(std::vector<std::string>(
                                                              versions.begin() + 1, versions.end()))
                                                        : Json::array()},
                   {"source", fs::path(capture_).filename().string()},
                   {"segment", o->segment},
                   {"start_us", segment_start_},
                   {"clients", o->client_names},
                   {"foreign_calls", o->foreign},
                   {"db", o->db},
                   {"versions_fitting", fitting},
                   {"scripts", scripts}};
      const std::string t = tail.dump();
      o->out << "\n], " << t.substr(1) << "\n";  // the tail's fields after "calls"
      o->out.close();
      if (!o->out) throw std::invalid_argument("cannot write into " + out_dir_);
    }
    // Each trace under its name once its segment ends, in the order they began: memory holds
    // one segment's traces, however many segments the capture has.
    for (auto& o : outputs_) {
      const std::string final_path = (fs::path(out_dir_) / FinalName(*o)).string();
      fs::rename(o->tmp, final_path);
      summary_.files.push_back(final_path);
    }
    outputs_.clear();
    if (!open_.empty()) ++segment_;
    open_.clear();
    if (spill_) {  // the next segment's foreign calls start afresh
      std::fflush(spill_);
      if (ftruncate(fileno(spill_), 0) != 0)
        throw std::invalid_argument("cannot reuse a temp file");
      std::rewind(spill_);
    }
    foreign_scripts_.clear();
    foreign_deployed_.clear();
    segment_start_ = -1;
    for (auto& r : recognizers_)
      if (r) r->NewSegment();
  }

  std::string FinalName(const Output& o) const {
    return absl::StrCat(o.system->name(), "-", o.versions.empty() ? "unknown" : o.versions.front(),
                        "-", fs::path(capture_).stem().string(), "-", o.segment, ".json");
  }

  std::string capture_, out_dir_;
  std::vector<fs::path> made_;  // the directories MakeOutDir made, outermost first
  const real::ScriptCatalog& catalog_;
  absl::flat_hash_map<std::string, const real::ScriptFile*> shipped_;  // sha1 -> file
  struct Deployed {
    const real::ScriptFile* file;
    std::string body;  // the form
  };
  absl::flat_hash_map<std::string, Deployed> deployed_;               // a form's sha1 -> it
  absl::flat_hash_map<std::string, const real::ScriptFile*> normal_;  // normal form -> file
  absl::flat_hash_map<std::string, std::string> known_;  // sha1 -> body seen in the capture
  std::vector<const props::System*> systems_;
  std::vector<std::unique_ptr<props::TraceRecognizer>> recognizers_;
  std::vector<std::unique_ptr<Output>> outputs_;  // this segment's, in the order they began
  int64_t opened_ = 0;                            // traces begun
  std::map<size_t, Output*> open_;                // this segment's, by system
  std::unique_ptr<Call> pending_;
  std::FILE* spill_ = nullptr;  // this segment's foreign calls, a JSON line each
  std::map<std::string, std::string> foreign_scripts_;  // this segment's: sha1 -> id or ""
  std::set<std::string> foreign_deployed_;
  int segment_ = 1;
  int64_t segment_start_ = -1;
  ImportSummary summary_;
  bool done_ = false;
};

}  // namespace

ImportSummary ImportCapture(const std::string& capture, const std::string& out_dir,
                            const real::ScriptCatalog& catalog) {
  Importer importer(capture, out_dir, catalog);
  return importer.Run();
}

}  // namespace testbed::harness
