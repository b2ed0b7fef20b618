#!/bin/sh
# wc.sh [--lines] FILE: counts the words of FILE (with --lines: its lines).
if [ "$#" -ne 1 ]; then
	echo "usage: wc.sh FILE" >&2
	exit 2
fi
wc -w < "$1" | tr -d ' '
