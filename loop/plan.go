package loop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Task is one entry of output/plan.json.
type Task struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	TargetFile  string `json:"targetFile"`
	Passes      bool   `json:"passes"`
	Notes       string `json:"notes"`
}

// Plan is output/plan.json.
type Plan struct {
	Tasks []Task `json:"tasks"`
}

var taskID = regexp.MustCompile(`^T-[0-9]{3,}$`)

// CheckPlan runs the built-in plan checks on raw plan.json contents and
// returns the plan (as far as it could be read) and every error, each naming
// its task.
func CheckPlan(data []byte) (*Plan, []string) {
	var errs []string
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, []string{fmt.Sprintf("plan.json is not a valid JSON object: %v", err)}
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
		str("notes", &t.Notes, false)
		if v, ok := fields["passes"]; !ok {
			errs = append(errs, fmt.Sprintf("%s: missing %q", name, "passes"))
		} else if err := json.Unmarshal(v, &t.Passes); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %q must be true or false, got %s", name, "passes", truncate(string(v), 40)))
		}
		plan.Tasks = append(plan.Tasks, t)
	}
	return plan, errs
}

// ReadPlan reads and checks a plan file. A missing file returns os.ErrNotExist.
func ReadPlan(path string) (*Plan, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	p, errs := CheckPlan(data)
	return p, errs, nil
}

// Next returns the first task whose passes is false.
func (p *Plan) Next() (Task, bool) {
	if p == nil {
		return Task{}, false
	}
	for _, t := range p.Tasks {
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

// setPasses rewrites plan.json with one task's passes changed, keeping every
// other field of the file as the agent wrote it.
func setPasses(path, id string, passes bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	tasks, _ := doc["tasks"].([]any)
	for _, t := range tasks {
		if m, ok := t.(map[string]any); ok && m["id"] == id {
			m["passes"] = passes
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(out, '\n'))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
