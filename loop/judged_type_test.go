package loop

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// The judged plan without an engine: a mark an agent forged in plan.json
// is a violation, and the file is put back as the engine judged it.
func TestJudgedPlanTypePutsForgedMarkBack(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(loopdir.Dir(dir).Output(), 0o755)
	judged := &Plan{Tasks: []Task{
		{ID: "T-001", Title: "a", Description: "write a", TargetFile: "a.txt"},
		{ID: "T-002", Title: "b", Description: "write b", TargetFile: "b.txt"},
	}}
	forged := clonePlan(judged)
	forged.Tasks[1].Passes = true
	data, _ := json.Marshal(forged)
	if err := os.WriteFile(loopdir.Dir(dir).Plan(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	st := freshState()
	st.Judged = judged
	var evs []record.Event
	jp := &judgedPlan{dir: dir, st: st, emit: func(ev record.Event) { evs = append(evs, ev) },
		readPlan: func() (*Plan, []string, error) { return ReadPlan(loopdir.Dir(dir).Plan()) },
		noteWriteErr: func(err error) {
			if err != nil {
				t.Errorf("write: %v", err)
			}
		}}
	v := jp.enforceJudgedPlan("", "a test run")
	if len(v) != 1 || !strings.Contains(v[0], "T-002 was marked passes: true") {
		t.Fatalf("violations %q, want one for T-002's forged mark", v)
	}
	if len(evs) != 1 || evs[0].Event != record.Violation || evs[0].Task != "T-002" || evs[0].Kind != "plan_changed" {
		t.Errorf("records %+v, want one plan_changed violation for T-002", evs)
	}
	back, errs, err := ReadPlan(loopdir.Dir(dir).Plan())
	if err != nil || len(errs) > 0 || back.Tasks[1].Passes {
		t.Errorf("plan.json after: %+v %v %v, want T-002 back to passes: false", back, errs, err)
	}
}
