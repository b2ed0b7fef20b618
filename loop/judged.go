package loop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// The judged plan. plan.json is written by agents, so it is evidence of
// nothing: the engine keeps its own copy in the state, with task ids and
// targets fixed when the plan was accepted and passes set only by its own
// judgement of a live build run. Whatever an agent changes in plan.json
// beyond its own task's mark is put back and recorded.

// judgedPlan is the engine's own copy of the plan (State.Judged) and what
// holds plan.json to it. What it needs of the engine comes in at
// construction (openEngine).
type judgedPlan struct {
	dir  string // the loop folder
	st   *State // the engine's state: Judged and TaskBase live there
	emit func(record.Event)
	// protectedFiles lists the files protected for the next run (guard.Guard.Files).
	protectedFiles func() ([]guard.File, *guard.ProtectRules, error)
	// readPlan reads plan.json (the engine's, cached while unchanged).
	readPlan     func() (*Plan, []string, error)
	noteWriteErr func(error)
}

func clonePlan(p *Plan) *Plan {
	if p == nil {
		return nil
	}
	return &Plan{Tasks: append([]Task(nil), p.Tasks...)}
}

// acceptPlan makes a freshly written plan the judged plan. It returns the
// problems that refuse it (targets that cannot be a task's target); a plan
// is accepted with every task open: a planner cannot pass a task.
func (jp *judgedPlan) acceptPlan(p *Plan) []string {
	if errs := jp.checkTargets(p); len(errs) > 0 {
		return errs
	}
	j := clonePlan(p)
	var forced []string
	for i := range j.Tasks {
		if j.Tasks[i].Passes {
			forced = append(forced, j.Tasks[i].ID)
			j.Tasks[i].Passes = false
		}
	}
	jp.st.Judged, jp.st.TaskBase = j, map[string]string{}
	if len(forced) > 0 {
		jp.noteWriteErr(jp.writeJudged())
		jp.emit(record.Event{Event: record.Warning, Kind: "plan_marks", Message: fmt.Sprintf("the plan came with %s marked passes: true; a task passes only when a build run for it is judged, so it was set to false", strings.Join(forced, ", "))})
	}
	return nil
}

// checkTargets refuses targets that are not plain files inside the loop
// folder: a symlink, a fifo, a folder, a path through a linked folder that
// leads outside, or a protected file (its rule named).
func (jp *judgedPlan) checkTargets(p *Plan) []string {
	var errs []string
	files, rules, rerr := jp.protectedFiles()
	if rerr != nil {
		return []string{"the protected files cannot be listed: " + rerr.Error()}
	}
	prot := map[string]string{}
	for _, f := range files {
		prot[f.Path] = f.Rule
	}
	for i, t := range p.Tasks {
		name := fmt.Sprintf("task %d (%s)", i+1, t.ID)
		rel := filepath.ToSlash(filepath.Clean(t.TargetFile))
		if why := targetProblem(t.TargetFile); why != "" {
			errs = append(errs, fmt.Sprintf("%s: targetFile %q %s", name, t.TargetFile, why))
			continue
		}
		full := filepath.Join(jp.dir, filepath.FromSlash(rel))
		if fi, err := os.Lstat(full); err == nil && !fi.Mode().IsRegular() {
			errs = append(errs, fmt.Sprintf("%s: targetFile %q is a %s; a target must be a regular file (or not exist yet)", name, t.TargetFile, guard.TypeName(fi.Mode())))
			continue
		}
		if real, err := filepath.EvalSymlinks(existingParent(full)); err == nil {
			root, _ := filepath.EvalSymlinks(jp.dir)
			if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, "../") {
				errs = append(errs, fmt.Sprintf("%s: targetFile %q goes through a link that leaves the loop folder", name, t.TargetFile))
				continue
			}
		}
		// Protected now (a test that existed when the loop started, a user
		// glob, a gate program, the loop file), or a new file no run may add.
		p, ok := rules.Rule(rel)
		if rule, now := prot[rel]; now {
			p.Path, p.Rule, ok = rel, rule, true
		} else if _, err := os.Lstat(full); err == nil {
			ok = false // a test file added during the loop: the agent's own work
		} else {
			p, ok = rules.ProtectNew(rel)
		}
		if ok {
			errs = append(errs, fmt.Sprintf("%s: targetFile %q is protected (%s): a task may not change it; to allow it, %s", name, t.TargetFile, p.Rule, p.Allow()))
		}
	}
	return errs
}

func existingParent(p string) string {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return d
		}
	}
}

// markDiff is a task whose passes differs from the judged plan.
type markDiff struct {
	ID     string
	Passes bool // as it is now in plan.json
}

func (m markDiff) String() string {
	if m.Passes {
		return fmt.Sprintf("%s was marked passes: true, but only a judged run for %s may mark it", m.ID, m.ID)
	}
	return fmt.Sprintf("%s, which passed, was set back to passes: false", m.ID)
}

