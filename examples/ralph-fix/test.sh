#!/bin/sh
# The verifier: exits 0 only when every case passes; prints one FAIL line per failing case.
cd "$(dirname "$0")"
fails=0
check() {
	got=$(./slugify.sh "$1")
	if [ "$got" = "$2" ]; then
		echo "ok   slugify '$1' = '$2'"
	else
		echo "FAIL slugify '$1' = '$got', want '$2'"
		fails=$((fails + 1))
	fi
}
check "hello world" "hello-world"
check "Hello World" "hello-world"
check "  many   spaces  " "many-spaces"
check "Rock & Roll!" "rock-roll"
check "v2.0 release" "v2-0-release"
[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
