#include "reports/timeline.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_replace.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "sim/lua_scripting.h"

namespace testbed::reports {
namespace {

std::string Esc(const std::string& s) {
  return absl::StrReplaceAll(
      s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

// The kind of mark an event that is not a call makes on its lane ("" when it makes none).
// Plans are not events (the faults they plan show when they happen), except a clock skew,
// which holds for the whole run.
std::string MarkKind(const sim::TraceEvent& e) {
  using sim::Fault;
  if (e.kind == sim::EventKind::kFault || e.kind == sim::EventKind::kClock) {
    const bool clock = e.fault == Fault::kSkew || e.fault == Fault::kClockJump;
    if (e.planned) return e.fault == Fault::kSkew ? "clock" : "";
    if (clock) return "clock";
    if (e.fault == Fault::kCrash) return "crash";
    if (e.fault == Fault::kPause) return "pause";
    return "fault";
  }
  if (e.kind == sim::EventKind::kNote) {
    if (e.note == sim::Note::kSleep) return "sleep";
    if (e.note == sim::Note::kError) return "error";
  }
  return "";
}

constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #1d232a; }
h1 { font-size: 18px; margin: 0 0 4px; }
.sentence { font-size: 16px; background: #fff4e5; border-left: 4px solid #e8590c; padding: 8px 12px; margin: 8px 0 12px; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: middle; border-radius: 2px; }
.scroll { overflow-x: auto; border: 1px solid #d0d7de; border-radius: 6px; padding: 6px 0; }
.axis, .lane { position: relative; margin-left: 130px; }
.axis { height: 20px; border-bottom: 1px solid #d0d7de; }
.tick { position: absolute; top: 2px; font-size: 11px; color: #57606a; white-space: nowrap; }
.lane { border-bottom: 1px dashed #eaeef2; }
.lane-label { position: absolute; left: -126px; width: 120px; top: 4px; font-weight: 600; font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; background: #fff; z-index: 4; }
.bar { position: absolute; height: 20px; border-radius: 3px; background: #8fb8ff; border: 1px solid #4a7fd6; font-size: 11px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; z-index: 1; cursor: pointer; box-sizing: border-box; padding: 1px 3px; }
.bar.lost { background: repeating-linear-gradient(45deg, #d8dee4, #d8dee4 4px, #f6f8fa 4px, #f6f8fa 8px); border-color: #8c959f; }
.bar.error { background: #ffc9c9; border-color: #e03131; }
.bar.hl { background: #ff8787; border: 2px solid #c92a2a; font-weight: 700; }
.bar.selected { outline: 2px solid #1d232a; }
.mark { position: absolute; width: 16px; height: 16px; border-radius: 50%; font-size: 11px; text-align: center; line-height: 16px; color: #fff; cursor: pointer; }
.mark.fault { background: #f08c00; }
.mark.crash { background: #c92a2a; }
.mark.pause, .mark.sleep { background: #868e96; }
.mark.clock { background: #7048e8; }
.mark.error { background: #e03131; }
.lane-label.row-label { font-weight: 400; font-size: 10px; color: #57606a; }
#details { white-space: pre-wrap; word-break: break-all; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px; min-height: 3em; font: 12px/1.4 ui-monospace, monospace; }
pre.cx { background: #f6f8fa; padding: 8px; border-radius: 6px; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
code { font-size: 12px; }
header { position: sticky; top: 0; background: #fff; z-index: 5; padding: 4px 0; border-bottom: 1px solid #d0d7de; }
header .replay { margin: 2px 0; font-size: 12px; }
header code { word-break: break-all; }
.op { position: absolute; height: 20px; border-radius: 3px; background: #ffe066; border: 1px solid #f08c00; font-size: 11px; font-weight: 600; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; cursor: pointer; box-sizing: border-box; padding: 1px 3px; }
.deadline { position: absolute; top: 0; bottom: 0; width: 0; border-left: 2px dashed #e8590c; z-index: 2; cursor: pointer; }
.deadline span { position: absolute; left: 3px; bottom: 0; font-size: 10px; color: #e8590c; white-space: nowrap; background: rgba(255,255,255,.8); }
.gap { position: absolute; top: 0; bottom: 0; background: repeating-linear-gradient(135deg, #f1f3f5, #f1f3f5 3px, #fff 3px, #fff 9px); }
.gap-label { position: absolute; top: 2px; font-size: 11px; color: #868e96; text-align: center; white-space: nowrap; }
)css";

constexpr const char* kErrorCapture =
    "window.addEventListener('error', function (e) { document.body.setAttribute('data-errors', "
    "(document.body.getAttribute('data-errors') || '') + e.message + ';'); });";

constexpr const char* kScript = R"js(
(function () {
  var details = document.getElementById('details');
  var selected = null;
  function show(el) {
    details.textContent = el.getAttribute('data-detail');
  }
  var items = document.querySelectorAll('.bar, .mark, .op, .deadline');
  for (var i = 0; i < items.length; i++) {
    items[i].addEventListener('mouseenter', function () { if (!selected) show(this); });
    items[i].addEventListener('click', function () {
      if (selected) selected.classList.remove('selected');
      selected = this;
      this.classList.add('selected');
      show(this);
    });
  }
  var first = document.querySelector('.bar.hl');
  if (first) {
    show(first);
    first.scrollIntoView({ block: 'nearest', inline: 'center' });
  }
  // Lane labels stay in view while the lanes scroll.
  var scroll = document.querySelector('.scroll');
  var labels = document.querySelectorAll('.lane-label');
  function pin() {
    for (var j = 0; j < labels.length; j++)
      labels[j].style.transform = 'translateX(' + scroll.scrollLeft + 'px)';
  }
  scroll.addEventListener('scroll', pin);
  pin();
  var copy = document.getElementById('copy');
  copy.addEventListener('click', function () {
    var text = document.getElementById('replay').textContent;
    if (navigator.clipboard) navigator.clipboard.writeText(text);
    copy.textContent = 'copied';
  });
  document.body.setAttribute('data-ready', '1');
})();
)js";

}  // namespace

std::string SafeFileName(const std::string& stem) {
  std::string out;
  for (char c : stem)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out;
}

std::string PageFileName(const std::string& stem) { return SafeFileName(stem) + ".html"; }

namespace {

// Where each shown event sits (px from the left), to scale: see timeline.h.
struct Layout {
  std::vector<int> column;  // by event: its column, or -1 when not shown
  std::vector<int64_t> ms;  // by column: virtual time
  std::vector<int> x;       // by column
  struct Gap {
    int from, to;
    int64_t ms;
  };
  std::vector<Gap> gaps;
  int width = 0;

  // The x of virtual time t: a column's own x, or in proportion inside the stretch before it.
  int At(int64_t t) const {
    if (x.empty()) return 0;
    if (t <= ms.front()) return x.front();
    for (size_t k = 1; k < x.size(); ++k)
      if (t <= ms[k]) {
        const int from = x[k - 1] + kSlot;
        // In proportion across the stretch, compressed or not.
        const int64_t span = std::max<int64_t>(1, ms[k] - ms[k - 1]);
        return from + static_cast<int>((x[k] - from) * (t - ms[k - 1]) / span);
      }
    return x.back() + kSlot + static_cast<int>(std::min(t - ms.back(), kGapMs) * kPxPerMs);
  }
  static constexpr int kSlot = 30;  // one event, among those of its millisecond
};

// About how wide a bar's label is at the bars' 11px font.
int LabelPx(const std::string& label) { return static_cast<int>(label.size()) * 8 + 10; }

// A script call is labelled by its script's name (the id's last part), other calls by command.
std::string BarLabel(const sim::TraceEvent& e, const ScriptNames& names) {
  std::string label = e.argv.empty() ? "" : e.argv[0];
  if ((label == "EVAL" || label == "EVALSHA") && e.argv.size() >= 2)
    if (auto it = names.find(sim::CachedSha1(e.argv[1]).substr(0, 12)); it != names.end())
      label = it->second.substr(it->second.rfind('/') + 1);
  return label;
}

// `until`: the latest time the page draws (a deadline past the last event), as one more column
// that no event takes.
Layout Place(const sim::Trace& trace, const ScriptNames& names, int64_t until) {
  Layout l;
  l.column.assign(trace.events.size(), -1);
  std::map<size_t, std::vector<size_t>> calls_ending;  // reply column -> call events
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const sim::TraceEvent& e = trace.events[i];
    if (e.kind != sim::EventKind::kCall && e.kind != sim::EventKind::kReply && MarkKind(e).empty())
      continue;
    const int k = static_cast<int>(l.x.size());
    l.column[i] = k;
    int x = 0;
    if (k > 0) {
      const int64_t span = e.at_ms - l.ms.back();
      x = l.x.back() + Layout::kSlot + static_cast<int>(std::min(span, kGapMs) * kPxPerMs);
      if (span > kGapMs) l.gaps.push_back({l.x.back() + Layout::kSlot, x, span});
    }
    // A bar is at least as wide as its label: the slots of one millisecond widen, never the
    // time between milliseconds.
    if (e.kind == sim::EventKind::kReply && e.call >= 0) {
      const sim::TraceEvent& call = trace.events[static_cast<size_t>(e.call)];
      const int call_column = l.column[static_cast<size_t>(e.call)];
      if (call_column >= 0)
        x = std::max(x, l.x[static_cast<size_t>(call_column)] + LabelPx(BarLabel(call, names)) -
                            Layout::kSlot + 4);
    }
    l.ms.push_back(e.at_ms);
    l.x.push_back(x);
  }
  if (!l.x.empty() && until > l.ms.back()) {
    const int64_t span = until - l.ms.back();
    const int x = l.x.back() + Layout::kSlot + static_cast<int>(std::min(span, kGapMs) * kPxPerMs);
    if (span > kGapMs) l.gaps.push_back({l.x.back() + Layout::kSlot, x, span});
    l.ms.push_back(until);
    l.x.push_back(x);
  }
  l.width = (l.x.empty() ? 0 : l.x.back()) + Layout::kSlot * 3 + 200;
  return l;
}

// The page of one finding, drawn in steps: the operations the finding is about (OpBars), the
// lanes and rows of the actors (Lanes), the calls and marks on them (Events), the operations,
// deadlines, gaps and axis (Overlays, Axis), and the page around them (Html).
class TimelineDrawing {
 public:
  TimelineDrawing(const TimelinePage& page, const sim::Trace& trace, const ScriptNames& names)
      : page_(page), trace_(trace), names_(names), layout_(Place(trace, names, Until(page))) {
    for (size_t i = 0; i < trace.events.size(); ++i)
      if (trace.events[i].kind == sim::EventKind::kReply && trace.events[i].call >= 0)
        reply_of_[static_cast<size_t>(trace.events[i].call)] = i;
  }

  std::string Html() {
    OpBars();
    Lanes();
    lane_html_.resize(actors_.size());
    Events();
    Overlays();
    std::string axis, gaps;
    Axis(axis, gaps);
    RowLabels();
    return Page(axis, gaps);
  }

 private:
  static constexpr int kRow = 26, kTop = 4;

  static int64_t Until(const TimelinePage& page) {
    int64_t until = 0;
    for (const DeadlineMark& d : page.deadlines) until = std::max(until, d.at_ms);
    for (const Highlight& h : page.highlights)
      if (h.to_ms != INT64_MAX) until = std::max(until, h.to_ms);
    return until;
  }

  int x_of(size_t event) const { return layout_.x[static_cast<size_t>(layout_.column[event])]; }
  // Where a call's bar ends: at its reply, or at the page's end when it had none.
  int EndOf(size_t call) const {
    const auto r = reply_of_.find(call);
    return r == reply_of_.end() ? layout_.width - 200 : x_of(r->second) + Layout::kSlot;
  }

  // The operations the finding is about: from an operation's first call to its last reply
  // (many calls share a millisecond), else by time; stacked where they overlap.
  void OpBars() {
    for (const Highlight& h : page_.highlights) {
      int from = layout_.At(h.from_ms);
      int to = h.to_ms == INT64_MAX ? layout_.width - 200 : layout_.At(h.to_ms) + Layout::kSlot;
      int first = INT32_MAX, last = -1;
      for (size_t i = 0; i < trace_.events.size(); ++i) {
        const sim::TraceEvent& e = trace_.events[i];
        if (layout_.column[i] < 0 || e.kind != sim::EventKind::kCall || e.thread < 0 ||
            trace_.concerns(e) != h.actor || e.at_ms < h.from_ms || e.at_ms > h.to_ms)
          continue;
        first = std::min(first, x_of(i));
        last = std::max(last, EndOf(i));
      }
      if (last >= 0) from = first, to = std::max(to, last);
      int row = 0;
      for (const OpBar& o : op_bars_)
        if (o.actor == h.actor && o.from < to && from < o.to) row = std::max(row, o.row + 1);
      op_rows_[h.actor] = std::max(op_rows_[h.actor], row + 1);
      const std::string op = h.op.empty() ? "operation" : h.op;
      const std::string until =
          h.to_ms == INT64_MAX ? "never returned" : absl::StrCat("+", h.to_ms, "ms");
      op_bars_.push_back({h.actor, op,
                          absl::StrCat(h.actor, ": ", op, ", +", h.from_ms, "ms to ", until), from,
                          to, row});
    }
  }

  // Lanes: one per actor, first seen first; a row per thread of the actor; "world" last. A lane
  // whose actor ran an operation the finding is about has a row above them for the operations.
  void Lanes() {
    for (size_t i = 0; i < trace_.events.size(); ++i) {
      const sim::TraceEvent& e = trace_.events[i];
      if (layout_.column[i] < 0 || (e.thread >= 0 && row_of_.count(e.thread))) continue;
      if (e.thread < 0) continue;  // placed below, once the actors' lanes exist
      const std::string actor = trace_.concerns(e);
      auto it = std::find(actors_.begin(), actors_.end(), actor);
      size_t lane = static_cast<size_t>(it - actors_.begin());
      if (it == actors_.end()) {
        actors_.push_back(actor);
        rows_.push_back(op_rows_.count(actor) ? op_rows_[actor] : 0);
      }
      row_of_[e.thread] = {lane, rows_[lane]++};
    }
    for (size_t i = 0; i < trace_.events.size(); ++i)
      if (layout_.column[i] >= 0 && trace_.events[i].thread < 0) LaneOf(trace_.events[i]);
  }

  // An event's lane and row. World events go on the lane of the actor they name (a crash, a
  // pause, a skew), else on "world".
  std::pair<size_t, int> LaneOf(const sim::TraceEvent& e) {
    if (e.thread >= 0) return row_of_.at(e.thread);
    const std::string lane_name = trace_.concerns(e);
    auto it = std::find(actors_.begin(), actors_.end(), lane_name);
    if (it == actors_.end()) {
      actors_.push_back(lane_name);
      rows_.push_back(1);
      it = actors_.end() - 1;
    }
    const size_t lane = static_cast<size_t>(it - actors_.begin());
    const int below = op_rows_.count(lane_name) ? op_rows_[lane_name] : 0;
    return {lane, rows_[lane] > below ? below : 0};
  }

  // Each shown call as a bar from request to reply, each world event as a mark.
  void Events() {
    for (size_t i = 0; i < trace_.events.size(); ++i) {
      const sim::TraceEvent& e = trace_.events[i];
      if (layout_.column[i] < 0 || e.kind == sim::EventKind::kReply) continue;
      const auto [lane, row] = LaneOf(e);
      const int top = kTop + row * kRow;
      const std::string thread =
          e.thread < 0 ? "world" : trace_.thread_names.at(static_cast<size_t>(e.thread));
      if (e.kind == sim::EventKind::kCall)
        CallBar(i, lane, top, thread);
      else
        Mark(i, lane, top, thread);
    }
  }

  void CallBar(size_t i, size_t lane, int top, const std::string& thread) {
    const sim::TraceEvent& e = trace_.events[i];
    const std::string& actor = actors_[lane];
    const auto r = reply_of_.find(i);
    const int end = EndOf(i);
    const std::string call = Abbreviate(sim::ShortArgv(e.argv, &names_));
    const std::string reply = r == reply_of_.end()
                                  ? "no reply (lost, or the run ended first)"
                                  : Abbreviate(trace_.events[r->second].reply.debug());
    const int64_t reply_ms = r == reply_of_.end() ? e.at_ms : trace_.events[r->second].at_ms;
    bool hl = false;
    for (const Highlight& h : page_.highlights)
      hl = hl || (h.actor == actor && e.at_ms >= h.from_ms && e.at_ms <= h.to_ms);
    highlighted_ += hl;
    std::string cls = "bar";
    if (r == reply_of_.end()) cls += " lost";
    if (r != reply_of_.end() && trace_.events[r->second].reply.is_error()) cls += " error";
    if (hl) cls += " hl";
    const std::string label = BarLabel(e, names_);
    absl::StrAppend(&lane_html_[lane], "<div class=\"", cls, "\" data-actor=\"", Esc(actor),
                    "\" style=\"left:", x_of(i), "px;width:", std::max(8, end - x_of(i) - 4),
                    "px;top:", top, "px\" title=\"", Esc(label), "\" data-detail=\"",
                    Esc(absl::StrCat(thread, ", +", e.at_ms, "ms to +", reply_ms, "ms\n", call,
                                     "\n-> ", reply)),
                    "\">", Esc(label), "</div>\n");
  }

  void Mark(size_t i, size_t lane, int top, const std::string& thread) {
    const sim::TraceEvent& e = trace_.events[i];
    const std::string kind = MarkKind(e);
    const char* symbol = kind == "crash"                      ? "&#10006;"
                         : kind == "clock"                    ? "&#9719;"
                         : kind == "sleep" || kind == "pause" ? "&#8214;"
                                                              : "!";
    absl::StrAppend(&lane_html_[lane], "<div class=\"mark ", kind,
                    "\" style=\"left:", x_of(i) + Layout::kSlot / 2 - 8, "px;top:", top + 2,
                    "px\" data-detail=\"",
                    Esc(absl::StrCat(thread, ", +", e.at_ms, "ms\n", e.text)), "\" title=\"",
                    Esc(e.text), "\">", symbol, "</div>\n");
  }

  // The operations' bars, and the deadlines: a line on the lane of the actor they concern, or
  // across every lane. Deadlines of one actor and time are one line.
  void Overlays() {
    for (const OpBar& o : op_bars_) {
      const size_t lane =
          static_cast<size_t>(std::find(actors_.begin(), actors_.end(), o.actor) - actors_.begin());
      if (lane == actors_.size()) continue;
      absl::StrAppend(&lane_html_[lane], "<div class=\"op\" data-actor=\"", Esc(o.actor),
                      "\" style=\"left:", o.from, "px;width:", std::max(8, o.to - o.from - 4),
                      "px;top:", kTop + o.row * kRow, "px\" title=\"", Esc(o.op),
                      "\" data-detail=\"", Esc(o.detail), "\">", Esc(o.op), "</div>\n");
    }
    for (const DeadlineMark& d : page_.deadlines) {
      auto& what = deadlines_[{d.actor, d.at_ms}];
      if (std::find(what.begin(), what.end(), d.what) == what.end()) what.push_back(d.what);
    }
    for (const auto& [at, what] : deadlines_) {
      const std::string text = absl::StrCat(absl::StrJoin(what, "; "), " at +", at.second, "ms");
      const std::string mark = absl::StrCat(
          "<div class=\"deadline\" style=\"left:", layout_.At(at.second), "px\" data-detail=\"",
          Esc(text), "\" title=\"", Esc(text), "\"><span>", Esc(text), "</span></div>\n");
      for (size_t l = 0; l < actors_.size(); ++l)
        if (at.first.empty() || at.first == actors_[l]) absl::StrAppend(&lane_html_[l], mark);
    }
  }

  // Compressed gaps, on the axis and on every lane; and the axis: a tick where the virtual
  // time moves on, where its label has room.
  void Axis(std::string& axis, std::string& gaps) const {
    for (const Layout::Gap& g : layout_.gaps) {
      absl::StrAppend(&gaps, "<div class=\"gap\" style=\"left:", g.from, "px;width:", g.to - g.from,
                      "px\"></div>\n");
      absl::StrAppend(&axis, "<span class=\"gap-label\" style=\"left:", g.from,
                      "px;width:", g.to - g.from, "px\" title=\"", g.ms, " ms, drawn as ", kGapMs,
                      " ms\">&#8776;", g.ms, " ms</span>");
    }
    int last_tick = -1000;
    for (size_t k = 0; k < layout_.x.size(); ++k)
      if ((k == 0 || layout_.ms[k] != layout_.ms[k - 1]) && layout_.x[k] - last_tick >= 56) {
        last_tick = layout_.x[k];
        absl::StrAppend(&axis, "<span class=\"tick\" style=\"left:", layout_.x[k], "px\">+",
                        layout_.ms[k], "ms</span>");
      }
  }

  // A lane with several threads names each thread's row ("main#0", "renew#3").
  void RowLabels() {
    std::vector<int> threads(actors_.size(), 0);
    for (const auto& [thread, at] : row_of_) ++threads[at.first];
    for (const auto& [thread, at] : row_of_) {
      const std::string& name = trace_.thread_names.at(static_cast<size_t>(thread));
      if (threads[at.first] > 1 && at.second > 0)
        absl::StrAppend(&lane_html_[at.first], "<div class=\"lane-label row-label\" style=\"top:",
                        kTop + at.second * kRow + 4, "px\" title=\"", Esc(name), "\">",
                        Esc(name.substr(name.find('/') + 1)), "</div>\n");
    }
  }

  std::string Page(const std::string& axis, const std::string& gaps) const {
    const int width = layout_.width;
    std::string first_line = page_.counterexample.substr(0, page_.counterexample.find('\n'));
    first_line.erase(0, first_line.find_first_not_of(' '));
    std::string lanes;
    for (size_t l = 0; l < actors_.size(); ++l)
      absl::StrAppend(&lanes, "<div class=\"lane\" data-actor=\"", Esc(actors_[l]),
                      "\" style=\"height:", kTop * 2 + rows_[l] * kRow, "px;width:", width,
                      "px\"><div class=\"lane-label\" title=\"", Esc(actors_[l]), "\">",
                      Esc(actors_[l]), "</div>\n", gaps, lane_html_[l], "</div>\n");
    return absl::StrCat(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
        Esc(page_.title), "</title>\n<style>", kStyle, "</style>\n<script>", kErrorCapture,
        "</script>\n</head>\n<body data-highlighted=\"", highlighted_, "\" data-lanes=\"",
        actors_.size(), "\" data-deadlines=\"", deadlines_.size(), "\" data-gaps=\"",
        layout_.gaps.size(), "\">\n<header>\n<h1>", Esc(page_.title), "</h1>\n<p class=\"replay\">",
        page_.report_link.empty()
            ? std::string()
            : absl::StrCat("<a href=\"", Esc(page_.report_link), "\">&#8592; report</a> "),
        "Replay: <code id=\"replay\">", Esc(page_.replay),
        "</code> <button id=\"copy\" type=\"button\">copy</button></p>\n</header>\n"
        "<p class=\"sentence\">",
        Esc(page_.sentence), first_line.empty() ? "" : "<br><b>" + Esc(first_line) + "</b>",
        "</p>\n",
        highlighted_ == 0 ? "<p class=\"note\">This finding does not pinpoint its operations in "
                            "the trace; the counterexample below names them.</p>\n"
                          : "",
        "<pre class=\"cx\">", Esc(page_.counterexample),
        "</pre>\n<p class=\"legend\"><span><i style=\"background:#8fb8ff\"></i>Redis call, request "
        "to reply</span><span><i style=\"background:#ff8787\"></i>a call of an operation the "
        "violation is about</span><span><i style=\"background:#ffe066\"></i>that operation "
        "(SDK call)</span><span><i style=\"background:#e8590c\"></i>deadline</span><span><i "
        "style=\"background:#f08c00\"></i>fault</span><span><i "
        "style=\"background:#c92a2a\"></i>crash</span><span><i "
        "style=\"background:#868e96\"></i>pause or sleep</span><span><i "
        "style=\"background:#7048e8\"></i>clock</span></p>\n<p>One lane per actor, a row per "
        "thread. Time runs left to right in proportion (",
        kPxPerMs,
        " px a millisecond; calls of one millisecond side by side in the order the world "
        "ran them); a gap longer than ",
        kGapMs,
        " ms is compressed and marked &#8776; with its length. Hover over or click a "
        "bar.</p>\n<div class=\"scroll\"><div class=\"axis\" style=\"width:",
        width, "px\">", axis, "</div>\n", lanes, "</div>\n<h2>Call</h2>\n<div id=\"details\">",
        "</div>\n<script>", kScript, "</script>\n</body>\n</html>\n");
  }

  struct OpBar {
    std::string actor, op, detail;
    int from, to, row;
  };
  const TimelinePage& page_;
  const sim::Trace& trace_;
  const ScriptNames& names_;
  const Layout layout_;
  std::map<size_t, size_t> reply_of_;             // the reply of each call
  std::vector<std::string> actors_;               // by lane
  std::vector<int> rows_;                         // by lane
  std::map<int, std::pair<size_t, int>> row_of_;  // thread -> (lane, row in lane)
  std::vector<OpBar> op_bars_;
  std::map<std::string, int> op_rows_;  // actor -> rows its operations take
  std::vector<std::string> lane_html_;  // by lane
  int highlighted_ = 0;
  std::map<std::pair<std::string, int64_t>, std::vector<std::string>> deadlines_;
};

}  // namespace

std::string TimelineHtml(const TimelinePage& page, const sim::Trace& trace,
                         const ScriptNames& names) {
  return TimelineDrawing(page, trace, names).Html();
}

}  // namespace testbed::reports
