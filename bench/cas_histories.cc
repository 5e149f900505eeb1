// Writes the generated cas-register histories of the Porcupine comparison (bench/porcupine/
// compare.sh, docs/performance.md) into DIR, one Jepsen JSON file each, and prints their names:
//   testbed_cas_histories DIR [OPERATIONS]
// For 8, 16 and 32 processes, without and with info operations (2% of them), 5 seeds each, one
// linearizable history and one with a corrupted read. Values repeat (5 distinct ones), as in
// Knossos's and Porcupine's own register tests.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "checker/jepsen_history.h"
#include "harness/prng_draws.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: testbed_cas_histories DIR [OPERATIONS]\n");
    return 2;
  }
  const int operations = argc == 3 ? std::atoi(argv[2]) : 1000;
  if (operations <= 0) {
    std::fprintf(stderr, "OPERATIONS must be a positive number: %s\n", argv[2]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (int processes : {8, 16, 32})
    for (int info : {0, 20})
      for (int corrupt : {0, 1})
        for (uint64_t seed = 1; seed <= 5; ++seed) {
          const nlohmann::json h = testbed::checker::GenerateCasRegisterHistory(
              testbed::harness::PrngDraws(seed), {.processes = processes,
                                                  .operations = operations,
                                                  .values = 5,
                                                  .info_per_mille = info,
                                                  .corrupt = corrupt == 1});
          const std::string name = "p" + std::to_string(processes) + (info ? "-info" : "") +
                                   (corrupt ? "-corrupt" : "") + "-" + std::to_string(seed) +
                                   ".json";
          std::ofstream out(dir / name);
          out << h.dump() << "\n";
          if (!out) {
            std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
            return 2;
          }
          std::printf("%s\n", (dir / name).c_str());
        }
  return 0;
}
