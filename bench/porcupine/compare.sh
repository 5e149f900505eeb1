#!/bin/bash
# The checker side by side with Porcupine (issue 33) on the same generated cas-register
# histories: 8, 16 and 32 processes, without and with info operations, linearizable and with a
# corrupted read (bench/cas_histories.cc). Porcupine is read and built from a checkout outside
# the project, never copied in.
#   bench/porcupine/compare.sh BUILD_DIR PORCUPINE_CHECKOUT [OPERATIONS] [TIMEOUT_SECONDS]
# Needs Go (Debian's golang-go) and /usr/bin/time. Prints a Markdown table: per group, how many
# of its 10 histories each checker decided, their verdicts' agreement, the slowest time and the
# largest peak memory of one history.
set -euo pipefail
build=$(realpath "${1:?usage: compare.sh BUILD_DIR PORCUPINE_CHECKOUT [OPERATIONS] [TIMEOUT]}")
porcupine=$(realpath "${2:?usage: compare.sh BUILD_DIR PORCUPINE_CHECKOUT [OPERATIONS] [TIMEOUT]}")
operations=${3:-1000}
timeout=${4:-20}
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/main.go" "$here/go.mod" "$work/"
(cd "$work" && go mod edit -replace "github.com/anishathalye/porcupine=$porcupine" &&
  GOFLAGS=-mod=mod GOPROXY=off go build -o porcupine-check .)
"$build/testbed_cas_histories" "$work/h" "$operations" > "$work/files"
while read -r f; do
  name=$(basename "$f" .json)
  group=${name%-*}
  group=${group%-corrupt}
  /usr/bin/time -f "%e %M" -o "$work/t1" "$build/testbed" check-history "$f" > "$work/o1" || true
  ours=$(head -c 12 "$work/o1")
  case "$ours" in linearizabl*) ours=ok ;; not\ lineariz*) ours=illegal ;; *) ours=unknown ;; esac
  /usr/bin/time -f "%e %M" -o "$work/t2" "$work/porcupine-check" -timeout "${timeout}s" "$f" > "$work/o2" || true
  theirs=$(awk '{print $2}' "$work/o2")
  echo "$group $ours $(tail -1 "$work/t1") ${theirs:-crashed} $(tail -1 "$work/t2") $name"
done < "$work/files" > "$work/rows"
[ -n "${ROWS:-}" ] && cp "$work/rows" "$ROWS"
echo "$operations operations a history, Porcupine's timeout ${timeout} s"
echo
echo "| processes | info | testbed decided | testbed slowest | testbed peak | Porcupine decided | Porcupine slowest | Porcupine peak | verdicts differ |"
echo "|---|---|---|---|---|---|---|---|---|"
awk '{
  g=$1; n[g]++
  if ($2 != "unknown") d1[g]++
  if ($3 > t1[g]) t1[g]=$3
  if ($4 > m1[g]) m1[g]=$4
  if ($5 == "ok" || $5 == "illegal") d2[g]++
  if ($6 > t2[g]) t2[g]=$6
  if ($7 > m2[g]) m2[g]=$7
  if ($2 != "unknown" && ($5 == "ok" || $5 == "illegal") && $2 != $5) diff[g]++
  if (!(g in seen)) { seen[g]=1; order[++k]=g }
} END {
  for (i=1; i<=k; i++) { g=order[i]; p=g; sub(/^p/,"",p); info="no"; if (p ~ /-info/) { info="2%"; sub(/-info/,"",p) }
    printf "| %s | %s | %d of %d | %.2f s | %d MB | %d of %d | %.2f s | %d MB | %d |\n", p, info, d1[g], n[g], t1[g], m1[g]/1024, d2[g], n[g], t2[g], m2[g]/1024, diff[g] }
}' "$work/rows"
