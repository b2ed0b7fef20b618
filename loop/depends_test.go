package loop

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// planJSON builds plan.json text from (id, depends_on) pairs.
func planJSON(t *testing.T, tasks ...any) []byte {
	t.Helper()
	var out []map[string]any
	for i := 0; i < len(tasks); i += 2 {
		m := map[string]any{"id": tasks[i], "title": "t", "description": "d",
			"targetFile": fmt.Sprintf("f%d.txt", i/2), "passes": false, "notes": ""}
		if tasks[i+1] != nil {
			m["depends_on"] = tasks[i+1]
		}
		out = append(out, m)
	}
	b, err := json.Marshal(map[string]any{"tasks": out})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDependsOnReadAndChecked(t *testing.T) {
	p, errs := CheckPlan(planJSON(t, "T-001", []string{"T-002"}, "T-002", nil, "T-003", []string{"T-001", "T-002"}))
	if len(errs) > 0 {
		t.Fatalf("a valid plan with depends_on was refused: %v", errs)
	}
	if got := p.Tasks[2].DependsOn; len(got) != 2 || got[0] != "T-001" || got[1] != "T-002" {
		t.Fatalf("depends_on read as %v", got)
	}
	if p.Tasks[1].DependsOn != nil {
		t.Fatalf("a task without depends_on has %v", p.Tasks[1].DependsOn)
	}
	// An empty list and null are no dependencies.
	if _, errs := CheckPlan(planJSON(t, "T-001", []string{}, "T-002", json.RawMessage("null"))); len(errs) > 0 {
		t.Fatalf("empty and null depends_on refused: %v", errs)
	}
}

func TestDependsOnErrors(t *testing.T) {
	cases := []struct {
		name string
		plan []byte
		want string
	}{
		{"unknown id", planJSON(t, "T-001", []string{"T-009"}, "T-002", nil), `task 1 (T-001): depends_on names "T-009", which is no task of this plan`},
		{"itself", planJSON(t, "T-001", nil, "T-002", []string{"T-002"}), `task 2 (T-002): depends_on names the task itself`},
		{"twice", planJSON(t, "T-001", nil, "T-002", []string{"T-001", "T-001"}), `task 2 (T-002): depends_on names "T-001" twice`},
		{"not an array", planJSON(t, "T-001", "T-002", "T-002", nil), `task 1 (T-001): "depends_on" must be an array of task ids`},
		{"numbers", planJSON(t, "T-001", []int{2}, "T-002", nil), `task 1 (T-001): "depends_on" must be an array of task ids`},
		{"two-cycle", planJSON(t, "T-001", []string{"T-002"}, "T-002", []string{"T-001"}), `the tasks' depends_on form a cycle: T-001 → T-002 → T-001`},
		{"three-cycle behind a free task", planJSON(t, "T-001", nil, "T-002", []string{"T-004"}, "T-003", []string{"T-002"}, "T-004", []string{"T-001", "T-003"}),
			`form a cycle: T-002 → T-004 → T-003 → T-002`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs := CheckPlan(c.plan)
			if !strings.Contains(strings.Join(errs, "\n"), c.want) {
				t.Fatalf("errors %q do not say %q", errs, c.want)
			}
		})
	}
}

// A chain as long as a plan may be is checked without a deep recursion, and
// its cycle (the last task back to the first) is found.
func TestDependsOnLongChain(t *testing.T) {
	var tasks []any
	for i := 1; i <= MaxPlanTasks; i++ {
		var dep any
		if i > 1 {
			dep = []string{fmt.Sprintf("T-%03d", i-1)}
		}
		tasks = append(tasks, fmt.Sprintf("T-%03d", i), dep)
	}
	if _, errs := CheckPlan(planJSON(t, tasks...)); len(errs) > 0 {
		t.Fatalf("a chain of %d tasks refused: %v", MaxPlanTasks, errs[0])
	}
	tasks[1] = []string{fmt.Sprintf("T-%03d", MaxPlanTasks)}
	_, errs := CheckPlan(planJSON(t, tasks...))
	if len(errs) != 1 || !strings.Contains(errs[0], "form a cycle: T-001 → T-500 → T-499") {
		t.Fatalf("the cycle through the whole chain: %v", truncate(strings.Join(errs, "\n"), 200))
	}
}

