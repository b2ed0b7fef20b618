#!/usr/bin/env bash
# Parallel build runs, measured (docs/design.md, "Build runs at once"):
# a scripted agent that sleeps 2 s per build, a plan of 6 tasks in 3
# independent pairs (T-002 after T-001, T-004 after T-003, T-006 after
# T-005), run with parallel: 1 and parallel: 3 under the default sandbox.
# Prints the wall time of each, the sum of the build runs' times (from the
# records), the speed-up, and the engine's overhead per build run (wall
# time less the agent's sleeps that could not overlap, over the runs). Writes only in its
# own temporary folder. SLEEP=2s sets the agent's sleep per build.
# CHECK_SLEEP=2 (seconds; 0, the default: none) makes the verify check
# sleep that long and judges each task with it (git.rollback: task, in a
# repository of the loop's own), so that judging a wave's runs counts.
# RESERVE=1 (USD) sets the agent's max_budget_usd. Either way the first
# wave is full: the agent is a command agent, whose runs the engine stops
# at their cost cap (each at its share of the cost budget), so no reserve
# is wagered (docs/loop-file.md, "parallel").
set -euo pipefail
cd "$(dirname "$0")/.."
SLEEP=${SLEEP:-2s}
CHECK_SLEEP=${CHECK_SLEEP:-0}
RESERVE=${RESERVE:-}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/looprinter-bench-parallel.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
go build -o "$OUT/looprinter" ./cmd/looprinter
export PATH="$OUT:$PATH" LOOPRINTER_STATE_DIR="$OUT/state"

run() { # run N: one loop with parallel: N; prints "N wall-ms runs-sum-ms runs" or the refusal
	local n=$1 dir="$OUT/p$1"
	mkdir -p "$dir"
	cat > "$dir/loop.yaml" <<YAML
objective: "six files exist under out/"
agent: {backend: command, command: looprinter fake-agent --script agent.txt, timeout: 60s}
parallel: $n
budget: {iterations: 12}
verify: ["test -s out/1.txt -a -s out/2.txt -a -s out/3.txt -a -s out/4.txt -a -s out/5.txt -a -s out/6.txt"]
YAML
	if [[ -n $RESERVE ]]; then
		sed -i "s|timeout: 60s}|timeout: 60s, max_budget_usd: $RESERVE}|" "$dir/loop.yaml"
	fi
	if [[ $CHECK_SLEEP != 0 ]]; then
		sed -i 's|^verify: .*|verify: [sh check.sh]\ngit: {rollback: task}|' "$dir/loop.yaml"
		printf 'sleep %s\ntest -s out/1.txt -a -s out/2.txt -a -s out/3.txt -a -s out/4.txt -a -s out/5.txt -a -s out/6.txt\n' "$CHECK_SLEEP" >"$dir/check.sh"
		printf 'working-records/\nagent.txt\nloop.yaml\n' >"$dir/.gitignore"
		(cd "$dir" && git init -q && git add -A && git -c user.name=bench -c user.email=bench@example.com commit -qm start)
	fi
	cat > "$dir/agent.txt" <<AGENT
== plan
plan T-001:out/1.txt T-002:out/2.txt:after=T-001 T-003:out/3.txt T-004:out/4.txt:after=T-003 T-005:out/5.txt T-006:out/6.txt:after=T-005
== build
sleep $SLEEP
auto
AGENT
	if ! (cd "$dir" && looprinter validate >"$OUT/validate-$n.txt" 2>&1); then
		echo "parallel: $n refused: $(grep -o 'parallel: .*' "$OUT/validate-$n.txt" | head -1)"
		return 0
	fi
	local t0 t1
	t0=$(date +%s%N)
	(cd "$dir" && looprinter run >"$OUT/run-$n.txt" 2>&1) || { cat "$OUT/run-$n.txt"; exit 1; }
	t1=$(date +%s%N)
	local sum runs
	sum=$(cat "$dir"/working-records/*.jsonl | grep '"event":"agent_end"' | grep '"phase":"build"' | grep -o '"duration_ms":[0-9]*' | cut -d: -f2 | awk '{s += $1} END {print s + 0}')
	runs=$(cat "$dir"/working-records/*.jsonl | grep '"event":"agent_end"' | grep -c '"phase":"build"')
	echo "$n $(((t1 - t0) / 1000000)) $sum $runs"
}

one=$(run 1)
three=$(run 3)
echo "== Parallel build runs: 6 tasks in 3 pairs, the agent sleeps $SLEEP per build, the check ${CHECK_SLEEP}s, max_budget_usd ${RESERVE:-unset} (load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-9s %10s %14s %6s\n' parallel wall-ms build-runs-ms runs
for r in "$one" "$three"; do
	case $r in
	"parallel:"*) echo "$r" ;;
	*) printf '%-9s %10s %14s %6s\n' $r ;;
	esac
done
if [[ $three != "parallel:"* ]]; then
	# The agent's sleeps the wall time cannot be shorter than: 6 one after
	# the other at parallel: 1, 2 waves of 3 at parallel: 3. What is left,
	# over the 6 build runs, is the engine's overhead per run (the plan
	# run and the gates included).
	ms=$(awk -v s="$SLEEP" 'BEGIN {sub(/s$/, "", s); print s * 1000}')
	awk -v a="${one#* }" -v b="${three#* }" -v ms="$ms" 'BEGIN {split(a, x, " "); split(b, y, " ");
		printf "speed-up: %.2fx (goal: 2.5x or more)\n", x[1] / y[1];
		o1 = (x[1] - 6 * ms) / 6; o3 = (y[1] - 2 * ms) / 6;
		printf "engine overhead per build run: %.0f ms at parallel: 1, %.0f ms at parallel: 3 (%.2fx; goal: within 2x)\n", o1, o3, o3 / o1}'
fi
