package loop

import "context"

// stepReview runs the review shape (writer → reviewer → fixer rounds).
// Placeholder until the review shape lands: it stops BLOCKED and says so.
func (e *Engine) stepReview(ctx context.Context) error {
	return e.stop(ReasonBlocked, "the review shape is not implemented in this build")
}
