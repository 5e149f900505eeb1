// The testbed CLI with the toy counter system registered: its one registry line is below.
#include "cmd/cli.h"
#include "tests/toy/toy_system.h"

int main(int argc, char** argv) {
  testbed::props::RegisterSystem(testbed::toy::MakeCounterSystem());
  return testbed::cli::Main(argc, argv);
}
