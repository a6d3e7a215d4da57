#!/usr/bin/env bash
# Regenerates BENCHMARKS.md, its charts (bench/results/*.svg), every figure
# (bench/results/latest.json) and the README's figures (between its
# bench:begin and bench:end markers) from one full run of the suite on a
# clean checkout of the current commit, so that no uncommitted work is
# measured. Run it from anywhere in the repository when the machine is
# quiet; it takes about 10 minutes and starts its own redis-server if one is
# on PATH. bench/docs_test.go checks that the documents match the JSON.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
commit=$(git -C "$root" rev-parse --short HEAD)
if [ -n "$(git -C "$root" status --porcelain)" ]; then
  echo "regenerate: the work tree has uncommitted changes; measuring commit $commit without them" >&2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive HEAD | tar -x -C "$tmp"
cd "$tmp"
rm -f bench/results/*.svg
go run ./bench -full -json bench/results/latest.json -svg bench/results -md BENCHMARKS.md \
  -label "from a clean checkout of commit $commit"
mkdir -p "$root/bench/results"
rm -f "$root"/bench/results/*.svg
cp BENCHMARKS.md "$root/BENCHMARKS.md"
cp bench/results/*.svg bench/results/latest.json "$root/bench/results/"
# The README's figures, rendered from the same results by this commit's code.
go run ./bench -from bench/results/latest.json -readme "$root/README.md"
echo "regenerate: wrote BENCHMARKS.md, bench/results/ and the README's figures from commit $commit" >&2
