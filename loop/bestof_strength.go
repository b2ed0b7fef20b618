package loop

import (
	"context"
	"fmt"

	"github.com/looprinter/looprinter/judge"
)

// A best-of keeps an attempt by how well the task's checks pin it, then
// by its size: the smallest passing change is not the best when it is a
// special case of the tests' inputs (`if a == 2 && b == 3 { return 5 }`),
// which survives a mutant of its constants where an honest fix does not.
// When more than one attempt passed, each passing one gets a strength
// pass of its own over its layer (judge.AttemptStrength); an attempt no
// mutant of which could be judged ranks below one measured.

// attemptMutants bounds the mutants of one attempt's strength pass.
const attemptMutants = 12

// measureAttempts runs the strength pass of every passing attempt when
// more than one passed.
func (e *Engine) measureAttempts(ctx context.Context, task Task, runs []*waveRun, results []attemptResult) {
	passing := 0
	for _, a := range results {
		if a.Pass {
			passing++
		}
	}
	if passing < 2 {
		return
	}
	for i, rn := range runs {
		if !results[i].Pass || ctx.Err() != nil {
			continue
		}
		caught, judged := e.judge().AttemptStrength(ctx, judge.AttemptOptions{Task: task.ID, Index: rn.slot, Upper: rn.layer.Upper, Cmds: e.spec.GateChecks()}, attemptMutants)
		results[i].Caught, results[i].Judged = caught, judged
	}
}

// stronger says whether a is pinned better than b by the checks: a
// higher share of its mutants caught; a measured attempt over one that
// is not. ok is false when neither says more (equal, or both unmeasured).
func stronger(a, b attemptResult) (better, ok bool) {
	switch {
	case a.Judged == 0 && b.Judged == 0:
		return false, false
	case a.Judged == 0 || b.Judged == 0:
		return a.Judged > 0, true
	}
	// caught/judged compared without division.
	x, y := a.Caught*b.Judged, b.Caught*a.Judged
	if x == y {
		return false, false
	}
	return x > y, true
}

// strengthNote is what an attempt's record says of its strength pass.
func strengthNote(a attemptResult) string {
	if a.Judged == 0 {
		return ""
	}
	return fmt.Sprintf("; the checks caught %d of %d mutants of its lines", a.Caught, a.Judged)
}
