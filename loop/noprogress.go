package loop

// No-progress detection (docs/stopping.md) is stopping.NoProgress: the same
// failure coming back budget.same_failure times in a row stops the loop NO
// PROGRESS. Its counters stay in the state.

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
