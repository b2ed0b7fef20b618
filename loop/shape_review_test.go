package loop

import (
	"testing"

	"github.com/looprinter/looprinter/review"
)

// The review shape ends the loop with the engine's own reasons: the two
// lists must not drift apart.
func TestReviewReasonsAreTheEngines(t *testing.T) {
	for _, c := range [][2]string{
		{review.ReasonDone, ReasonDone},
		{review.ReasonBudget, ReasonBudget},
		{review.ReasonNoProgress, ReasonNoProgress},
		{review.ReasonBlocked, ReasonBlocked},
		{review.ReasonInterrupted, ReasonInterrupted},
	} {
		if c[0] != c[1] {
			t.Errorf("review stops with %q where the engine's reason is %q", c[0], c[1])
		}
	}
}
