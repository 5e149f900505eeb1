#!/usr/bin/env bash
# Redis 7.0.15's own Tcl units as the gate of `testbed serve`: each unit named runs against a
# spawned redis-server 7.0.15 and against a spawned `testbed serve`, both on free loopback ports,
# with Redis's own harness (test_helper.tcl --host --port, --durable so that one test's error does
# not end its unit; --tags -slow -resp3 on both servers: the fuzzers and stress tests tagged slow
# take minutes on redis-server alone, and RESP3 is a deviation serve states, docs/serve.md). Every test that passes on redis-server must pass on serve, or be listed in
# exceptions.txt (beside this script) with its reason; a listed test that passes on serve now is
# stale and fails the gate too, so the list only shrinks. Prints a line per unit:
#   unit/multi: redis-server 60 passed, serve 58 passed, 2 listed exceptions
#
# usage: gate.sh TESTBED_CLI SUITE_DIR UNIT...   (SUITE_DIR holds Redis's tests/; .ci/install
# fetches it into .ci/cache/redis-7.0.15)
set -euo pipefail
testbed=$1
suite=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
exceptions="$here/exceptions.txt"
if [ ! -f "$suite/tests/test_helper.tcl" ]; then
  echo "no Redis test suite at $suite (bash .ci/install fetches it)" >&2
  exit 2
fi
command -v tclsh >/dev/null || { echo "tclsh is missing (bash .ci/install installs tcl)" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "redis-server is missing" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# The harness writes under ./tests/tmp: it runs in a copy of the suite, in this run's directory.
mkdir -p "$work/redis"
cp -r "$suite/tests" "$work/redis/tests"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for_ping() {  # port
  for _ in $(seq 100); do
    if [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ]; then return 0; fi
    sleep 0.05
  done
  echo "nothing answers on port $1" >&2
  return 1
}

start_redis() {
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --enable-debug-command yes --dir "$work" --logfile "$work/redis-server.log" &
  pids+=($!)
  wait_for_ping "$redis_port"
}

start_serve() {
  "$testbed" serve --port 0 >"$work/serve.out" 2>"$work/serve.err" &
  pids+=($!)
  for _ in $(seq 100); do
    serve_port=$(sed -n 's/^listening: 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.out")
    [ -n "$serve_port" ] && break
    sleep 0.05
  done
  [ -n "$serve_port" ] || { echo "testbed serve did not start: $(cat "$work/serve.err")" >&2; exit 1; }
  wait_for_ping "$serve_port"
}

# The names of the tests that passed, one per line ("[ok]: NAME (N ms)"), a repeated name
# numbered by its occurrence.
passed() {  # port unit out
  (cd "$work/redis" && timeout 1200 tclsh tests/test_helper.tcl --host 127.0.0.1 --port "$1" \
    --single "$2" --clients 1 --durable --timeout 300 --tags -slow --tags -resp3 >"$3.log" 2>&1) ||
    true
  sed 's/\x1b\[[0-9;]*m//g' "$3.log" | sed -n 's/^\[ok\]: \(.*\) ([0-9]* ms)$/\1/p' |
    awk '{ n[$0]++; print (n[$0] > 1 ? $0 " #" n[$0] : $0) }' | LC_ALL=C sort >"$3"
}

start_redis
start_serve
status=0
for unit in "$@"; do
  out="$work/$(echo "$unit" | tr / _)"
  passed "$redis_port" "$unit" "$out.redis"
  passed "$serve_port" "$unit" "$out.serve"
  if ! kill -0 "${pids[1]}" 2>/dev/null; then
    echo "$unit: testbed serve died; its stderr:" >&2
    cat "$work/serve.err" >&2
    exit 1
  fi
  if [ ! -s "$out.redis" ]; then
    echo "$unit: no test passed on redis-server; its log ends:" >&2
    tail -20 "$out.redis.log" >&2
    exit 1
  fi
  # unit | name | reason, for this unit.
  grep -v "^#" "$exceptions" | awk -F " [|] " -v u="$unit" '$1 == u { print $2 }' | LC_ALL=C sort >"$out.listed"
  LC_ALL=C comm -23 "$out.redis" "$out.serve" >"$out.missing"
  LC_ALL=C comm -23 "$out.missing" "$out.listed" >"$out.unlisted"
  LC_ALL=C comm -12 "$out.listed" "$out.serve" >"$out.stale"
  echo "$unit: redis-server $(wc -l <"$out.redis") passed, serve $(wc -l <"$out.serve") passed," \
    "$(wc -l <"$out.listed") listed exceptions"
  if [ -s "$out.unlisted" ]; then
    status=1
    echo "  passes on redis-server, not on serve, and is not in exceptions.txt:"
    sed 's/^/    /' "$out.unlisted"
    # The first failures serve's log gives, to say why.
    sed 's/\x1b\[[0-9;]*m//g' "$out.serve.log" | grep -A3 '^\[err\]' | head -40 | sed 's/^/    | /'
  fi
  if [ -s "$out.stale" ]; then
    status=1
    echo "  listed in exceptions.txt but passes on serve now (remove it):"
    sed 's/^/    /' "$out.stale"
  fi
done
exit $status
