#!/bin/sh
# Cycle gate: wc.sh is valid sh and still counts words.
cd "$(dirname "$0")/.."
sh -n wc.sh || { echo "FAIL wc.sh has a syntax error"; exit 1; }
got=$(printf 'a b c\n' | ./wc.sh /dev/stdin) || { echo "FAIL wc.sh FILE exited non-zero"; exit 1; }
[ "$got" = 3 ] || { echo "FAIL wc.sh FILE printed '$got' for 'a b c', want 3"; exit 1; }
echo "ok wc.sh counts words"
