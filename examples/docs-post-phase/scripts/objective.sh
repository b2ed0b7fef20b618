#!/bin/sh
# Objective gate: exits 0 only when wc.sh counts words by default and lines with --lines.
cd "$(dirname "$0")/.."
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
printf 'one two three\nfour five\n' > "$tmp"
words=$(./wc.sh "$tmp") || { echo "FAIL wc.sh FILE exited non-zero"; exit 1; }
[ "$words" = 5 ] || { echo "FAIL wc.sh FILE printed '$words', want 5"; exit 1; }
lines=$(./wc.sh --lines "$tmp") || { echo "FAIL wc.sh --lines FILE exited non-zero"; exit 1; }
[ "$lines" = 2 ] || { echo "FAIL wc.sh --lines FILE printed '$lines', want 2"; exit 1; }
echo "ok wc.sh counts words and lines"
