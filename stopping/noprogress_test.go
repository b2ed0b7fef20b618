package stopping

import (
	"errors"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// counts is a state's counters for a NoProgress without an engine.
type counts struct {
	last, sig, gateSig string
	same, gateSame     int
	tried, ruled, gt   []string
	tasks              map[string]*Repeat
}

func noProgress(shape string, same int) (*NoProgress, *counts, *[]record.Event, *[]string) {
	c := &counts{}
	var evs []record.Event
	var next []string
	l := &spec.Loop{Shape: shape}
	l.Budget.SameFailure = same
	return &NoProgress{
		Counts: Counts{LastFailure: &c.last, FailureSig: &c.sig, SameCount: &c.same, Tried: &c.tried, RuledOut: &c.ruled,
			GateSig: &c.gateSig, GateSame: &c.gateSame, GateTried: &c.gt, TaskRepeats: &c.tasks},
		Spec: func() *spec.Loop { return l },
		Emit: func(ev record.Event) { evs = append(evs, ev) },
		Stop: func(summary string, n []string) error { next = n; return errors.New(summary) },
	}, c, &evs, &next
}

// The same failure budget.same_failure times in a row stops; another one
// in between starts the count again; what was tried carries its first
// failing line.
func TestNoProgressSameFailure(t *testing.T) {
	n, c, evs, next := noProgress(spec.ShapeCycle, 3)
	fail := "--- FAIL: TestA\nmore"
	if err := n.Failure(fail, "run 1: tried x"); err != nil || c.same != 1 {
		t.Fatalf("first failure: %v, count %d", err, c.same)
	}
	if err := n.Failure("other", ""); err != nil || c.same != 1 {
		t.Fatalf("another failure: %v, count %d", err, c.same)
	}
	n.Failure(fail, "")
	n.Failure(fail, "")
	err := n.Failure(fail, "")
	if err == nil || !strings.Contains(err.Error(), "3 times in a row") {
		t.Fatalf("third same failure: %v", err)
	}
	if len(*next) != 2 {
		t.Errorf("next steps %q, want the build runs' two", *next)
	}
	if c.last != fail || len(c.ruled) != 1 || c.ruled[0] != "run 1: tried x → failed: --- FAIL: TestA" {
		t.Errorf("last %q, ruled out %q", c.last, c.ruled)
	}
	if len(*evs) != 2 || (*evs)[1].Event != record.SameFailure || (*evs)[1].Repeats != 3 {
		t.Errorf("records %+v", *evs)
	}
	n.Progress()
	if c.same != 0 || c.sig != "" || c.last != "" {
		t.Errorf("after progress: count %d sig %q last %q", c.same, c.sig, c.last)
	}
}

// The gate counts apart, and a ralph loop's stop keeps the default next
// steps.
func TestNoProgressGateApart(t *testing.T) {
	n, c, _, next := noProgress(spec.ShapeRalph, 2)
	n.GateFailure("gate broke", "")
	n.Failure("gate broke", "")
	if c.gateSame != 1 || c.same != 1 {
		t.Fatalf("gate count %d, run count %d", c.gateSame, c.same)
	}
	if err := n.GateFailure("gate broke", ""); err == nil {
		t.Fatal("the gate's second same failure did not stop")
	}
	if *next != nil {
		t.Errorf("gate stop's next steps %q, want the default", *next)
	}
	n2, _, _, next2 := noProgress(spec.ShapeRalph, 1)
	if n2.Failure("x", "") == nil || *next2 != nil {
		t.Errorf("ralph stop's next steps %q", *next2)
	}
}

// A wave's runs count per task: another task's failure between two of one
// task's does not reset its count.
func TestNoProgressPerTask(t *testing.T) {
	n, c, evs, _ := noProgress(spec.ShapeCycle, 3)
	n.TaskFailure("T-1", "a", "")
	n.TaskFailure("T-2", "b", "")
	n.TaskFailure("T-1", "a", "")
	if c.tasks["T-1"].Count != 2 || c.tasks["T-2"].Count != 1 {
		t.Fatalf("counts T-1 %d T-2 %d", c.tasks["T-1"].Count, c.tasks["T-2"].Count)
	}
	if last := (*evs)[len(*evs)-1]; last.Task != "T-1" || last.Repeats != 2 {
		t.Errorf("record %+v", last)
	}
	if n.TaskFailure("T-1", "a", "") == nil {
		t.Error("T-1's third same failure did not stop")
	}
	n.Progress()
	if c.tasks != nil {
		t.Error("progress kept the tasks' counts")
	}
}
