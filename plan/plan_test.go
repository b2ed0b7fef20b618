package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
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

// oneTask is plan.json with one task whose field key is raw (left out when
// raw is "").
func oneTask(key, raw string) []byte {
	fields := map[string]string{"id": `"T-001"`, "title": `"t"`, "description": `"d"`, "targetFile": `"a.txt"`, "passes": "false", "notes": `""`}
	if raw == "" {
		delete(fields, key)
	} else {
		fields[key] = raw
	}
	var parts []string
	for _, k := range []string{"id", "title", "description", "targetFile", "passes", "notes", "depends_on", "attempts", "touches"} {
		if v, ok := fields[k]; ok {
			parts = append(parts, fmt.Sprintf("%q:%s", k, v))
		}
	}
	return []byte(`{"tasks":[{` + strings.Join(parts, ",") + `}]}`)
}

func has(errs []string, want string) bool { return strings.Contains(strings.Join(errs, "\n"), want) }

func TestCheckAcceptsAGoodPlan(t *testing.T) {
	p, errs := Check([]byte(`{"tasks":[{"id":"T-001","title":"a","description":"b","targetFile":"c","passes":false,"notes":""},{"id":"T-1002","title":"a","description":"b","targetFile":"c","passes":true,"notes":"n","attempts":3,"touches":["src/**"],"depends_on":["T-001"]}]}`))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(p.Tasks) != 2 || p.Tasks[1].Attempts != 3 || p.Tasks[1].Touches[0] != "src/**" || p.Tasks[1].DependsOn[0] != "T-001" || p.Tasks[1].Notes != "n" {
		t.Fatalf("read as %+v", p.Tasks)
	}
	if next, ok := p.Next(); !ok || next.ID != "T-001" || p.Done() != 1 {
		t.Errorf("next %v %v done %d", next, ok, p.Done())
	}
}

// Every error of the whole plan is named by where it is: the plan itself,
// or the task's position in the list and its id once it has one.
func TestCheckErrorsNameTheirPosition(t *testing.T) {
	for src, want := range map[string]string{
		`[]`:                     "plan.json is not a valid JSON object",
		`{"tasks": []}`:          `plan.json: "tasks" is empty`,
		`{"tasks": {}}`:          `plan.json: "tasks" is not an array`,
		`{"plan": []}`:           `plan.json has no "tasks" array`,
		`{"tasks": [{"id": 1}]}`: `task 1: "id" must be a string`,
	} {
		if _, errs := Check([]byte(src)); !has(errs, want) {
			t.Errorf("Check(%s) = %v, want an error containing %q", src, errs, want)
		}
	}
	// The malformed plan of the script test malformed_plan: each error at
	// its own task.
	src := `{"tasks":[{"id":"T-1","title":"a","description":"d","targetFile":"a.txt","passes":false,"notes":""},` +
		`{"id":"T-002","description":"d","targetFile":"a.txt","passes":false,"notes":""},` +
		`{"id":"T-002","title":"c","description":"d","targetFile":"a.txt","passes":"no","notes":""},` +
		`"oops",` +
		`{"id":"T-005","title":"e","description":"d","targetFile":"","passes":false}]}`
	p, errs := Check([]byte(src))
	for _, want := range []string{
		`task 1 (T-1): id "T-1" must look like T-001`,
		`task 2 (T-002): missing "title"`,
		`task 3 (T-002): id "T-002" is used by task 2 too`,
		`task 3 (T-002): "passes" must be true or false, got "no"`,
		`task 4 is not an object`,
		`task 5 (T-005): "targetFile" is empty`,
		`task 5 (T-005): missing "notes"`,
	} {
		if !has(errs, want) {
			t.Errorf("errors %q do not say %q", errs, want)
		}
	}
	if len(errs) != 7 {
		t.Errorf("%d errors, want 7: %q", len(errs), errs)
	}
	if p == nil || len(p.Tasks) != 5 || p.Tasks[3].ID != "" {
		t.Errorf("the plan as far as it was read: %+v", p)
	}
	for key, c := range map[string]struct{ raw, want string }{
		"targetFile": {`"../x"`, `task 1 (T-001): targetFile "../x" leaves the loop folder`},
		"attempts":   {`0`, `task 1 (T-001): "attempts" is 0; a task may be tried 1 to`},
		"touches":    {`["../x"]`, `task 1 (T-001): "touches" glob "../x" climbs out of the loop folder`},
		"depends_on": {`"T-002"`, `task 1 (T-001): "depends_on" must be an array of task ids`},
		"title":      {`"  "`, `task 1 (T-001): "title" is empty`},
	} {
		if _, errs := Check(oneTask(key, c.raw)); !has(errs, c.want) {
			t.Errorf("%s %s: errors %q do not say %q", key, c.raw, errs, c.want)
		}
	}
}

