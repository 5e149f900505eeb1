// Typed trace events: nothing under properties/, reports/ or scenarios/ reads meaning out of an
// event's rendered text. Every property of every system runs twice on the same seeds, under
// every fault it keeps, once with the world writing its texts as usual and once with every
// text rewritten beyond recognition; verdicts, classes, findings and the timeline pages'
// lanes, marks and highlights must not move.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "harness/system.h"
#include "reports/timeline.h"
#include "tests/test_catalogs.h"

namespace testbed {
namespace {

// Reversed and bracketed: "fault crash client1" -> "<1tneilc hsarc tluaf>".
std::string ScrambledEvents(std::string text) {
  std::reverse(text.begin(), text.end());
  return "<" + text + ">";
}

class ScrambledText {
 public:
  ScrambledText() { sim::EventTextRewriteForTests() = ScrambledEvents; }
  ~ScrambledText() { sim::EventTextRewriteForTests() = nullptr; }
};

// A timeline page without what it shows of texts (details and tooltips): the lanes, the marks'
// kinds and places, the bars and the highlights.
std::string Shape(const props::RunOutcome& r) {
  reports::TimelinePage page{"title", "sentence", "counterexample", "replay", {}};
  for (const props::Finding& f : r.findings)
    for (const props::Involved& i : f.involved)
      page.highlights.push_back({i.actor, i.from_ms, i.to_ms});
  std::string html = reports::TimelineHtml(page, r.trace, {});
  // Drops every ` data-detail="..."` and ` title="..."` (a scan: std::regex recurses per
  // character and overflows the stack on long attributes).
  for (const std::string attr : {" data-detail=\"", " title=\""})
    for (size_t at = html.find(attr); at != std::string::npos; at = html.find(attr, at))
      html.erase(at, html.find('"', at + attr.size()) + 1 - at);
  return html;
}

std::string TypedVerdict(const props::RunOutcome& r) {
  std::string out = std::string(r.violated ? "violated" : "passed") +
                    (r.incomplete ? " incomplete" : "") + " " +
                    std::to_string(r.script_errors.size()) + " script errors;";
  for (const props::Finding& f : r.findings) {
    out += " " + props::ClassOf(f) + "@";
    for (const props::Involved& i : f.involved)
      out += i.actor + ":" + std::to_string(i.from_ms) + "-" + std::to_string(i.to_ms) + ",";
  }
  return out;
}

TEST(TypedEvents, VerdictsClassesAndTimelinesDoNotDependOnHowEventsRender) {
  int compared = 0, with_world_marks = 0, violated = 0;
  for (const props::System* system : props::Systems()) {
    for (const props::PropertyInfo& p : system->properties()) {
      if (!p.applies(system->default_version(), "")) continue;
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        props::RunSpec spec;
        spec.property = p.name;
        spec.version = system->default_version();
        spec.seed = seed;
        spec.clients = system->default_clients();
        spec.ops = system->default_ops();
        spec.faults = sim::FaultList::Parse("all");
        const props::RunOutcome plain = system->Run(spec, testing_catalogs::Shipped(), nullptr);
        props::RunOutcome scrambled;
        {
          ScrambledText rewrite;
          scrambled = system->Run(spec, testing_catalogs::Shipped(), nullptr);
        }
        const std::string where = system->name() + " " + p.name + " seed " + std::to_string(seed);
        // The rewrite took: the texts differ, the events do not.
        ASSERT_EQ(plain.trace.events.size(), scrambled.trace.events.size()) << where;
        EXPECT_NE(plain.trace.Hash(), scrambled.trace.Hash()) << where;
        EXPECT_EQ(TypedVerdict(plain), TypedVerdict(scrambled)) << where;
        EXPECT_EQ(plain.classes, scrambled.classes) << where;
        EXPECT_EQ(Shape(plain), Shape(scrambled)) << where;
        with_world_marks += Shape(plain).find("class=\"mark crash\"") != std::string::npos;
        violated += plain.violated;
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 100);
  EXPECT_GT(with_world_marks, 0)
      << "no run crashed an actor: the lanes of world events went untested";
  EXPECT_GT(violated, 0);
}

// The comparison above can fail: a consumer that did read the text (the timeline's marks as
// they were found before, by substring) tells the two apart.
TEST(TypedEvents, ATextReadingConsumerWouldBeCaught) {
  props::RunSpec spec;
  spec.property = "busy-means-committing";
  spec.version = "beta30";
  spec.clients = 3;
  spec.ops = 8;
  spec.faults = sim::FaultList::Parse("crash,pause");
  const props::System& handles = *props::FindSystem("handles");
  auto by_text = [](const props::RunOutcome& r) {
    int crashes = 0;
    for (const sim::TraceEvent& e : r.trace.events) crashes += e.text.rfind("fault crash", 0) == 0;
    return crashes;
  };
  auto by_field = [](const props::RunOutcome& r) {
    int crashes = 0;
    for (const sim::TraceEvent& e : r.trace.events)
      crashes += e.fault == sim::Fault::kCrash && !e.planned;
    return crashes;
  };
  // The first seed whose run crashes an actor.
  props::RunOutcome plain;
  for (spec.seed = 1; spec.seed <= 50 && by_field(plain) == 0; ++spec.seed)
    plain = handles.Run(spec, testing_catalogs::Shipped(), nullptr);
  --spec.seed;
  ASSERT_GT(by_field(plain), 0) << "no seed up to 50 crashes an actor";
  props::RunOutcome scrambled;
  {
    ScrambledText rewrite;
    scrambled = handles.Run(spec, testing_catalogs::Shipped(), nullptr);
  }
  EXPECT_EQ(by_field(plain), by_field(scrambled));
  EXPECT_EQ(by_text(plain), by_field(plain));
  EXPECT_NE(by_text(plain), by_text(scrambled));
}

}  // namespace
}  // namespace testbed
