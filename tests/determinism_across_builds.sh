#!/usr/bin/env bash
# The same seeds must run the same in a Debug and a Release build: builds the testbed CLI in
# the other configuration and compares, for three seeds, the whole stdout of a check of each
# system under every fault kind (verdicts, minimized counterexamples, their Redis calls) and the
# trace hash of the emulator-only fidelity run.
# usage: determinism_across_builds.sh THIS_TESTBED SOURCE_DIR WORK_DIR THIS_BUILD_TYPE
#        determinism_across_builds.sh THIS_TESTBED --other OTHER_TESTBED
# The second form compares with a CLI already built another way (CI: the sanitized build, at
# -O1 with AddressSanitizer's allocator where this one is -O2 with tcmalloc), instead of
# building one.
set -euo pipefail
this=$1
if [ "${2:-}" = "--other" ]; then
  other_cli=$3 type="this build" other="the other build"
else
  src=$2 work=$3 type=${4:-RelWithDebInfo}
  other=Debug; [ "$type" = "Debug" ] && other=Release
  # Without debug information: it changes no code, and the build is the test's main cost.
  flags=(); [ "$other" = Debug ] && flags=(-DCMAKE_CXX_FLAGS_DEBUG="-O0 -g0" -DCMAKE_C_FLAGS_DEBUG="-O0 -g0")
  cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE="$other" "${flags[@]}" >/dev/null
  cmake --build "$work" --target testbed -j2 >/dev/null
  other_cli=$work/testbed
fi
[ -x "$other_cli" ] || { echo "determinism_across_builds.sh: no CLI at $other_cli" >&2; exit 2; }
fail=0
for seed in 1 2 3; do
  for cmd in "check --system state --seed $seed --runs 2 --faults all --quiet --jobs 2" \
             "check --system handles --seed $seed --runs 2 --faults all --quiet --jobs 2" \
             "check --system a2 --seed $seed --runs 2 --faults all --quiet --jobs 2"; do
    # check exits 1 on a violation: the outputs are compared, not the exit codes.
    out_a=$("$this" $cmd || true) out_b=$("$other_cli" $cmd || true)
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
  b=$("$other_cli" $cmd | grep '^trace-hash:' || true)
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "DIFFERENT: testbed $cmd: $type '$a' vs $other '$b'"; fail=1
  else
    echo "same: testbed $cmd: $a"
  fi
done
exit $fail
