package loop

import (
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// Best of N (docs/design.md "Best of N"): a task's next build run is N
// runs at once, each on a layer of its own over the unchanged loop folder
// (a wave whose runs all carry the same task). What needs no engine (the
// size of an attempt's change, the attempt kept, the failure when none
// passes, the refs) is in wave/; bestof_run.go runs and judges the
// attempts.

// attemptsFor is how many attempts the next build run of task t gets
// (wave.AttemptsFor).
func attemptsFor(l *spec.Loop, t Task, failed, same int) int {
	return wave.AttemptsFor(l, t.Attempts, failed, same)
}
