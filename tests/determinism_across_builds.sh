#!/usr/bin/env bash
# The same seeds must trace the same in a Debug and a Release build: builds the testbed CLI in
# the other configuration and compares trace hashes of the simulation (every fault kind) and of
# the emulator-only fidelity run for three seeds.
# usage: determinism_across_builds.sh THIS_TESTBED SOURCE_DIR WORK_DIR THIS_BUILD_TYPE
set -euo pipefail
this=$1 src=$2 work=$3 type=${4:-RelWithDebInfo}
other=Debug; [ "$type" = "Debug" ] && other=Release
cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE="$other" >/dev/null
cmake --build "$work" --target testbed -j2 >/dev/null
fail=0
for seed in 1 2 3; do
  for cmd in "sim --seed $seed --faults all --actors 3 --increments 10" \
             "fidelity --redis none --seed $seed --commands 3000"; do
    a=$("$this" $cmd | grep '^trace-hash:' || true)
    b=$("$work/testbed" $cmd | grep '^trace-hash:' || true)
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
      echo "DIFFERENT: testbed $cmd: $type '$a' vs $other '$b'"; fail=1
    else
      echo "same: testbed $cmd: $a"
    fi
  done
done
exit $fail
