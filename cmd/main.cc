// testbed: the one CLI (cmd/cli.h). Prints its seed first; exit codes 0 = no violation,
// 1 = violation (divergence) found, 2 = usage or setup error.
#include "cmd/cli.h"

int main(int argc, char** argv) { return testbed::cli::Main(argc, argv); }
