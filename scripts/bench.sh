#!/usr/bin/env bash
# Engine benchmarks (the numbers are in docs/design.md, "The cost of an
# iteration"), ending with one table:
#   - per checkout size (empty, 10,000 and 100,000 generated files; writing
#     the 100,000 takes a minute or more): the engine's CPU per build
#     iteration, its overhead (median), a whole iteration (median), the
#     floor (one fork/exec of the same no-op agent and one synced line, in
#     the same folder), the engine above the floor, and a bash loop doing a
#     template loop.sh's per-iteration steps in the same folder (not at
#     100,000 files), with the ratios;
#   - an iteration whose agent changed K = 1 … 10,000 files of a 100,000-file
#     checkout, under the default sandbox, Landlock and off (CHANGED_ITER=N
#     runs each, default 3);
#   - status NAME, logs -n 20 and cost on a loop with 10,000 iterations of
#     records (target: under 20 ms each);
#   - peak RSS while an agent floods 1 GiB of output (target: < 50 MB);
#   - the confined floor: an agent's start under the default sandbox, CPU
#     above bare bubblewrap (target: 5 ms), the engine's binary and the
#     small helper (cmd/looprinter-sandbox) as the helper.
# Every benchmark writes only in its own temporary folders (its loop
# folders, and LOOPRINTER_STATE_DIR for the registry and engine folders).
# ITER=N sets the build iterations per size (default 100).
set -euo pipefail
cd "$(dirname "$0")/.."
ITER=${ITER:-100}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/looprinter-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
t0=$(date +%s)
step() { echo "[$(($(date +%s) - t0))s, load $(load)] $*" >&2; }

