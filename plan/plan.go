// Package plan is a loop's plan, output/plan.json: its format, the checks
// that read it (Check, Read: every error names its task), its bounds, and
// its task graph (depends_on: Ready and Next pick the tasks a build run may
// take now). It knows no engine: the engine (loop/) keeps its own judged
// copy of the plan and reads plan.json through a Cache.
package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/textcut"
)

// Task is one entry of output/plan.json.
type Task struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	TargetFile  string `json:"targetFile"`
	Passes      bool   `json:"passes"`
	Notes       string `json:"notes"`
	// DependsOn names the tasks that must pass before this one may run
	// (depends.go); fixed when the task is planned, like its target.
	DependsOn []string `json:"depends_on,omitempty"`
	// Attempts is how many build runs of this task run at once from its
	// first run, each on a layer of its own, the best passing one kept
	// (wave/bestof.go); 0 (left out) and 1 are one run. Fixed when planned.
	Attempts int `json:"attempts,omitempty"`
	// Touches are the files this task's run may change, as globs
	// (wave/touches.go): two tasks whose globs overlap never run in the
	// same wave. None: it may run beside any task. Fixed when planned.
	Touches []string `json:"touches,omitempty"`
}

// Plan is output/plan.json.
type Plan struct {
	Tasks []Task `json:"tasks"`
}

var taskID = regexp.MustCompile(`^T-[0-9]{3,}$`)

// Check runs the built-in plan checks on raw plan.json contents and
// returns the plan (as far as it could be read) and every error, each naming
// its task.
func Check(data []byte) (*Plan, []string) {
	var errs []string
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, []string{fmt.Sprintf("plan.json%s: plan.json is not a valid JSON object: %v", where(data, err), err)}
	}
	tasksRaw, ok := raw["tasks"]
	if !ok {
		return nil, []string{`plan.json has no "tasks" array`}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(tasksRaw, &items); err != nil {
		return nil, []string{`plan.json: "tasks" is not an array`}
	}
	if len(items) == 0 {
		return nil, []string{`plan.json: "tasks" is empty; a plan needs at least one task`}
	}
	if len(items) > MaxTasks {
		return nil, []string{fmt.Sprintf(`plan.json: %d tasks; a plan may hold at most %d`, len(items), MaxTasks)}
	}
	plan := &Plan{}
	seen := map[string]int{}
	for i, item := range items {
		name := fmt.Sprintf("task %d", i+1)
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
			errs = append(errs, fmt.Sprintf("%s is not an object", name))
			plan.Tasks = append(plan.Tasks, Task{})
			continue
		}
		var t Task
		str := func(key string, dst *string, required bool) {
			v, ok := fields[key]
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: missing %q", name, key))
				return
			}
			if err := json.Unmarshal(v, dst); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %q must be a string", name, key))
				return
			}
			if required && strings.TrimSpace(*dst) == "" {
				errs = append(errs, fmt.Sprintf("%s: %q is empty", name, key))
			}
		}
		str("id", &t.ID, true)
		if t.ID != "" {
			name = fmt.Sprintf("task %d (%s)", i+1, t.ID)
			if !taskID.MatchString(t.ID) {
				errs = append(errs, fmt.Sprintf("%s: id %q must look like T-001 (T- and three or more digits)", name, t.ID))
			}
			if prev, dup := seen[t.ID]; dup {
				errs = append(errs, fmt.Sprintf("%s: id %q is used by task %d too; ids must be unique", name, t.ID, prev))
			} else {
				seen[t.ID] = i + 1
			}
		}
		str("title", &t.Title, true)
		str("description", &t.Description, true)
		str("targetFile", &t.TargetFile, true)
		if t.TargetFile != "" {
			if why := TargetProblem(t.TargetFile); why != "" {
				errs = append(errs, fmt.Sprintf("%s: targetFile %q %s", name, t.TargetFile, why))
			}
		}
		str("notes", &t.Notes, false)
		if v, ok := fields["passes"]; !ok {
			errs = append(errs, fmt.Sprintf("%s: missing %q", name, "passes"))
		} else if err := json.Unmarshal(v, &t.Passes); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %q must be true or false, got %s", name, "passes", truncate(string(v), 40)))
		}
		if v, ok := fields["depends_on"]; ok {
			t.DependsOn, errs = readDependsOn(name, v, errs)
		}
		if v, ok := fields["attempts"]; ok {
			t.Attempts, errs = readAttempts(name, v, errs)
		}
		if v, ok := fields["touches"]; ok {
			t.Touches, errs = readTouches(name, v, errs)
		}
		plan.Tasks = append(plan.Tasks, t)
	}
	errs = append(errs, checkDepends(plan)...)
	return plan, errs
}

