package wave

import "fmt"

// A best-of keeps an attempt by how well the task's checks pin it, then
// by its size: the smallest passing change is not the best when it is a
// special case of the tests' inputs (`if a == 2 && b == 3 { return 5 }`),
// which survives a mutant of its constants where an honest fix does not.
// When more than one attempt passed, each passing one gets a strength
// pass of its own over its layer (the judge's AttemptPass, the passes
// run at once by the engine); an attempt no mutant of which could be
// judged ranks below one measured.

// AttemptMutants bounds the mutants of one attempt's strength pass.
const AttemptMutants = 12

// stronger says whether a is pinned better than b by the checks: a
// higher share of its mutants caught; a measured attempt over one that
// is not. ok is false when neither says more (equal, or both unmeasured).
func stronger(a, b Attempt) (better, ok bool) {
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

// StrengthNote is what an attempt's record says of its strength pass.
func StrengthNote(a Attempt) string {
	if a.Judged == 0 {
		return ""
	}
	return fmt.Sprintf("; the checks caught %d of %d mutants of its lines", a.Caught, a.Judged)
}
