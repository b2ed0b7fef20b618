package loop

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// No-progress detection (docs/stopping.md): the same failure coming back
// budget.same_failure times in a row stops the loop NO PROGRESS.

// noteFailure feeds no-progress detection for agent attempts (build runs,
// ralph attempts). It returns a stop when the same failure came back
// budget.same_failure times in a row.
func (e *Engine) noteFailure(signal, tried string) error {
	e.st.LastFailure = signal
	if task := e.tagTask(); task != "" {
		return e.noteTaskFailure(task, signal, tried)
	}
	return e.noteRepeat(&e.st.FailureSig, &e.st.SameCount, &e.st.Tried, "", signal, tried)
}

// Repeat is one task's no-progress count in a wave: the signature of its
// last failure, how many times in a row it came back, what was tried.
type Repeat struct {
	Sig   string   `json:"sig"`
	Count int      `json:"count"`
	Tried []string `json:"tried,omitempty"`
}

// noteTaskFailure is noteFailure for a run of a wave: the runs of a wave
// work on different tasks at once, so a failure is counted against the
// last failure of its own task, not the last failure judged (which is
// another task's, and would reset the count every run). The same task
// failing the same way budget.same_failure times in a row, in whatever
// slots, stops the loop as a single run's would. The loop-wide count
// follows the task's, for the prompts and escalation.
func (e *Engine) noteTaskFailure(task, signal, tried string) error {
	if e.st.TaskRepeats == nil {
		e.st.TaskRepeats = map[string]*Repeat{}
	}
	rep := e.st.TaskRepeats[task]
	if rep == nil {
		rep = &Repeat{}
		e.st.TaskRepeats[task] = rep
	}
	e.st.FailureSig, e.st.SameCount, e.st.Tried = rep.Sig, rep.Count, rep.Tried
	defer func() { rep.Sig, rep.Count, rep.Tried = e.st.FailureSig, e.st.SameCount, e.st.Tried }()
	return e.noteRepeat(&e.st.FailureSig, &e.st.SameCount, &e.st.Tried, "", signal, tried)
}

// noteGateFailure is noteFailure for the cycle gate. It keeps its own count,
// so that tasks passing in between do not hide a gate that fails the same
// way every cycle.
func (e *Engine) noteGateFailure(signal, tried string) error {
	e.st.LastFailure = signal
	return e.noteRepeat(&e.st.GateSig, &e.st.GateSame, &e.st.GateTried, "cycle", signal, tried)
}

func (e *Engine) noteRepeat(last *string, count *int, triedList *[]string, gate, signal, tried string) error {
	sig := Signature(signal)
	if sig == *last {
		*count++
	} else {
		*last, *count, *triedList = sig, 1, nil
	}
	if tried != "" {
		if first := firstSignalLine(signal); first != "" {
			tried = strings.TrimRight(tried, ": ") + " → failed: " + first
		}
		e.st.RuledOut = append(e.st.RuledOut, tried)
		if len(e.st.RuledOut) > 20 {
			e.st.RuledOut = e.st.RuledOut[len(e.st.RuledOut)-20:]
		}
		*triedList = append(*triedList, tried)
		if len(*triedList) > 10 {
			*triedList = (*triedList)[len(*triedList)-10:]
		}
	}
	if *count >= 2 {
		e.emit(record.Event{Event: record.SameFailure, Gate: gate, Task: e.tagTask(), Signature: sig, Repeats: *count, FailureSignal: signal})
	}
	if *count >= e.spec.Budget.SameFailure {
		o := e.outcome(ReasonNoProgress, fmt.Sprintf("the same failure came back %d times in a row (signature %s)", *count, sig))
		if gate == "" && e.spec.Shape != spec.ShapeRalph {
			// Build runs that failed the engine's own rules (a task marked
			// done without a change, a run that never marked it): no
			// verify check ran on them, so none is to be read.
			o.Next = []string{"the same failure repeated: the diagnosis is wrong, not the effort",
				"no check ran on these build runs: the engine refused them each time for the same reason (the `same_failure` record and `looprinter logs` name it: " + truncate(firstSignalLine(signal), 120) + "); change the prompt's approach or split the task, then run again"}
		}
		return &errStop{o}
	}
	return nil
}

// firstSignalLine is the first line of a failure signal that says what
// failed: a FAIL/Error line or a violation, else the first line.
func firstSignalLine(signal string) string {
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
			return truncate(l, 160)
		}
	}
	return truncate(first, 160)
}

// progressMade resets no-progress detection after real progress.
func (e *Engine) progressMade() {
	e.st.FailureSig, e.st.SameCount, e.st.Tried, e.st.LastFailure = "", 0, nil, ""
	e.st.TaskRepeats = nil
}