step "build iterations, empty folder"
go test ./loop -run '^$' -bench 'BuildIteration/files=0$' -benchtime "${ITER}x" -count 1 -timeout 30m | tee -a "$OUT/iter.txt"
echo "load $(load)" >> "$OUT/iter.txt"
step "build iterations, 10,000 files (generated first)"
go test ./loop -run '^$' -bench 'BuildIteration/files=10000$' -benchtime "${ITER}x" -count 1 -timeout 30m | tee -a "$OUT/iter.txt"
echo "load $(load)" >> "$OUT/iter.txt"
step "build iterations, 100,000 files (generating them takes a minute or more)"
go test ./loop -run '^$' -bench 'BuildIteration/files=100000$' -benchtime "${ITER}x" -count 1 -timeout 30m | tee -a "$OUT/iter.txt"
echo "load $(load)" >> "$OUT/iter.txt"
step "agent start under the default sandbox at 0, 1,000 and 10,000 protected files"
go test ./sandbox -run '^$' -bench 'AgentStart' -benchtime 20x -count 1 -timeout 30m | tee "$OUT/start.txt"
echo "load $(load)" >> "$OUT/start.txt"
step "the confined floor: an agent's start under the default sandbox above bare bubblewrap (CPU), with this test binary, the engine's and the small helper as the helper"
mkdir -p "$OUT/bin"
go build -o "$OUT/bin/looprinter" ./cmd/looprinter
go build -o "$OUT/bin/looprinter-sandbox" ./cmd/looprinter-sandbox
LOOPRINTER_BENCH_HELPER="$OUT/bin/looprinter:$OUT/bin/looprinter-sandbox" go test ./sandbox -run '^$' -bench 'ConfinedFloor' -benchtime 50x -count 1 -timeout 30m | tee "$OUT/floor.txt"
echo "load $(load)" >> "$OUT/floor.txt"
step "build iterations under the default sandbox: empty, 10,000 and 100,000 files, a 50,000-file git checkout"
go test ./loop -run '^$' -bench 'BuildIterationSandbox' -benchtime "${ITER}x" -count 1 -timeout 60m | tee "$OUT/iter-sandbox.txt"
echo "load $(load)" >> "$OUT/iter-sandbox.txt"
step "the engine against the template's loop: CPU of the whole process tree per build iteration, default sandbox (the small helper beside the binary, as go install ./cmd/... leaves it), empty, 10,000 and 100,000 files (goal: 8x)"
go test -c -o "$OUT/bin/loop.test" ./loop
(cd loop && "$OUT/bin/loop.test" -test.run '^$' -test.bench 'TemplateCPU' -test.benchtime "${TEMPLATE_ITER:-50}x" -test.count 1 -test.timeout 60m) | tee "$OUT/template.txt"
echo "load $(load)" >> "$OUT/template.txt"
step "many changed files in one run: K = 1, 100, 1,000, 10,000 of 100,000 files, under the default sandbox, Landlock and off"
go test ./loop -run '^$' -bench 'IterationChanged' -benchtime "${CHANGED_ITER:-3}x" -count 1 -timeout 90m | tee "$OUT/changed.txt"
echo "load $(load)" >> "$OUT/changed.txt"
step "the clean room: the set-aside list at 10,000 files, a view's start"
go test ./loop -run '^$' -bench 'SetAside' -benchtime 5x -benchmem -count 1 | tee "$OUT/cleanroom.txt"
go test ./sandbox -run '^$' -bench 'ViewStart' -benchtime 20x -count 1 | tee -a "$OUT/cleanroom.txt"
echo "load $(load)" >> "$OUT/cleanroom.txt"
step "a check in the judge's sandbox: true and go test of a tiny package, off, bwrap, landlock, at 0 and 10,000 files"
go test ./sandbox -run '^$' -bench 'CheckBox' -benchtime 20x -count 1 -timeout 30m | tee "$OUT/checkbox.txt"
echo "load $(load)" >> "$OUT/checkbox.txt"
step "a gate of 6 checks in one check box: CPU per check (the engine's and its children's), in the box and under sandbox: off, interleaved"
go test ./sandbox -run '^$' -bench 'GateCPU' -benchtime 20x -count 3 -timeout 30m | tee "$OUT/gate.txt"
step "a loop of 5 gates of 6 checks, the check box's server kept between gates: CPU per check, in the box and under sandbox: off, interleaved"
go test ./sandbox -run '^$' -bench 'LoopGatesCPU' -benchtime 20x -count 3 -timeout 30m | tee -a "$OUT/gate.txt"
echo "load $(load)" >> "$OUT/gate.txt"
step "checks that start warm: go test with the user's Go build cache empty, without and with the loop's cache layer, against a warm user cache (a cold check compiles the standard library: minutes under load); then a Python, a jest and a Rust check, cold, with the layer and bare"
go test ./sandbox -run '^$' -bench 'CheckCache' -benchtime "${CACHE_ITER:-3}x" -count 1 -timeout 60m | tee "$OUT/checkcache.txt"
echo "load $(load)" >> "$OUT/checkcache.txt"
step "a verify_strength pass on a 20-line Python change: 40 mutants under the default sandbox, then the same pass under sandbox: off"
go test ./judge -run '^$' -bench 'StrengthPass20Lines' -benchtime 1x -count 1 -timeout 30m | tee "$OUT/strength.txt"
STRENGTH_BENCH_SANDBOX=off go test ./judge -run '^$' -bench 'StrengthPass20Lines' -benchtime 1x -count 1 -timeout 30m | tee -a "$OUT/strength.txt"
echo "load $(load)" >> "$OUT/strength.txt"
step "a commit in a 50,000-file checkout: staged by name, staged by a scan; a build iteration there with commits on and off (default sandbox)"
go test ./internal/gitops -run '^$' -bench '^BenchmarkCommit$' -benchtime 10x -count 1 -timeout 30m | tee "$OUT/commit.txt"
go test ./internal/gitops -run '^$' -bench 'IterationCommits' -benchtime 40x -count 1 -timeout 30m | tee -a "$OUT/commit.txt"
echo "load $(load)" >> "$OUT/commit.txt"
step "status, logs -n 20, cost at 10,000 iterations of records"
go test ./internal/cli -run '^$' -bench 'ReadsAt10000Iterations' -benchtime 20x -count 1 | tee "$OUT/reads.txt"
go test ./internal/cli -run '^$' -bench 'ReportSince' -benchtime 50x -count 1 -timeout 30m | tee -a "$OUT/reads.txt"
echo "load $(load)" >> "$OUT/reads.txt"
step "peak memory while an agent prints 1 GiB"
go test ./internal/cli -run '^$' -bench 'FloodPeakRSS/(lines|no-newlines|json)$' -benchtime 1x -count 1 -timeout 30m | tee "$OUT/flood.txt"
echo "load $(load)" >> "$OUT/flood.txt"
step "the agent's network: a start with and without the namespace and relay; a stream through the proxy and direct"
go test ./sandbox -run '^$' -bench 'NetworkStart' -benchtime 100x -count 1 -timeout 30m | tee "$OUT/net.txt"
go test ./netproxy -run '^$' -bench 'Throughput' -benchtime 30x -count 1 | tee -a "$OUT/net.txt"
echo "load $(load)" >> "$OUT/net.txt"
step "done"

