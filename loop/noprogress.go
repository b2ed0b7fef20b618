package loop

import (
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/stopping"
)

// No-progress detection (docs/stopping.md) is stopping.NoProgress: the same
// failure coming back budget.same_failure times in a row stops the loop NO
// PROGRESS. Its counters stay in the state.

// Repeat is one task's no-progress count in a wave (stopping.Repeat).
type Repeat = stopping.Repeat

// newNoProgress is the engine's no-progress detection, over its state's
// counters.
func newNoProgress(e *Engine) *stopping.NoProgress {
	st := e.st
	return &stopping.NoProgress{
		Counts: stopping.Counts{LastFailure: &st.LastFailure, FailureSig: &st.FailureSig, SameCount: &st.SameCount, Tried: &st.Tried,
			RuledOut: &st.RuledOut, GateSig: &st.GateSig, GateSame: &st.GateSame, GateTried: &st.GateTried, TaskRepeats: &st.TaskRepeats},
		Spec: func() *spec.Loop { return e.spec }, Emit: e.emit,
		Stop: func(summary string, next []string) error {
			o := e.outcome(ReasonNoProgress, summary)
			o.Next = next
			return &errStop{o}
		},
	}
}

// noteFailure feeds no-progress detection for agent attempts (build runs,
// ralph attempts). It returns a stop when the same failure came back
// budget.same_failure times in a row. A run of a wave counts against its
// own task's last failure.
func (e *Engine) noteFailure(signal, tried string) error {
	if task := e.tags.task(); task != "" {
		return e.nop.TaskFailure(task, signal, tried)
	}
	return e.nop.Failure(signal, tried)
}

// firstSignalLine is the first line of a failure signal that says what
// failed (stopping.FirstSignalLine).
func firstSignalLine(signal string) string { return stopping.FirstSignalLine(signal) }
