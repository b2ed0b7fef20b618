#!/bin/sh
# A complete command agent for looprinter, in POSIX sh (docs/agents.md, "The
# command backend"). The prompt comes on standard input (and in the file
# $LOOPRINTER_PROMPT_FILE); $LOOPRINTER_PHASE names the step. A real agent
# would send the prompt to a model here; this one does the work itself.
prompt=$(cat)
plan() { # the plan, with T-001's "passes" set to $1
  printf '{"tasks": [{"id": "T-001", "title": "greet", "description": "hello.txt says hello", "targetFile": "hello.txt", "passes": %s, "notes": ""}]}\n' "$1"
}
case "$LOOPRINTER_PHASE" in
plan | replan) mkdir -p output && plan false > output/plan.json ;;
build) # do the task, mark it ($LOOPRINTER_TASK, here T-001) done, append what was done
  echo hello > hello.txt && plan true > output/plan.json
  echo "$LOOPRINTER_TASK: wrote hello.txt" >> output/progress.txt ;;
ralph) echo hello > hello.txt ;;
*) # a post phase: do its work, then end with the signal its prompt names
  echo "The loop wrote hello.txt." > NOTES.md
  word=$(printf '%s\n' "$prompt" | sed -n 's/.*<promise>\([A-Za-z0-9_]*\)<\/promise>.*/\1/p' | tail -n 1)
  echo "Wrote NOTES.md."
  echo "<promise>$word</promise>" ;;
esac
echo "::looprinter cost_usd=0 input_tokens=$((${#prompt} / 4)) output_tokens=20 turns=1"