# metric UNIT LINE: the value before UNIT on a benchmark's line, or "-".
metric() { awk -v u="$1" '{for (i = 2; i <= NF; i++) if ($i == u) {printf "%.2f", $(i-1); found=1}} END {if (!found) printf "-"}' <<<"$2"; }

echo
echo "== The cost of a build iteration (ms; no-op agent, sandbox off; load average 1/5/15 min after each size)"
printf '%-8s %10s %10s %10s %8s %12s %10s %10s %10s %12s %7s %16s\n' files engine-CPU overhead iteration floor above-floor 2-new-files bash-loop bash/eng 'bash/eng>flr' syncs load
for n in 0 10000 100000; do
	line=$(grep -E "^BenchmarkBuildIteration/files=$n-" "$OUT/iter.txt" || true)
	ld=$(grep -A3 -E "^BenchmarkBuildIteration/files=$n-" "$OUT/iter.txt" | grep -m1 '^load' | cut -d' ' -f2- || true)
	printf '%-8s %10s %10s %10s %8s %12s %10s %10s %10s %12s %7s %16s\n' "$n" \
		"$(metric engine-cpu-ms/iter "$line")" "$(metric 'overhead-ms/iter(median)' "$line")" "$(metric 'iter-ms(median)' "$line")" \
		"$(metric 'floor-ms(median)' "$line")" "$(metric above-floor-ms "$line")" "$(metric 'two-new-files-ms(median)' "$line")" \
		"$(metric 'bash-iter-ms(median)' "$line")" "$(metric bash/engine "$line")" "$(metric 'bash/engine(above-floor)' "$line")" \
		"$(metric state-syncs/iter "$line")" "${ld:--}"
