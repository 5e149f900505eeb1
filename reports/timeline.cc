#include "reports/timeline.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_replace.h>

#include <algorithm>
#include <map>

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
.lane-label { position: absolute; left: -126px; width: 120px; top: 4px; font-weight: 600; font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar { position: absolute; height: 20px; border-radius: 3px; background: #8fb8ff; border: 1px solid #4a7fd6; font-size: 11px; overflow: hidden; white-space: nowrap; cursor: pointer; box-sizing: border-box; padding: 1px 3px; }
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
#details { white-space: pre-wrap; word-break: break-all; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px; min-height: 3em; font: 12px/1.4 ui-monospace, monospace; }
pre.cx { background: #f6f8fa; padding: 8px; border-radius: 6px; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
code { font-size: 12px; }
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
  var items = document.querySelectorAll('.bar, .mark');
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
  document.body.setAttribute('data-ready', '1');
})();
)js";

}  // namespace

std::string PageFileName(const std::string& stem) {
  std::string out;
  for (char c : stem)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out + ".html";
}

std::string TimelineHtml(const TimelinePage& page, const sim::Trace& trace,
                         const ScriptNames& names) {
  constexpr int kColumn = 34, kRow = 26, kTop = 4;
  // Columns: the events a page shows, in the order the world ran them.
  std::vector<int> column(trace.events.size(), -1);
  int columns = 0;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const sim::TraceEvent& e = trace.events[i];
    if (e.kind == sim::EventKind::kCall || e.kind == sim::EventKind::kReply || !MarkKind(e).empty())
      column[i] = columns++;
  }
  // Lanes: one per actor, first seen first; a row per thread of the actor; "world" last.
  std::vector<std::string> actors;
  std::map<int, std::pair<size_t, int>> row_of;  // thread -> (lane, row in lane)
  std::vector<int> rows;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const sim::TraceEvent& e = trace.events[i];
    if (column[i] < 0 || (e.thread >= 0 && row_of.count(e.thread))) continue;
    if (e.thread < 0) continue;  // placed below, once the actors' lanes exist
    const std::string actor = trace.concerns(e);
    auto it = std::find(actors.begin(), actors.end(), actor);
    size_t lane = static_cast<size_t>(it - actors.begin());
    if (it == actors.end()) {
      actors.push_back(actor);
      rows.push_back(0);
    }
    row_of[e.thread] = {lane, rows[lane]++};
  }
  // World events: on the lane of the actor they name (a crash, a pause, a skew), else "world".
  auto place = [&](const sim::TraceEvent& e) -> std::pair<size_t, int> {
    if (e.thread >= 0) return row_of.at(e.thread);
    const std::string lane_name = trace.concerns(e);
    auto it = std::find(actors.begin(), actors.end(), lane_name);
    if (it == actors.end()) {
      actors.push_back(lane_name);
      rows.push_back(1);
      it = actors.end() - 1;
    }
    return {static_cast<size_t>(it - actors.begin()), 0};
  };
  for (size_t i = 0; i < trace.events.size(); ++i)
    if (column[i] >= 0 && trace.events[i].thread < 0) place(trace.events[i]);
  // The reply of each call.
  std::map<size_t, size_t> reply_of;
  for (size_t i = 0; i < trace.events.size(); ++i)
    if (trace.events[i].kind == sim::EventKind::kReply && trace.events[i].call >= 0)
      reply_of[static_cast<size_t>(trace.events[i].call)] = i;

  std::vector<std::string> lane_html(actors.size());
  int highlighted = 0;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const sim::TraceEvent& e = trace.events[i];
    if (column[i] < 0 || e.kind == sim::EventKind::kReply) continue;
    const auto [lane, row] = place(e);
    const int top = kTop + row * kRow;
    const std::string& actor = actors[lane];
    const std::string thread =
        e.thread < 0 ? "world" : trace.thread_names.at(static_cast<size_t>(e.thread));
    if (e.kind == sim::EventKind::kCall) {
      const auto r = reply_of.find(i);
      const int end = r == reply_of.end() ? columns - 1 : column[r->second];
      const std::string call = Abbreviate(sim::ShortArgv(e.argv, &names));
      const std::string reply = r == reply_of.end()
                                    ? "no reply (lost, or the run ended first)"
                                    : Abbreviate(trace.events[r->second].reply.debug());
      const int64_t reply_ms = r == reply_of.end() ? e.at_ms : trace.events[r->second].at_ms;
      bool hl = false;
      for (const Highlight& h : page.highlights)
        hl = hl || (h.actor == actor && e.at_ms >= h.from_ms && e.at_ms <= h.to_ms);
      highlighted += hl;
      std::string cls = "bar";
      if (r == reply_of.end()) cls += " lost";
      if (r != reply_of.end() && trace.events[r->second].reply.is_error()) cls += " error";
      if (hl) cls += " hl";
      std::string label = e.argv.empty() ? "" : e.argv[0];
      // A script call is labelled by its script's name (the id's last part).
      if ((label == "EVAL" || label == "EVALSHA") && e.argv.size() >= 2)
        if (auto it = names.find(sim::CachedSha1(e.argv[1]).substr(0, 12)); it != names.end())
          label = it->second.substr(it->second.rfind('/') + 1);
      absl::StrAppend(&lane_html[lane], "<div class=\"", cls, "\" data-actor=\"", Esc(actor),
                      "\" style=\"left:", column[i] * kColumn,
                      "px;width:", std::max(1, end - column[i] + 1) * kColumn - 4, "px;top:", top,
                      "px\" data-detail=\"",
                      Esc(absl::StrCat(thread, ", +", e.at_ms, "ms to +", reply_ms, "ms\n", call,
                                       "\n-> ", reply)),
                      "\">", Esc(label), "</div>\n");
    } else {
      const std::string kind = MarkKind(e);
      const char* symbol = kind == "crash"                      ? "&#10006;"
                           : kind == "clock"                    ? "&#9719;"
                           : kind == "sleep" || kind == "pause" ? "&#8214;"
                                                                : "!";
      absl::StrAppend(&lane_html[lane], "<div class=\"mark ", kind,
                      "\" style=\"left:", column[i] * kColumn + kColumn / 2 - 8, "px;top:", top + 2,
                      "px\" data-detail=\"",
                      Esc(absl::StrCat(thread, ", +", e.at_ms, "ms\n", e.text)), "\" title=\"",
                      Esc(e.text), "\">", symbol, "</div>\n");
    }
  }
  // The axis: a tick where the virtual time moves on.
  std::string axis;
  int64_t last_ms = -1;
  for (size_t i = 0; i < trace.events.size(); ++i)
    if (column[i] >= 0 && trace.events[i].at_ms != last_ms) {
      last_ms = trace.events[i].at_ms;
      absl::StrAppend(&axis, "<span class=\"tick\" style=\"left:", column[i] * kColumn, "px\">+",
                      last_ms, "ms</span>");
    }
  const int width = std::max(1, columns) * kColumn + 20;
  std::string first_line = page.counterexample.substr(0, page.counterexample.find('\n'));
  first_line.erase(0, first_line.find_first_not_of(' '));
  std::string lanes;
  for (size_t l = 0; l < actors.size(); ++l)
    absl::StrAppend(&lanes, "<div class=\"lane\" data-actor=\"", Esc(actors[l]),
                    "\" style=\"height:", kTop * 2 + rows[l] * kRow, "px;width:", width,
                    "px\"><div class=\"lane-label\" title=\"", Esc(actors[l]), "\">",
                    Esc(actors[l]), "</div>\n", lane_html[l], "</div>\n");
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
      Esc(page.title), "</title>\n<style>", kStyle, "</style>\n<script>", kErrorCapture,
      "</script>\n</head>\n<body data-highlighted=\"", highlighted, "\" data-lanes=\"",
      actors.size(), "\">\n<h1>", Esc(page.title), "</h1>\n<p class=\"sentence\">",
      Esc(page.sentence), first_line.empty() ? "" : "<br><b>" + Esc(first_line) + "</b>", "</p>\n",
      highlighted == 0 ? "<p class=\"note\">This finding does not pinpoint its operations in the "
                         "trace; the counterexample below names them.</p>\n"
                       : "",
      "<pre class=\"cx\">", Esc(page.counterexample),
      "</pre>\n<p class=\"legend\"><span><i style=\"background:#8fb8ff\"></i>Redis call, request "
      "to reply</span><span><i style=\"background:#ff8787\"></i>an operation the violation is "
      "about</span><span><i style=\"background:#f08c00\"></i>fault</span><span><i "
      "style=\"background:#c92a2a\"></i>crash</span><span><i "
      "style=\"background:#868e96\"></i>pause or sleep</span><span><i "
      "style=\"background:#7048e8\"></i>clock</span></p>\n<p>One lane per actor, a row per "
      "thread; left to right in the order the world ran events (times since the run's start). "
      "Hover over or click a bar.</p>\n<div class=\"scroll\"><div class=\"axis\" style=\"width:",
      width, "px\">", axis, "</div>\n", lanes, "</div>\n<h2>Call</h2>\n<div id=\"details\">",
      "</div>\n<p>Replay: <code>", Esc(page.replay), "</code></p>\n<script>", kScript,
      "</script>\n</body>\n</html>\n");
}

}  // namespace testbed::reports
