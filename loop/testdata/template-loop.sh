#!/usr/bin/env bash
# template-loop.sh N AGENT: the build iterations of a hand-written bash loop
# (the kind looprinter replaces: one loop.sh holding prompts and engine),
# for BenchmarkBuildIteration to compare with the engine in the same folder.
# Each iteration does what such a loop does between two agent runs:
#   - reads output/plan.json (python3) for the first task whose passes is false,
#   - builds the prompt from the key objective, the plan and output/progress.txt,
#   - runs the agent with the prompt on standard input, its output to a log,
#   - counts the tasks left (python3 again),
#   - commits what the run changed (git status, then git add and commit),
#   - appends one JSON line to working-records/loop.jsonl.
# It prints the start time of every iteration, and the end of the last, in
# seconds ($EPOCHREALTIME), one a line. $PYTHON picks the interpreter.
set -u
N=$1
AGENT=$2
PY=${PYTHON:-python3}
KEY_OBJECTIVE="a.txt exists"
mkdir -p working-records output
[ -s output/progress.txt ] || echo "started" > output/progress.txt
stamps=()
for ((i = 1; i <= N; i++)); do
	stamps+=("$EPOCHREALTIME")
	task=$("$PY" -c 'import json
p = json.load(open("output/plan.json"))
t = [t for t in p["tasks"] if not t.get("passes")]
print(t[0]["id"] if t else "")')
	[ -n "$task" ] || break
	prompt="# Key objective
$KEY_OBJECTIVE

# Build iteration $i: task $task
Do exactly this one task, mark it passes: true in output/plan.json, append what you learned to output/progress.txt.

## Plan
$(cat output/plan.json)

## Progress so far
$(cat output/progress.txt)"
	started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	printf '%s' "$prompt" | "$AGENT" > "working-records/build-$i.log" 2>&1
	code=$?
	left=$("$PY" -c 'import json
p = json.load(open("output/plan.json"))
print(sum(1 for t in p["tasks"] if not t.get("passes")))')
	if [ -n "$(git status --porcelain)" ]; then
		git add -A && git commit -qm "build $i: $task"
	fi
	printf '{"ts":"%s","phase":"build","iteration":%d,"task":"%s","exit":%d,"left":%s}\n' "$started" "$i" "$task" "$code" "$left" >> working-records/loop.jsonl
done
stamps+=("$EPOCHREALTIME")
printf '%s\n' "${stamps[@]}"