done
echo "  engine-CPU: the engine's own CPU per iteration; overhead: an iteration's time less the agent's own run;"
echo "  iteration: one build iteration, agent included; floor: one fork/exec of the same agent and one synced"
echo "  line in the same folder; above-floor: iteration - floor (goal: about 1 ms); 2-new-files: making two new"
echo "  files of 2 KB in the same folder, as the engine makes each run's prompt and transcript (part of"
echo "  above-floor; the file system's cost, not the engine's); syncs: the state's syncs per iteration; bash-loop: a bash loop doing"
echo "  a template loop.sh's steps (python3 plan checks, prompt, agent, git status, a log line) in the same"
echo "  folder; bash/eng: bash-loop / iteration; bash/eng>flr: the same, both less the floor (goal: 20 or more at 10,000)."
echo
echo "== The confined floor: CPU of /bin/true's start under the default sandbox (two layers, a network namespace) above bare bubblewrap (median ms; layer: as the engine starts it, this test binary the helper; looprinter, looprinter-sandbox: those binaries the helper; -alone: the helper making its namespaces itself, as an engine without privileges does; load $(tail -1 "$OUT/floor.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkConfinedFloor' "$OUT/floor.txt" | awk '{for (i = 2; i <= NF; i++) if ($i ~ /above-bwrap-cpu-ms$/) { n=$i; sub(/-?above-bwrap-cpu-ms$/, "", n); if (n == "") n = "layer"; printf "  %-28s %8.1f\n", n, $(i-1) } else if ($i == "bwrap-cpu-ms") printf "  %-28s %8.1f (itself)\n", "bare bubblewrap", $(i-1) }'
echo "== Agent start (/bin/true) under the default sandbox (median ms; layer: the default, one copy-on-write layer; binds: one read-only bind per protected file, where no layer can be made; bare: unconfined; load $(tail -1 "$OUT/start.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkAgentStart/' "$OUT/start.txt" | awk '{name=$1; sub(/^BenchmarkAgentStart\//, "", name); sub(/-[0-9]+$/, "", name); for (i = 2; i <= NF; i++) if ($i == "median-ms") printf "  %-20s %10.1f\n", name, $(i-1)}'
echo
echo "== A build iteration under the default sandbox (median ms; load $(tail -1 "$OUT/iter-sandbox.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkBuildIterationSandbox/' "$OUT/iter-sandbox.txt" | while read -r line; do
	name=$(awk '{n=$1; sub(/^BenchmarkBuildIterationSandbox\//, "", n); sub(/-[0-9]+$/, "", n); print n}' <<<"$line")
	printf '  %-20s iteration %8s  engine-CPU %6s  setup %8s\n' "$name" "$(metric 'iter-ms(median)' "$line")" "$(metric engine-cpu-ms/iter "$line")" "$(metric setup-ms "$line")"
done
echo
echo "== The engine against the template's loop, default sandbox (CPU of the whole process tree per build iteration, ms; goal: template/engine >= 8; load $(tail -1 "$OUT/template.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkTemplateCPU/' "$OUT/template.txt" | while read -r line; do
	name=$(awk '{n=$1; sub(/^BenchmarkTemplateCPU\//, "", n); sub(/-[0-9]+$/, "", n); print n}' <<<"$line")
	printf '  %-14s engine %8s (of it the engine process %6s)  template %8s  template/engine %5s\n' "$name" "$(metric engine-tree-cpu-ms/iter "$line")" "$(metric engine-self-cpu-ms/iter "$line")" "$(metric tmpl-tree-cpu-ms/iter "$line")" "$(metric tmpl/engine "$line")"
done
echo "   the engine's whole tree counted by a cgroup (the loop's run box and its agents included):"
grep -E '^BenchmarkTemplateCPUWhole/' "$OUT/template.txt" | while read -r line; do
	name=$(awk '{n=$1; sub(/^BenchmarkTemplateCPUWhole\//, "", n); sub(/-[0-9]+$/, "", n); print n}' <<<"$line")
	printf '  %-14s engine %8s  template %8s  template/engine %5s\n' "$name" "$(metric engine-whole-cpu-ms/iter "$line")" "$(metric tmpl-tree-cpu-ms/iter "$line")" "$(metric tmpl/engine "$line")"
done
echo
echo "== An iteration whose agent changed K files of 100,000 (engine CPU and overhead above the agent's run, ms per iteration; runs judged by a walk; load $(tail -1 "$OUT/changed.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkIterationChanged/' "$OUT/changed.txt" | while read -r line; do
	name=$(awk '{n=$1; sub(/^BenchmarkIterationChanged\//, "", n); sub(/-[0-9]+$/, "", n); print n}' <<<"$line")
	printf '  %-32s engine-CPU %8s  overhead %8s  walks %s\n' "$name" "$(metric engine-cpu-ms/iter "$line")" "$(metric 'overhead-ms/iter(median)' "$line")" "$(metric watch-walks "$line")"
done
echo
echo "== Checks that start warm: go test -count=1 with the user's Go build cache empty (median ms; cold: no cache layer; layer: the loop's, after the baseline's warm-up; warm-user: a box, the user's cache warm; bare: unconfined, warm; goal: layer/warm-user <= 1.5; load $(tail -1 "$OUT/checkcache.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkCheckCache/' "$OUT/checkcache.txt" | while read -r line; do
	name=$(awk '{n=$1; sub(/^BenchmarkCheckCache\//, "", n); sub(/-[0-9]+$/, "", n); print n}' <<<"$line")
	printf '  %-10s cold %9s  layer %8s  warm-user %8s  bare %8s  warm-up %9s  layer/warm-user %5s  layer/bare %5s\n' "$name" "$(metric cold-ms "$line")" "$(metric layer-ms "$line")" \
		"$(metric warmuser-ms "$line")" "$(metric bare-ms "$line")" "$(metric warmup-ms "$line")" "$(metric layer/warm-user "$line")" "$(metric layer/bare "$line")"
done
echo "   Python, jest, Rust under bubblewrap (median ms; cold: no cache layer; layer: the loop's; bare: unconfined, warm, after a change to the sources; goal: layer/bare <= 1.2)"
grep -E '^BenchmarkCheckCacheLangs/' "$OUT/checkcache.txt" | while read -r line; do
	name=$(awk '{n=$1; sub(/^BenchmarkCheckCacheLangs\//, "", n); sub(/-[0-9]+$/, "", n); print n}' <<<"$line")
	printf '  %-10s cold %9s  layer %8s  bare %8s  warm-up %9s  layer/bare %5s  cold/layer %5s\n' "$name" "$(metric cold-ms "$line")" "$(metric layer-ms "$line")" \
		"$(metric bare-ms "$line")" "$(metric warmup-ms "$line")" "$(metric layer/bare "$line")" "$(metric cold/layer "$line")"
done
echo
echo "== The clean room and commits (ns per op; load $(tail -1 "$OUT/commit.txt" | cut -d' ' -f2-))"
grep -hE '^Benchmark(SetAside|ViewStart|Commit)' "$OUT/cleanroom.txt" "$OUT/commit.txt" | awk '{printf "  %-40s %14s ns/op\n", $1, $3}'
off=$(grep -E '^BenchmarkIterationCommits/commits=false' "$OUT/commit.txt" | sed -E 's/.* ([0-9.]+) iter-ms\(median\).*/\1/')
on=$(grep -E '^BenchmarkIterationCommits/commits=true' "$OUT/commit.txt" | sed -E 's/.* ([0-9.]+) iter-ms\(median\).*/\1/')
[ -n "$off" ] && [ -n "$on" ] && awk -v a="$on" -v b="$off" 'BEGIN{printf "  build iteration at 50,000 files: commits on %.1f ms, off %.1f ms: %.2fx (bar: 3x)\n", a, b, a/b}'
echo
echo "== Reads on a loop with 10,000 iterations of records (ms per call; target under 20; load $(tail -1 "$OUT/reads.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkReadsAt10000Iterations/' "$OUT/reads.txt" | awk '{name=$1; sub(/^BenchmarkReadsAt10000Iterations\//, "", name); sub(/-[0-9]+$/, "", name); gsub(/_/, " ", name); printf "  %-20s %8.2f\n", name, $3/1e6}'
echo
echo "== Peak RSS of the engine while an agent prints 1 GiB (MB; target under 50; load $(tail -1 "$OUT/flood.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkFloodPeakRSS/' "$OUT/flood.txt" | awk '{name=$1; sub(/^BenchmarkFloodPeakRSS\//, "", name); sub(/-[0-9]+$/, "", name); for (i = 2; i <= NF; i++) if ($i == "peak-rss-MB") printf "  %-20s %8.1f\n", name, $(i-1)}'
echo
echo "== The agent's network (start: median ms of /bin/true, interleaved; +net: the namespace and the relay to the loop's proxy; bar: +20 ms. Throughput: MB/s of a 16 MiB stream; bar: within 10%; load $(tail -1 "$OUT/net.txt" | cut -d' ' -f2-))"
grep -E '^BenchmarkNetworkStart' "$OUT/net.txt" | awk '{for (i = 2; i <= NF; i++) if ($i ~ /-median-ms$/) { n=$i; sub(/-median-ms$/, "", n); printf "  start %-12s %8.1f\n", n, $(i-1) } }'
grep -E '^BenchmarkThroughput/' "$OUT/net.txt" | awk '{n=$1; sub(/^BenchmarkThroughput\//, "", n); sub(/-[0-9]+$/, "", n); printf "  stream %-11s %8s MB/s\n", n, $(NF-1)}'
echo
echo "total $(($(date +%s) - t0)) s"
