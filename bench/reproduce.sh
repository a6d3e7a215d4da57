#!/usr/bin/env bash
# Runs the default suite N times in a row (5 unless given) from a clean
# checkout of the current commit, records the machine's load before and
# after each run, and compares the runs' verdicts: it exits 1 when two runs
# disagree on a verdict (one states a direction, another a different one or
# "no clear difference") or a run states a direction its 95% interval does
# not support. Run it when the machine is quiet; each run takes one to two
# minutes. The JSON of each run, its report, the load and the comparison go
# to DIR (a new temporary directory unless given).
#
#   bash bench/reproduce.sh [N [DIR]]
set -euo pipefail
n=${1:-5}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
root=$(git rev-parse --show-toplevel)
commit=$(git -C "$root" rev-parse --short HEAD)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive HEAD | tar -x -C "$tmp"
(cd "$tmp" && go build -o "$tmp/nxkv-bench" ./bench)
echo "reproduce: $n default runs of commit $commit into $out" >&2
for i in $(seq "$n"); do
  { date -u; uptime; top -b -n1 | head -15; } > "$out/load-$i.txt"
  "$tmp/nxkv-bench" -json "$out/run-$i.json" > "$out/out-$i.txt"
  { date -u; uptime; } >> "$out/load-$i.txt"
  echo "reproduce: run $i done: $(tail -n1 "$out/load-$i.txt")" >&2
done
set +e
"$tmp/nxkv-bench" -compare "$out"/run-*.json | tee "$out/compare.txt"
status=${PIPESTATUS[0]}
echo "reproduce: runs, loads and comparison in $out" >&2
exit "$status"
