#!/usr/bin/env bash
# The same seeds must run the same in a Debug and a Release build: builds the testbed CLI in
# the other configuration and compares, for three seeds, the whole stdout of a check of each
# system under every fault kind (verdicts, minimized counterexamples, their Redis calls) and the
# trace hash of the emulator-only fidelity run.
# usage: determinism_across_builds.sh THIS_TESTBED SOURCE_DIR WORK_DIR THIS_BUILD_TYPE
set -euo pipefail
this=$1 src=$2 work=$3 type=${4:-RelWithDebInfo}
other=Debug; [ "$type" = "Debug" ] && other=Release
# Without debug information: it changes no code, and the build is the test's main cost.
flags=(); [ "$other" = Debug ] && flags=(-DCMAKE_CXX_FLAGS_DEBUG="-O0 -g0" -DCMAKE_C_FLAGS_DEBUG="-O0 -g0")
cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE="$other" "${flags[@]}" >/dev/null
cmake --build "$work" --target testbed -j2 >/dev/null
fail=0
for seed in 1 2 3; do
  for cmd in "check --system state --seed $seed --runs 2 --faults all --quiet --jobs 2" \
             "check --system handles --seed $seed --runs 2 --faults all --quiet --jobs 2" \
             "check --system a2 --seed $seed --runs 2 --faults all --quiet --jobs 2"; do
    # check exits 1 on a violation: the outputs are compared, not the exit codes.
    out_a=$("$this" $cmd || true) out_b=$("$work/testbed" $cmd || true)
    a=$(sha256sum <<<"$out_a") b=$(sha256sum <<<"$out_b")
    lines=$(wc -l <<<"$out_a")
    if [ "$lines" -lt 10 ] || [ "$a" != "$b" ]; then
      echo "DIFFERENT: testbed $cmd: $type $a vs $other $b ($lines lines)"; fail=1
    else
      echo "same: testbed $cmd: $lines lines"
    fi
  done
  cmd="fidelity --redis none --seed $seed --commands 3000"
  a=$("$this" $cmd | grep '^trace-hash:' || true)
  b=$("$work/testbed" $cmd | grep '^trace-hash:' || true)
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "DIFFERENT: testbed $cmd: $type '$a' vs $other '$b'"; fail=1
  else
    echo "same: testbed $cmd: $a"
  fi
done
exit $fail
