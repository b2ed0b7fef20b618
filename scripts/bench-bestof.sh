#!/usr/bin/env bash
# A best-of's attempts judged at once, measured (docs/design.md, "Attempts
# judged at once"): one task tried N ways at once (attempts=N), a
# scripted agent that writes its file at once, and a verify check that
# sleeps CHECK (default 3 s) before it passes. Prints the loop's wall
# time, the time the attempts' judging took (from the first attempt's
# agent_end to the first attempt_judged record) and the cores. Writes only
# in its own temporary folder. N=2 sets the attempts; LOOPRINTER=path runs
# another build of looprinter (to compare with an older one).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-2}
CHECK=${CHECK:-3}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/looprinter-bench-bestof.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
if [[ -n ${LOOPRINTER:-} ]]; then
	cp "$LOOPRINTER" "$OUT/looprinter"
else
	go build -o "$OUT/looprinter" ./cmd/looprinter
fi
export PATH="$OUT:$PATH" LOOPRINTER_STATE_DIR="$OUT/state"
dir="$OUT/loop"
mkdir -p "$dir"
cat > "$dir/loop.yaml" <<YAML
objective: "out/a.txt exists"
agent: {backend: command, command: looprinter fake-agent --script agent.txt, timeout: 60s}
budget: {iterations: $N}
verify: ["sleep $CHECK; test -s out/a.txt"]
YAML
cat > "$dir/agent.txt" <<AGENT
== plan
plan T-001:out/a.txt:attempts=$N
== build
run mkdir -p out; echo "attempt \$LOOPRINTER_ATTEMPT" > out/a.txt; echo "T-001: done" >> output/progress.txt
mark
AGENT
t0=$(date +%s%N)
(cd "$dir" && looprinter run >"$OUT/run.txt" 2>&1) || { cat "$OUT/run.txt"; exit 1; }
t1=$(date +%s%N)
recs=$(cat "$dir"/working-records/*.jsonl)
ms() { date -d "$1" +%s%3N; }
first_end=$(grep '"event":"agent_end"' <<<"$recs" | grep '"phase":"build"' | head -1 | grep -o '"ts":"[^"]*"' | cut -d'"' -f4)
first_judged=$(grep '"event":"attempt_judged"' <<<"$recs" | head -1 | grep -o '"ts":"[^"]*"' | cut -d'"' -f4)
echo "== best of $N, a check of ${CHECK}s, $(nproc) cores (load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "wall-ms $(((t1 - t0) / 1000000)) judging-ms $(($(ms "$first_judged") - $(ms "$first_end")))"
