// Package stopping decides when a loop stops for lack of progress or at a
// limit, below the engine and testable without it: the same failure coming
// back (NoProgress, docs/stopping.md), the usage-limit policy
// (LimitRefusal) and the advice of a loop its wall budget stopped
// (WallNextSteps). The counters stay in the engine's state; the engine
// composes these (loop/noprogress.go, loop/limits.go).
package stopping

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/textcut"
)

// Repeat is one task's no-progress count in a wave: the signature of its
// last failure, how many times in a row it came back, what was tried.
type Repeat struct {
	Sig   string   `json:"sig"`
	Count int      `json:"count"`
	Tried []string `json:"tried,omitempty"`
}

// Counts are the counters no-progress detection keeps, in the engine's
// state (state.json): pointers to them.
type Counts struct {
	LastFailure *string // the failure signal of the last failed attempt
	// FailureSig, SameCount and Tried: the last failure's signature, how
	// many times in a row it came, what was tried against it.
	FailureSig *string
	SameCount  *int
	Tried      *[]string
	RuledOut   *[]string // every failed attempt, the last 20
	// GateSig, GateSame and GateTried are the cycle gate's, apart.
	GateSig   *string
	GateSame  *int
	GateTried *[]string
	// TaskRepeats are a wave's runs' counts, per task.
	TaskRepeats *map[string]*Repeat
}

// NoProgress stops the loop when the same failure comes back
// budget.same_failure times in a row.
type NoProgress struct {
	Counts
	Spec func() *spec.Loop // the loop file in force
	Emit func(record.Event)
	// Stop is the engine's NO PROGRESS stop with its summary and, when not
	// nil, its next steps.
	Stop func(summary string, next []string) error
}

// Failure feeds no-progress detection for an agent attempt (a build run, a
// ralph attempt). It returns a stop when the same failure came back
// budget.same_failure times in a row.
func (n *NoProgress) Failure(signal, tried string) error {
	*n.LastFailure = signal
	return n.repeat(counter{n.FailureSig, n.SameCount, n.Tried}, "", "", signal, tried)
}

// TaskFailure is Failure for a run of a wave: the runs of a wave work on
// different tasks at once, so a failure is counted against the last
// failure of its own task, not the last failure judged (which is another
// task's, and would reset the count every run). The same task failing the
// same way budget.same_failure times in a row, in whatever slots, stops
// the loop as a single run's would. The loop-wide count follows the
// task's, for the prompts and escalation.
func (n *NoProgress) TaskFailure(task, signal, tried string) error {
	*n.LastFailure = signal
	if *n.TaskRepeats == nil {
		*n.TaskRepeats = map[string]*Repeat{}
	}
	rep := (*n.TaskRepeats)[task]
	if rep == nil {
		rep = &Repeat{}
		(*n.TaskRepeats)[task] = rep
	}
	*n.FailureSig, *n.SameCount, *n.Tried = rep.Sig, rep.Count, rep.Tried
	defer func() { rep.Sig, rep.Count, rep.Tried = *n.FailureSig, *n.SameCount, *n.Tried }()
	return n.repeat(counter{n.FailureSig, n.SameCount, n.Tried}, "", task, signal, tried)
}

// GateFailure is Failure for the cycle gate. It keeps its own count, so
// that tasks passing in between do not hide a gate that fails the same way
// every cycle.
func (n *NoProgress) GateFailure(signal, tried string) error {
	*n.LastFailure = signal
	return n.repeat(counter{n.GateSig, n.GateSame, n.GateTried}, "cycle", "", signal, tried)
}

// counter is one of the counts repeat keeps: the last failure's signature,
// how many times in a row it came, what was tried against it.
type counter struct {
	last      *string
	n         *int
	triedList *[]string
}

func (n *NoProgress) repeat(c counter, gate, task, signal, tried string) error {
	last, count, triedList := c.last, c.n, c.triedList
	sig := judge.Signature(signal)
	if sig == *last {
		*count++
	} else {
		*last, *count, *triedList = sig, 1, nil
	}
	if tried != "" {
		if first := FirstSignalLine(signal); first != "" {
			tried = strings.TrimRight(tried, ": ") + " → failed: " + first
		}
		*n.RuledOut = append(*n.RuledOut, tried)
		if len(*n.RuledOut) > 20 {
			*n.RuledOut = (*n.RuledOut)[len(*n.RuledOut)-20:]
		}
		*triedList = append(*triedList, tried)
		if len(*triedList) > 10 {
			*triedList = (*triedList)[len(*triedList)-10:]
		}
	}
	if *count >= 2 {
		n.Emit(record.Event{Event: record.SameFailure, Gate: gate, Task: task, Signature: sig, Repeats: *count, FailureSignal: signal})
	}
	l := n.Spec()
	if *count >= l.Budget.SameFailure {
		var next []string
		if gate == "" && l.Shape != spec.ShapeRalph {
			// Build runs that failed the engine's own rules (a task marked
			// done without a change, a run that never marked it): no
			// verify check ran on them, so none is to be read.
			next = []string{"the same failure repeated: the diagnosis is wrong, not the effort",
				"no check ran on these build runs: the engine refused them each time for the same reason (the `same_failure` record and `looprinter logs` name it: " + textcut.Cut(FirstSignalLine(signal), 120) + "); change the prompt's approach or split the task, then run again"}
		}
		return n.Stop(fmt.Sprintf("the same failure came back %d times in a row (signature %s)", *count, sig), next)
	}
	return nil
}

// Progress resets no-progress detection after real progress.
func (n *NoProgress) Progress() {
	*n.FailureSig, *n.SameCount, *n.Tried, *n.LastFailure = "", 0, nil, ""
	*n.TaskRepeats = nil
}

// FirstSignalLine is the first line of a failure signal that says what
// failed: a FAIL/Error line or a violation, else the first line.
func FirstSignalLine(signal string) string {
	var first string
	for _, l := range strings.Split(signal, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if first == "" {
			first = l
		}
		if judge.FailLine(l) || strings.HasPrefix(l, "VIOLATION") {
			return textcut.Cut(l, 160)
		}
	}
	return textcut.Cut(first, 160)
}
