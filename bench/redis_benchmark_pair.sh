#!/usr/bin/env bash
# redis-benchmark's default test set against `testbed serve` and against a redis-server, both
# spawned here on free loopback ports, one after the other in the same run: requests per second
# of each and serve's share of redis-server's, per test (docs/performance.md). Extra arguments go
# to redis-benchmark (e.g. -P 16 to pipeline).
#
# usage: bench/redis_benchmark_pair.sh TESTBED_CLI [REQUESTS] [redis-benchmark options...]
set -euo pipefail
testbed=$1
requests=${2:-100000}
shift $(($# >= 2 ? 2 : 1))
for tool in redis-server redis-benchmark redis-cli python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 2; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis-server.log" &
pids+=($!)
"$testbed" serve --port 0 >"$work/serve.out" 2>"$work/serve.err" &
pids+=($!)
serve_port=""
for _ in $(seq 100); do
  serve_port=$(sed -n 's/^listening: 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.out")
  [ -n "$serve_port" ] && [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ] && break
  sleep 0.05
done
[ -n "$serve_port" ] || { echo "testbed serve did not start: $(cat "$work/serve.err")" >&2; exit 1; }

# "test","rps",... per line; an error reply makes redis-benchmark print it.
bench() {  # port out
  local port=$1 out=$2
  redis-benchmark -p "$port" -n "$requests" --csv "${extra[@]}" >"$out" 2>"$out.err" || {
    echo "redis-benchmark failed on port $port: $(cat "$out.err")" >&2
    exit 1
  }
  if grep -q "^Error\|ERR" "$out.err" "$out"; then
    echo "an error reply on port $port:" >&2
    grep "^Error\|ERR" "$out.err" "$out" | head -5 >&2
    exit 1
  fi
}
extra=("$@")
bench "$serve_port" "$work/serve.csv"
bench "$redis_port" "$work/redis.csv"
python3 - "$work/serve.csv" "$work/redis.csv" <<'EOF'
import csv, sys
def rows(path):
    with open(path) as f:
        return {r[0]: float(r[1]) for r in csv.reader(f) if r and r[0] != "test"}
serve, redis = rows(sys.argv[1]), rows(sys.argv[2])
print(f"{'test':<38} {'serve rps':>12} {'redis rps':>12} {'share':>6}")
for test, rps in redis.items():
    s = serve.get(test)
    share = f"{s / rps:.2f}" if s else "-"
    print(f"{test:<38} {s or 0:>12.0f} {rps:>12.0f} {share:>6}")
EOF
