#!/bin/sh
# scale-loops.sh [N] [SECONDS]: start N loops at once (default 50) with the
# built-in fake agent, then measure, while they all run:
#   - `looprinter status` over all of them (wall time, 10 runs),
#   - each engine process's CPU (over SECONDS, default 10) and memory (RSS),
#   - the fake agents' CPU and memory, apart,
# then stop them all cleanly and report how long that took.
# Everything lives in a temporary directory; nothing else is touched.
set -eu
N=${1:-50}
WINDOW=${2:-10}
ROOT=$(mktemp -d "${TMPDIR:-/tmp}/looprinter-scale.XXXXXX")
BIN="$ROOT/bin"
mkdir -p "$BIN"
cd "$(dirname "$0")/.."
go build -o "$BIN/looprinter" ./cmd/looprinter
# The registry, logs and engine folders go to $ROOT too, whatever the
# caller's LOOPRINTER_STATE_DIR says.
export PATH="$BIN:$PATH" XDG_STATE_HOME="$ROOT/state" LOOPRINTER_STATE_DIR="$ROOT/state/looprinter"
HZ=$(getconf CLK_TCK)
now_ms() { date +%s%3N; }

for i in $(seq -w 1 "$N"); do
	d="$ROOT/loops/l$i"
	mkdir -p "$d"
	cat > "$d/loop.yaml" <<YAML
version: 1
name: l$i
objective: "ten files exist"
agent:
  backend: command
  command: looprinter fake-agent --script agent.txt
  timeout: 5m
  grace: 1s
verify: ["test -s f10.txt"]
objective_verify: ["test -s f10.txt"]
YAML
	PAUSE=$((5000 + (${i#0} % 7) * 250))
	cat > "$d/agent.txt" <<AGENT
== plan
plan T-001:f01.txt T-002:f02.txt T-003:f03.txt T-004:f04.txt T-005:f05.txt T-006:f06.txt T-007:f07.txt T-008:f08.txt T-009:f09.txt T-010:f10.txt
== build
sleep ${PAUSE}ms
do
AGENT
done

t0=$(now_ms)
for i in $(seq -w 1 "$N"); do
	looprinter start -f "$ROOT/loops/l$i/loop.yaml" >/dev/null 2>&1
done
t1=$(now_ms)
echo "started $N loops in $((t1 - t0)) ms ($(( (t1 - t0) / N )) ms each, sequentially)"
sleep 2
running=$(looprinter status | grep -c ' running ' || true)
echo "running now: $running of $N"

# status over all loops, 10 times.
times=""
for k in $(seq 1 10); do
	a=$(now_ms)
	looprinter status >/dev/null
	b=$(now_ms)
	times="$times $((b - a))"
done
echo "looprinter status over $N loops, ms per run:$times"
echo "$times" | tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {printf "  min %d ms, median %d ms, max %d ms\n", v[1], v[int((NR+1)/2)], v[NR]}'
a=$(now_ms); looprinter status --json >/dev/null; b=$(now_ms)
echo "looprinter status --json over $N loops: $((b - a)) ms"

# CPU and memory: engines (the lock holders) and, apart, everything else
# in their sessions (fake agents and their shells). One pass over /proc.
set +e
engines=""
for i in $(seq -w 1 "$N"); do
	p=$(cat "$ROOT/loops/l$i/working-records/lock" 2>/dev/null)
	[ -n "$p" ] && engines="$engines $p"
done
snap() { # one line per live engine: E pid ticks rss_pages child_ticks; then one: A agent_rss_pages agent_count
	# child_ticks: the CPU of the agents the engine has waited for
	# (cutime+cstime), so agents that come and go count.
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v eng="$engines" '
		BEGIN { n = split(eng, e, " "); for (i = 1; i <= n; i++) isE[e[i]] = 1 }
		{ pid = $1; sub(/^.*\) /, ""); sid = $4; st = $1
		  if (pid in isE && st != "Z") printf "E %s %d %d %d\n", pid, $12 + $13, $22, $14 + $15
		  else if (sid in isE) { ar += $22; ac++ } }
		END { printf "A %d %d\n", ar, ac }'
}
PAGE=$(getconf PAGESIZE)
snap > "$ROOT/snap0"
sleep "$WINDOW"
snap > "$ROOT/snap1"
# Per engine: only the engines running at both ends of the window count
# (a loop that finished meanwhile has no engine left to measure), and the
# sums are divided by their number, never by the loops started.
awk -v hz="$HZ" -v w="$WINDOW" -v pg="$PAGE" -v started="$N" '
	FNR == NR { if ($1 == "E") { t0[$2] = $3; c0[$2] = $5 } ; next }
	$1 == "E" && ($2 in t0) { n++; d += $3 - t0[$2]; rss += $4; cd += $5 - c0[$2] }
	$1 == "A" { arss = $2; ac = $3 }
	END {
		if (n == 0) { print "engines: none ran through the whole window"; exit }
		printf "engines: %d of %d still running; CPU %.2f%% of one core each on average (%.1f%% all together) over %ds; RSS %.1f MB each, %.0f MB all together\n",
			n, started, 100*d/hz/w/n, 100*d/hz/w, w, rss*pg/1048576/n, rss*pg/1048576
		printf "fake agents (not the engine): %d alive at the end; CPU %.1f%% of one core all together (agent runs that ended in the window); RSS %.0f MB all together\n",
			ac, 100*cd/hz/w, arss*pg/1048576
	}' "$ROOT/snap0" "$ROOT/snap1"
# Memory an engine costs on its own: RSS counts the binary's pages, which
# the page cache holds once for every engine; PSS shares them out, and
# private memory is what each engine adds. Over the engines still running,
# divided by their number.
alive=$(awk '$1 == "E" {print $2}' "$ROOT/snap1")
n_alive=$(echo $alive | wc -w)
for p in $alive; do cat "/proc/$p/smaps_rollup" 2>/dev/null; done | awk -v n="$n_alive" '
	/^Pss:/ { pss += $2 } /^Private_(Clean|Dirty):/ { priv += $2 }
	END { if (n == 0) exit; printf "engines: PSS %.1f MB each, private %.1f MB each (%.0f MB private all together)\n", pss/1024/n, priv/1024/n, priv/1024 }'
# status again, under the same load, with its own CPU time.
for k in 1 2 3; do
	/usr/bin/time -f "looprinter status: %e s wall, %U s user, %S s system, %M kB max RSS" looprinter status >/dev/null
done
uptime

t0=$(now_ms)
for i in $(seq -w 1 "$N"); do
	( looprinter stop "l$i" >"$ROOT/stop-$i.out" 2>&1 || echo "stop l$i: exit $?: $(cat "$ROOT/stop-$i.out")" >>"$ROOT/stop-failed" ) &
done
wait
t1=$(now_ms)
left=$(looprinter status | grep -c ' running ' || true)
failed=$(cat "$ROOT/stop-failed" 2>/dev/null | wc -l)
echo "stopped $N loops at once in $((t1 - t0)) ms; stop failed for $failed; still running: $left"
cat "$ROOT/stop-failed" 2>/dev/null
looprinter list | awk 'NR>1 {print $2, $3}' | sort | uniq -c
# Never leave engines behind: stop what is left at once before removing.
if [ "$left" -gt 0 ]; then
	for i in $(seq -w 1 "$N"); do looprinter stop --now "l$i" >/dev/null 2>&1; done
fi
rm -rf "$ROOT"
[ "$failed" -eq 0 ] && [ "$left" -eq 0 ]