// planDiffs lists how cur differs from the judged plan: changes of the
// tasks themselves (ids, order, targets) and of their marks, except the mark
// of the task named own (the run's own, judged by the caller).
func planDiffs(j, cur *Plan, own string) (structure []string, marks []markDiff) {
	if cur == nil {
		return []string{loopdir.OutputDir + "/plan.json was removed or broken"}, nil
	}
	if len(cur.Tasks) != len(j.Tasks) {
		return []string{fmt.Sprintf("the plan had %d tasks and now has %d", len(j.Tasks), len(cur.Tasks))}, nil
	}
	for i, t := range j.Tasks {
		c := cur.Tasks[i]
		switch {
		case c.ID != t.ID:
			structure = append(structure, fmt.Sprintf("task %d was %s and is now %s", i+1, t.ID, c.ID))
		case c.TargetFile != t.TargetFile:
			structure = append(structure, fmt.Sprintf("%s's targetFile was changed from %s to %s; a task's target is fixed when it is planned", t.ID, t.TargetFile, c.TargetFile))
		case !sameDepends(c.DependsOn, t.DependsOn):
			structure = append(structure, fmt.Sprintf("%s's depends_on was changed from %s to %s; a task's dependencies are fixed when it is planned", t.ID, dependsText(t.DependsOn), dependsText(c.DependsOn)))
		case c.Attempts != t.Attempts:
			structure = append(structure, fmt.Sprintf("%s's attempts was changed from %d to %d; a task's attempts are fixed when it is planned", t.ID, t.Attempts, c.Attempts))
		case c.Passes != t.Passes && t.ID != own:
			marks = append(marks, markDiff{ID: t.ID, Passes: c.Passes})
		}
	}
	return structure, marks
}

// enforceJudgedPlan puts plan.json back to the judged plan wherever it
// differs and returns the violations for the failure signal. who names the
// run that made the change; dead is the task of a run that died with the
// engine: its own mark is not a violation, only not judged, so it is taken
// back with a warning and the task runs again.
func (jp *judgedPlan) enforceJudgedPlan(dead, who string) []string {
	j := jp.st.Judged
	if j == nil {
		return nil
	}
	cur, errs, err := jp.readPlan()
	if err != nil || len(errs) > 0 {
		cur = nil
	}
	structure, marks := planDiffs(j, cur, "")
	var out []string
	violation := func(task, d string) {
		jp.emit(record.Event{Event: record.Violation, Task: task, Kind: "plan_changed", Message: fmt.Sprintf("%s: %s; the plan was put back", who, d)})
		out = append(out, "VIOLATION: "+d+"; the plan was put back as the engine judged it")
	}
	for _, d := range structure {
		violation("", d)
	}
	for _, m := range marks {
		if m.ID == dead && m.Passes {
			jp.emit(record.Event{Event: record.Warning, Task: m.ID, Kind: "unjudged_mark", Message: fmt.Sprintf("%s was marked passes: true by %s, which no live engine judged; it was set back to false and runs again", m.ID, who)})
			continue
		}
		violation(m.ID, m.String())
	}
	if len(structure)+len(marks) > 0 {
		jp.noteWriteErr(jp.writeJudged())
	}
	return out
}

// writeJudged writes plan.json from the judged plan. When the file on disk
// has the same tasks, only the marks are set and every other field stays as
// the agent wrote it (notes, extra fields); otherwise the judged plan is
// written whole.
func (jp *judgedPlan) writeJudged() error {
	j := jp.st.Judged
	if cur, errs, err := jp.readPlan(); err == nil && len(errs) == 0 {
		if s, marks := planDiffs(j, cur, ""); len(s) == 0 && len(marks) == 0 {
			return nil // the file says what the engine judged (parsed once, cached while unchanged)
		}
	}
	data, rerr := guard.ReadBounded(loopdir.Dir(jp.dir).Plan(), MaxPlanBytes)
	if cur, errs := CheckPlan(data); rerr == nil && len(errs) == 0 {
		s, marks := planDiffs(j, cur, "")
		if len(s) == 0 && len(marks) == 0 {
			return nil // the file says what the engine judged: leave it as the agent wrote it
		}
		if len(s) == 0 {
			var doc map[string]any
			if json.Unmarshal(data, &doc) == nil {
				if tasks, ok := doc["tasks"].([]any); ok && len(tasks) == len(j.Tasks) {
					for i, t := range tasks {
						if m, ok := t.(map[string]any); ok {
							m["passes"] = j.Tasks[i].Passes
						}
					}
					if out, err := json.MarshalIndent(doc, "", "  "); err == nil {
						return writeFile(loopdir.Dir(jp.dir).Plan(), append(out, '\n'), 0o644, true)
					}
				}
			}
		}
	}
	out, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(loopdir.Dir(jp.dir).Plan(), append(out, '\n'), 0o644, true)
}
