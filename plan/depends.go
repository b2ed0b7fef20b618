package plan

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Dependencies between the tasks of a plan: a task may name, in
// depends_on, the tasks that must pass before it runs. The plan checks
// refuse an id that names no task of the plan, a task that depends on
// itself, the same id twice, and a cycle; Ready and Next pick only tasks
// whose dependencies pass.

// MaxDependsOn bounds one task's depends_on list.
const MaxDependsOn = 100

// readDependsOn reads a task's depends_on: an array of task ids (it may be
// empty). name names the task in messages.
func readDependsOn(name string, v json.RawMessage, errs []string) ([]string, []string) {
	var ids []string
	if string(v) == "null" {
		return nil, errs
	}
	if err := json.Unmarshal(v, &ids); err != nil {
		return nil, append(errs, fmt.Sprintf(`%s: "depends_on" must be an array of task ids like ["T-001"], got %s`, name, truncate(string(v), 40)))
	}
	if len(ids) > MaxDependsOn {
		return nil, append(errs, fmt.Sprintf(`%s: "depends_on" names %d tasks; a task may depend on at most %d`, name, len(ids), MaxDependsOn))
	}
	return ids, errs
}

// checkDepends checks every task's depends_on against the plan: each id
// names another task of the plan, once, and the dependencies hold no cycle.
func checkDepends(p *Plan) []string {
	var errs []string
	pos := map[string]int{}
	for i, t := range p.Tasks {
		if t.ID != "" {
			if _, dup := pos[t.ID]; !dup {
				pos[t.ID] = i
			}
		}
	}
	ok := true
	for i, t := range p.Tasks {
		name := fmt.Sprintf("task %d (%s)", i+1, t.ID)
		seen := map[string]bool{}
		for _, d := range t.DependsOn {
			switch _, known := pos[d]; {
			case d == t.ID:
				errs, ok = append(errs, fmt.Sprintf("%s: depends_on names the task itself; a task cannot wait for itself", name)), false
			case seen[d]:
				errs, ok = append(errs, fmt.Sprintf("%s: depends_on names %q twice", name, d)), false
			case !known:
				errs, ok = append(errs, fmt.Sprintf("%s: depends_on names %q, which is no task of this plan", name, truncate(d, 40))), false
			}
			seen[d] = true
		}
	}
	if !ok {
		return errs // a cycle is looked for only among known, distinct ids
	}
	if cyc := dependCycle(p, pos); len(cyc) > 0 {
		errs = append(errs, fmt.Sprintf("the tasks' depends_on form a cycle: %s; no task of it could ever run", strings.Join(cyc, " → ")))
	}
	return errs
}

// dependCycle returns one cycle of the dependencies as a path of ids that
// ends where it starts (T-001 → T-002 → T-001), or nil. Iterative, so a
// long chain of 500 tasks needs no deep stack.
func dependCycle(p *Plan, pos map[string]int) []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(p.Tasks))
	for start := range p.Tasks {
		if color[start] != white {
			continue
		}
		type frame struct{ task, next int }
		stack := []frame{{start, 0}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			deps := p.Tasks[top.task].DependsOn
			if top.next >= len(deps) {
				color[top.task] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d, known := pos[deps[top.next]]
			top.next++
			if !known {
				continue
			}
			switch color[d] {
			case grey:
				// The cycle is the stack from d up to the top, then d again.
				var path []string
				for k := range stack {
					if stack[k].task == d {
						for _, f := range stack[k:] {
							path = append(path, p.Tasks[f.task].ID)
						}
						break
					}
				}
				return append(path, p.Tasks[d].ID)
			case white:
				color[d] = grey
				stack = append(stack, frame{d, 0})
			}
		}
	}
	return nil
}

// Ready lists, in plan order, the tasks whose passes is false and whose
// dependencies all pass: the tasks a build run may take now.
func (p *Plan) Ready() []Task {
	tasks := planTasks(p)
	passed := map[string]bool{}
	for _, t := range tasks {
		if t.Passes {
			passed[t.ID] = true
		}
	}
	var out []Task
	for _, t := range tasks {
		if t.Passes {
			continue
		}
		ready := true
		for _, d := range t.DependsOn {
			if !passed[d] {
				ready = false
				break
			}
		}
		if ready {
			out = append(out, t)
		}
	}
	return out
}

func planTasks(p *Plan) []Task {
	if p == nil {
		return nil
	}
	return p.Tasks
}

// SameDepends says whether two depends_on lists name the same tasks in the
// same order.
func SameDepends(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// DependsText shows a depends_on list in a message.
func DependsText(ids []string) string {
	if len(ids) == 0 {
		return "[]"
	}
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", truncate(id, 40))
	}
	return "[" + strings.Join(q, ", ") + "]"
}