func TestReadyAndNextFollowDependencies(t *testing.T) {
	p, errs := CheckPlan(planJSON(t, "T-001", []string{"T-002"}, "T-002", nil, "T-003", nil, "T-004", []string{"T-001", "T-003"}))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ids := func(ts []Task) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.ID)
		}
		return strings.Join(s, ",")
	}
	steps := []struct{ ready, next string }{
		{"T-002,T-003", "T-002"},
		{"T-001,T-003", "T-001"},
		{"T-003", "T-003"},
		{"T-004", "T-004"},
		{"", ""},
	}
	for i, s := range steps {
		if got := ids(p.Ready()); got != s.ready {
			t.Fatalf("step %d: ready %q, want %q", i, got, s.ready)
		}
		next, ok := p.Next()
		if next.ID != s.next || ok != (s.next != "") {
			t.Fatalf("step %d: next %q %v, want %q", i, next.ID, ok, s.next)
		}
		for k := range p.Tasks {
			if p.Tasks[k].ID == next.ID {
				p.Tasks[k].Passes = true
			}
		}
	}
	// A task whose dependency passed and then was set back waits again.
	p.Tasks[1].Passes = false
	p.Tasks[0].Passes = false
	if got := ids(p.Ready()); got != "T-002" {
		t.Fatalf("after T-002 fell back: ready %q", got)
	}
}

// A plan that somehow holds a cycle (never one the checks accepted) still
// names an open task: the engine never takes it for a finished plan.
func TestNextNeverDoneWhileOpen(t *testing.T) {
	p := &Plan{Tasks: []Task{{ID: "T-001", DependsOn: []string{"T-002"}}, {ID: "T-002", DependsOn: []string{"T-001"}}}}
	if next, ok := p.Next(); !ok || next.ID != "T-001" {
		t.Fatalf("next of a cyclic plan: %q %v", next.ID, ok)
	}
}

// An agent that rewrites a task's depends_on changes the plan's structure:
// the engine puts it back like a changed target.
func TestPlanDiffsDependsOn(t *testing.T) {
	j := &Plan{Tasks: []Task{{ID: "T-001", TargetFile: "a"}, {ID: "T-002", TargetFile: "b", DependsOn: []string{"T-001"}}}}
	cur := clonePlan(j)
	cur.Tasks[1].DependsOn = nil
	s, _ := planDiffs(j, cur, "T-002")
	if len(s) != 1 || !strings.Contains(s[0], `T-002's depends_on was changed from ["T-001"] to []`) {
		t.Fatalf("dropped dependency: %v", s)
	}
	cur.Tasks[1].DependsOn = []string{"T-001"}
	if s, m := planDiffs(j, cur, ""); len(s)+len(m) != 0 {
		t.Fatalf("same plan differs: %v %v", s, m)
	}
}

// The build prompt names the tasks the task comes after; a task without
// dependencies gets no such line.
func TestBuildPromptNamesDependencies(t *testing.T) {
	d := PromptData{Phase: "build", Objective: "o", Task: Task{ID: "T-003", Title: "c", TargetFile: "c.txt", DependsOn: []string{"T-001", "T-002"}}}
	out, err := Render(Builtin("build"), d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Its target file: c.txt\n   It comes after T-001, T-002, which pass: build on their work.\n") {
		t.Fatalf("the build prompt:\n%s", out)
	}
	d.Task.DependsOn = nil
	if out, _ := Render(Builtin("build"), d); strings.Contains(out, "comes after") || !strings.Contains(out, "Its target file: c.txt\n3.") {
		t.Fatalf("a task without dependencies:\n%s", out)
	}
}
