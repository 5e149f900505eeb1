// The linearizability checker against golden histories (Porcupine's c01-ok / c01-bad style):
// it must accept every ok history and reject every bad one, and a broken model must be
// rejected where the right one accepts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/state_register.h"
#include "checker/history_gen.h"
#include "harness/prng_draws.h"
#include "checker/register_history.h"

namespace testbed::checker {

namespace {

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> Golden(const std::string& suffix) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(TESTBED_SOURCE_DIR "/tests/histories"))
    if (e.path().filename().string().find(suffix) != std::string::npos) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Linearizability, AcceptsEveryOkGoldenHistory) {
  const auto files = Golden("-ok.txt");
  ASSERT_GE(files.size(), 8u);
  model::StateRegisterModel m;
  for (const auto& f : files) {
    Verdict v = Checker<model::StateRegisterModel>(m).check(ParseRegisterHistory(Read(f)));
    EXPECT_TRUE(v.ok) << f.filename() << " rejected (partition " << v.partition << ")";
    EXPECT_TRUE(v.complete) << f.filename();
  }
}

TEST(Linearizability, RejectsEveryBadGoldenHistory) {
  const auto files = Golden("-bad.txt");
  ASSERT_GE(files.size(), 6u);
  model::StateRegisterModel m;
  for (const auto& f : files) {
    Verdict v = Checker<model::StateRegisterModel>(m).check(ParseRegisterHistory(Read(f)));
    EXPECT_FALSE(v.ok) << f.filename() << " accepted";
  }
}

TEST(Linearizability, ABrokenModelIsRejectedWhereTheRightOneIsAccepted) {
  // The broken model never bumps a version past 1: the ok history with versions 1 and 2 fails.
  const RegisterHistory h =
      ParseRegisterHistory(Read(TESTBED_SOURCE_DIR "/tests/histories/c03-ok.txt"));
  EXPECT_TRUE(Checker<model::StateRegisterModel>(model::StateRegisterModel(false)).check(h).ok);
  EXPECT_FALSE(Checker<model::StateRegisterModel>(model::StateRegisterModel(true)).check(h).ok);
}

TEST(Linearizability, HistoriesRoundTripThroughTheirTextForm) {
  for (const auto& f : Golden(".txt")) {
    const RegisterHistory h = ParseRegisterHistory(Read(f));
    std::string text;
    for (const auto& o : h) text += FormatRegisterOperation(o) + "\n";
    const RegisterHistory again = ParseRegisterHistory(text);
    ASSERT_EQ(again.size(), h.size()) << f.filename();
    for (size_t i = 0; i < h.size(); ++i)
      EXPECT_EQ(FormatRegisterOperation(again[i]), FormatRegisterOperation(h[i])) << f.filename();
  }
}

TEST(Linearizability, GeneratedLinearizableHistoriesAreAcceptedAndCorruptedOnesRejected) {
  model::StateRegisterModel m;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RegisterHistory h = GenerateLinearizable(
        harness::PrngDraws(seed),
        {.operations = 300, .keys = 3, .actors = 5, .max_duration_ms = 20, .ambiguous = {1, 10}});
    Verdict ok = Checker<model::StateRegisterModel>(m).check(h);
    EXPECT_TRUE(ok.ok && ok.complete) << "seed " << seed;
    // A read that reports a version nobody wrote can have no linearization.
    for (auto it = h.rbegin(); it != h.rend(); ++it)
      if (it->op.kind == model::RegisterOp::Kind::kGet && it->op.ok && !it->ambiguous) {
        it->op.out_version += 100;
        break;
      }
    EXPECT_FALSE(Checker<model::StateRegisterModel>(m).check(h).ok) << "seed " << seed;
  }
}

TEST(Linearizability, PinningWritesThatWereReadChangesNoVerdictAndPrunesTheSearch) {
  // An ambiguous set whose value a get returned at version 3 took effect as version 3 before
  // that get returned.
  const RegisterHistory h = ParseRegisterHistory(
      "1 1 ? 0 ? set value=a exp=100000 -> ?\n"
      "2 2 3 5 6 get -> value=a version=3\n"
      "3 4 ? 7 ? set value=b exp=100000 -> ?\n");
  const RegisterHistory pinned = PinObservedWrites(h);
  EXPECT_FALSE(pinned[0].ambiguous);
  EXPECT_EQ(pinned[0].op.out_version, 3);
  EXPECT_EQ(pinned[0].ret, 3);
  EXPECT_EQ(pinned[0].ret_ms, 6);
  EXPECT_TRUE(pinned[2].ambiguous) << "nobody read b";
  model::StateRegisterModel m;
  int64_t with = 0, without = 0;
  int compared = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    RegisterHistory g = GenerateLinearizable(
        harness::PrngDraws(seed),
        {.operations = 120, .keys = 2, .actors = 5, .max_duration_ms = 15, .ambiguous = {1, 6}});
    for (int corrupt = 0; corrupt < 2; ++corrupt) {
      if (corrupt) {  // a read reports a version nobody wrote, or a write one it cannot have
        for (auto it = g.rbegin(); it != g.rend(); ++it)
          if (!it->ambiguous && it->op.kind != model::RegisterOp::Kind::kDelete &&
              (it->op.kind != model::RegisterOp::Kind::kGet || it->op.ok)) {
            it->op.out_version += seed % 3 + 1;
            break;
          }
      }
      const Verdict plain = Checker<model::StateRegisterModel>(m, 2'000'000).check(g);
      const Verdict pin =
          Checker<model::StateRegisterModel>(m, 2'000'000).check(PinObservedWrites(g));
      ASSERT_TRUE(pin.complete || !plain.complete) << "seed " << seed;
      if (!plain.complete) continue;  // pinning may decide what the plain search cannot
      ++compared;
      EXPECT_EQ(plain.ok, pin.ok) << "seed " << seed << (corrupt ? ", corrupted" : "");
      EXPECT_EQ(plain.rejected, pin.rejected) << "seed " << seed;
      if (!corrupt) {
        EXPECT_TRUE(pin.ok) << "seed " << seed;
        with += pin.states_explored;
        without += plain.states_explored;
      }
    }
  }
  EXPECT_GE(compared, 40);
  EXPECT_LT(with, without) << "pinning prunes nothing";
  for (const auto& f : Golden(".txt")) {
    const RegisterHistory golden = ParseRegisterHistory(Read(f));
    EXPECT_EQ(Checker<model::StateRegisterModel>(m).check(golden).ok,
              Checker<model::StateRegisterModel>(m).check(PinObservedWrites(golden)).ok)
        << f.filename();
  }
}

TEST(Linearizability, MalformedHistoriesAreClearErrors) {
  EXPECT_THROW(ParseRegisterHistory("1 1 2 0 0 frob -> ok"), std::invalid_argument);
  EXPECT_THROW(ParseRegisterHistory("1 x 2 0 0 get -> null"), std::invalid_argument);
  EXPECT_THROW(ParseRegisterHistory("1 1 2 0 0 get null"), std::invalid_argument);
}

}  // namespace
}  // namespace testbed::checker