// Bounds of a plan: past them the plan is refused (plan_invalid), never
// read whole into memory.
const (
	MaxBytes = 2 << 20
	MaxTasks = 500
)

// Read reads and checks a plan file. A missing file returns
// os.ErrNotExist. Only a regular file is read (a fifo or a link put in its
// place is an error, never a hang), and at most MaxBytes of it.
func Read(path string) (*Plan, []string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, []string{fmt.Sprintf("plan.json is a %s, not a file", guard.TypeName(fi.Mode()))}, nil
	}
	if fi.Size() > MaxBytes {
		return nil, []string{fmt.Sprintf("plan.json is %d bytes; a plan may hold at most %d bytes (%d tasks): plan fewer, larger tasks", fi.Size(), MaxBytes, MaxTasks)}, nil
	}
	data, err := guard.ReadBounded(path, MaxBytes)
	if err != nil {
		return nil, []string{"plan.json cannot be read: " + err.Error()}, nil
	}
	p, errs := Check(data)
	return p, errs, nil
}

// TargetProblem says why a targetFile can never be a task's target, from
// the path alone: it must be a relative path inside the loop folder, and not
// one of the engine's own files ("" when it can be one).
func TargetProblem(target string) string {
	slash := strings.ReplaceAll(target, "\\", "/")
	clean := path.Clean(slash)
	switch {
	case strings.ContainsRune(target, 0) || strings.ContainsAny(target, "\n\r"):
		return "holds a control character"
	case path.IsAbs(slash):
		return "is an absolute path; write it relative to the loop folder"
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return "leaves the loop folder"
	case clean == "." || strings.HasSuffix(slash, "/"):
		return "names a folder, not a file"
	case clean == loopdir.RecordsDir || strings.HasPrefix(clean, loopdir.RecordsDir+"/"), clean == ".git" || strings.HasPrefix(clean, ".git/"):
		return "is inside the engine's own files (" + strings.SplitN(clean, "/", 2)[0] + "/)"
	case clean == loopdir.OutputDir+"/plan.json" || clean == loopdir.OutputDir+"/progress.txt":
		return "is the plan's own bookkeeping, not a deliverable"
	}
	return ""
}

// Next returns the first task whose passes is false and whose
// dependencies (depends_on) all pass. In a plan without depends_on that is
// the first task whose passes is false; in a checked plan (no unknown id, no
// cycle) there is always one while any task is open.
func (p *Plan) Next() (Task, bool) {
	if ready := p.Ready(); len(ready) > 0 {
		return ready[0], true
	}
	// Never "every task passes" while one is open: a plan the checks would
	// refuse (a cycle) still names its first open task.
	for _, t := range planTasks(p) {
		if !t.Passes {
			return t, true
		}
	}
	return Task{}, false
}

// Find returns the task with id.
func (p *Plan) Find(id string) (Task, bool) {
	if p == nil {
		return Task{}, false
	}
	for _, t := range p.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}

// Done counts the tasks that pass.
func (p *Plan) Done() int {
	n := 0
	if p != nil {
		for _, t := range p.Tasks {
			if t.Passes {
				n++
			}
		}
	}
	return n
}

// Clone returns a copy of p whose tasks may be changed without changing
// p's (nil for nil).
func (p *Plan) Clone() *Plan {
	if p == nil {
		return nil
	}
	return &Plan{Tasks: append([]Task(nil), p.Tasks...)}
}

// TaskID and TaskTouches are what wave.Pick reads of a task.
func (t Task) TaskID() string        { return t.ID }
func (t Task) TaskTouches() []string { return t.Touches }

func truncate(s string, n int) string { return textcut.Cut(s, n) }

// MarkPassed is data, a plan.json, with each task's "passes" set as
// passes says (one a task, in order) and everything else as it was,
// indented as the engine writes it; false when data is not a plan of that
// many tasks.
func MarkPassed(data []byte, passes []bool) ([]byte, bool) {
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil {
		return nil, false
	}
	tasks, ok := doc["tasks"].([]any)
	if !ok || len(tasks) != len(passes) {
		return nil, false
	}
	for i, t := range tasks {
		m, ok := t.(map[string]any)
		if !ok {
			return nil, false
		}
		m["passes"] = passes[i]
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}

// where is ":line:column" of the byte a JSON error names in data (the
// first byte past what was read, for a syntax error), "" when it names
// none.
func where(data []byte, err error) string {
	var off int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(data))
	default:
		return ""
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:max(off-1, 0)] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf(":%d:%d", line, col)
}