func TestCheckBounds(t *testing.T) {
	var tasks []any
	for i := 1; i <= MaxTasks+1; i++ {
		tasks = append(tasks, fmt.Sprintf("T-%03d", i), nil)
	}
	if _, errs := Check(planJSON(t, tasks...)); len(errs) != 1 || !strings.Contains(errs[0], fmt.Sprintf("%d tasks; a plan may hold at most %d", MaxTasks+1, MaxTasks)) {
		t.Fatalf("a plan of %d tasks: %v", MaxTasks+1, errs)
	}
	ids := make([]string, MaxDependsOn+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("T-%03d", i+2)
	}
	if _, errs := Check(planJSON(t, "T-001", ids)); !has(errs, fmt.Sprintf(`"depends_on" names %d tasks; a task may depend on at most %d`, MaxDependsOn+1, MaxDependsOn)) {
		t.Fatalf("a depends_on of %d ids: %v", len(ids), errs)
	}
}

func TestTargetProblem(t *testing.T) {
	for bad, want := range map[string]string{
		"/etc/passwd":                "is an absolute path",
		"../../etc/passwd":           "leaves the loop folder",
		"a/../../x":                  "leaves the loop folder",
		"working-records/state.json": "inside the engine's own files (working-records/)",
		".git/config":                "inside the engine's own files (.git/)",
		"output/plan.json":           "the plan's own bookkeeping",
		"output/progress.txt":        "the plan's own bookkeeping",
		"src/":                       "names a folder",
		".":                          "names a folder",
		"a\nb":                       "control character",
	} {
		if why := TargetProblem(bad); !strings.Contains(why, want) {
			t.Errorf("TargetProblem(%q) = %q, want %q", bad, why, want)
		}
	}
	for _, good := range []string{"main.go", "src/a.go", "output/answer.txt", "./x.txt", "working-records-x/a"} {
		if why := TargetProblem(good); why != "" {
			t.Errorf("%q refused: %s", good, why)
		}
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
		{"numbers", planJSON(t, "T-001", []int{2}, "T-002", nil), `task 1 (T-001): "depends_on" must be an array of task ids`},
		{"two-cycle", planJSON(t, "T-001", []string{"T-002"}, "T-002", []string{"T-001"}), `the tasks' depends_on form a cycle: T-001 → T-002 → T-001`},
		{"three-cycle behind a free task", planJSON(t, "T-001", nil, "T-002", []string{"T-004"}, "T-003", []string{"T-002"}, "T-004", []string{"T-001", "T-003"}),
			`form a cycle: T-002 → T-004 → T-003 → T-002`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, errs := Check(c.plan); !has(errs, c.want) {
				t.Fatalf("errors %q do not say %q", errs, c.want)
			}
		})
	}
	// An unknown id is not looked through for a cycle: one error, not two.
	if _, errs := Check(planJSON(t, "T-001", []string{"T-002", "T-009"}, "T-002", []string{"T-001"})); len(errs) != 1 {
		t.Fatalf("errors %q: the unknown id alone", errs)
	}
}

// A chain as long as a plan may be is checked without a deep recursion, and
// its cycle (the last task back to the first) is found.
func TestDependsOnLongChain(t *testing.T) {
	var tasks []any
	for i := 1; i <= MaxTasks; i++ {
		var dep any
		if i > 1 {
			dep = []string{fmt.Sprintf("T-%03d", i-1)}
		}
		tasks = append(tasks, fmt.Sprintf("T-%03d", i), dep)
	}
	if _, errs := Check(planJSON(t, tasks...)); len(errs) > 0 {
		t.Fatalf("a chain of %d tasks refused: %v", MaxTasks, errs[0])
	}
	tasks[1] = []string{fmt.Sprintf("T-%03d", MaxTasks)}
	_, errs := Check(planJSON(t, tasks...))
	if len(errs) != 1 || !strings.Contains(errs[0], "form a cycle: T-001 → T-500 → T-499") {
		t.Fatalf("the cycle through the whole chain: %v", truncate(strings.Join(errs, "\n"), 200))
	}
}

func ids(ts []Task) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.ID)
	}
	return strings.Join(s, ",")
}

