#!/usr/bin/env python3
"""A complete command agent for looprinter, in Python (docs/agents.md, "The
command backend"). A real agent would send the prompt to a model; this one
does the work itself."""
import json, os, re, sys

prompt = sys.stdin.read()  # the same text is in $LOOPRINTER_PROMPT_FILE
phase, task = os.environ["LOOPRINTER_PHASE"], os.environ.get("LOOPRINTER_TASK", "")
plan_path = os.path.join("output", "plan.json")
if phase in ("plan", "replan"):
    os.makedirs("output", exist_ok=True)
    tasks = [{"id": "T-001", "title": "greet", "description": "hello.txt says hello",
              "targetFile": "hello.txt", "passes": False, "notes": ""}]
    json.dump({"tasks": tasks}, open(plan_path, "w"), indent=2)
elif phase in ("build", "ralph"):
    open("hello.txt", "w").write("hello\n")
    if phase == "build":  # mark this run's task done, and no other
        plan = json.load(open(plan_path))
        for t in plan["tasks"]:
            t["passes"] = t["passes"] or t["id"] == task
        json.dump(plan, open(plan_path, "w"), indent=2)
        open(os.path.join("output", "progress.txt"), "a").write(task + ": wrote hello.txt\n")
else:  # a post phase: do its work, then end with the signal its prompt names
    open("NOTES.md", "w").write("The loop wrote hello.txt.\n")
    print("Wrote NOTES.md.\n<promise>%s</promise>" % re.findall(r"<promise>(\w+)</promise>", prompt)[-1])
print("::looprinter cost_usd=0 input_tokens=%d output_tokens=20 turns=1" % (len(prompt) // 4))