func TestReadyAndNextFollowDependencies(t *testing.T) {
	p, errs := Check(planJSON(t, "T-001", []string{"T-002"}, "T-002", nil, "T-003", nil, "T-004", []string{"T-001", "T-003"}))
	if len(errs) > 0 {
		t.Fatal(errs)
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
		if p.Done() != i+1 && s.next != "" {
			t.Fatalf("step %d: done %d", i, p.Done())
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
// names an open task; a nil plan has none, and none is found in it.
func TestNextFindDone(t *testing.T) {
	p := &Plan{Tasks: []Task{{ID: "T-001", DependsOn: []string{"T-002"}}, {ID: "T-002", DependsOn: []string{"T-001"}}}}
	if next, ok := p.Next(); !ok || next.ID != "T-001" {
		t.Fatalf("next of a cyclic plan: %q %v", next.ID, ok)
	}
	if got, ok := p.Find("T-002"); !ok || got.DependsOn[0] != "T-001" {
		t.Fatalf("find T-002: %+v %v", got, ok)
	}
	if _, ok := p.Find("T-003"); ok {
		t.Fatal("found T-003")
	}
	var none *Plan
	if _, ok := none.Next(); ok {
		t.Fatal("a nil plan has a next task")
	}
	if _, ok := none.Find("T-001"); ok || none.Done() != 0 || len(none.Ready()) != 0 || none.Clone() != nil {
		t.Fatal("a nil plan holds tasks")
	}
}

func TestSameDependsAndText(t *testing.T) {
	if !SameDepends(nil, []string{}) || !SameDepends([]string{"T-001", "T-002"}, []string{"T-001", "T-002"}) {
		t.Fatal("the same lists differ")
	}
	if SameDepends([]string{"T-001", "T-002"}, []string{"T-002", "T-001"}) || SameDepends([]string{"T-001"}, nil) {
		t.Fatal("different lists are the same")
	}
	if got := DependsText(nil); got != "[]" {
		t.Fatalf("DependsText(nil) = %s", got)
	}
	if got := DependsText([]string{"T-001", "a\"b"}); got != `["T-001", "a\"b"]` {
		t.Fatalf("DependsText = %s", got)
	}
}

func TestCloneIsACopy(t *testing.T) {
	p := &Plan{Tasks: []Task{{ID: "T-001"}}}
	c := p.Clone()
	c.Tasks[0].Passes = true
	c.Tasks = append(c.Tasks, Task{ID: "T-002"})
	if p.Tasks[0].Passes || len(p.Tasks) != 1 {
		t.Fatalf("the clone changed the plan: %+v", p)
	}
	if c.Tasks[0].TaskID() != "T-001" || (Task{Touches: []string{"a"}}).TaskTouches()[0] != "a" {
		t.Fatal("TaskID, TaskTouches")
	}
}

// A plan larger than MaxBytes is refused from its size alone: never read.
func TestReadHugeRefusedUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plan.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20)
	f.Close()
	start := time.Now()
	plan, errs, err := Read(p)
	if err != nil || plan != nil || len(errs) != 1 || !strings.Contains(errs[0], "at most") {
		t.Fatalf("plan %v, errs %v, err %v", plan, errs, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %s: it was read", d)
	}
}

// The cache gives what Read gives, a copy each time, and sees every change
// of the file: a rewrite of the same size, a file put in its place, another
// path.
func TestCacheSeesChanges(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.json")
	write := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(planJSON(t, "T-001", nil))
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	var c Cache
	// Changed a moment ago (its ctime): another change within the file
	// system clock's tick could go unseen, so it is not kept.
	if got, _, _ := c.Read(p); got == nil || c.held {
		t.Fatalf("a plan changed a moment ago was kept: %v", got)
	}
	time.Sleep(time.Duration(2 * racyWindow)) // past the racy window of its ctime

	first, errs, err := c.Read(p)
	if err != nil || len(errs) > 0 || first.Tasks[0].ID != "T-001" {
		t.Fatalf("first read: %+v %v %v", first, errs, err)
	}
	first.Tasks[0].Passes = true // a caller's change is its own
	again, _, _ := c.Read(p)
	if again.Tasks[0].Passes {
		t.Fatal("the cache handed out the caller's changed copy")
	}
	if runtime.GOOS == "linux" && !c.held {
		t.Fatal("a plan unchanged for longer than the racy window was not kept")
	}
	again.Tasks[0].Passes = true
	if got, _, _ := c.Read(p); got.Tasks[0].Passes {
		t.Fatal("a kept plan handed out the caller's changed copy")
	}

	// Rewritten with the same size: its ctime (never set back) changed.
	write(planJSON(t, "T-002", nil))
	os.Chtimes(p, old, old)
	if got, _, _ := c.Read(p); got.Tasks[0].ID != "T-002" {
		t.Fatalf("a same-size rewrite was not seen: %s", got.Tasks[0].ID)
	}

	// Another path is another file.
	q := filepath.Join(dir, "other.json")
	os.WriteFile(q, planJSON(t, "T-003", nil), 0o600)
	if got, _, _ := c.Read(q); got.Tasks[0].ID != "T-003" {
		t.Fatalf("another path read as %s", got.Tasks[0].ID)
	}

	// An invalid plan and a missing file come back as Read gives them.
	write([]byte(`{"tasks": []}`))
	if got, errs, err := c.Read(p); got != nil || err != nil || !has(errs, `"tasks" is empty`) {
		t.Fatalf("an invalid plan: %v %v %v", got, errs, err)
	}
	os.Remove(p)
	if _, _, err := c.Read(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a removed plan: %v", err)
	}
}

func TestCheckInvalidJSONSaysWhere(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"tasks\": [\n    {\"id\": \"T-001\",}\n  ]\n}": "plan.json:3:20: plan.json is not a valid JSON object: invalid character '}'",
		"":            "plan.json:1:1: plan.json is not a valid JSON object: EOF",
		"{\"tasks\":": "plan.json:1:9: plan.json is not a valid JSON object: unexpected EOF",
		"[]":          "plan.json:1:1: plan.json is not a valid JSON object: json: cannot unmarshal array",
	} {
		_, errs := Check([]byte(in))
		if len(errs) != 1 || !strings.HasPrefix(errs[0], want) {
			t.Errorf("Check(%q) = %q, want one error starting %q", in, errs, want)
		}
	}
}
