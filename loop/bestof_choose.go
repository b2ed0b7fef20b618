package loop

import (
	"context"
	"errors"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// retry.choose: review (docs/design.md "Best of N"). Once a best-of's
// attempts are judged and more than one passed, a reviewer agent (the
// chooser: agents.reviewer, else the build agent) is shown the passing
// attempts only, each with its figures and its diff fenced as untrusted
// text, and answers with the number of the attempt to keep. It runs with
// a fresh context in a slot of its own beyond the attempts', its HOME
// layers emptied, and sees the loop folder through a layer nothing of
// which is applied. Its pick is only tried first: wave.Keeper re-judges
// it on the applied tree and falls back to the rule's order, and an
// answer that is missing, malformed, out of range or names an attempt
// that did not pass keeps the rule's pick, with a warning saying why. Its
// prompt and the reading of its answer are wave's (choose_prompt.go).

// Choose runs the chooser over a best-of's judged attempts when the loop
// asks for it and more than one passed (wave.Review). An error is a stop
// (interrupted); every other failure falls back to the rule.
func (h *bestOfHost) Choose(ctx context.Context, runs []*waveRun, results []wave.Attempt) (wave.Choice, error) {
	r, task := h.ws.run, h.task
	return wave.Review{
		Asked:    r.spec().Retry.ChoosesByReview(),
		Viewable: r.layersInForce,
		Dir:      r.dir,
		Upper:    func(i int) string { return runs[i].layer.Upper },
		Nonce:    forge.Nonce,
		Run: func(ctx context.Context, prompt string) (string, string, error) {
			run, err := r.runViewOnly(ctx, len(runs), task.ID, prompt)
			if ctx.Err() != nil {
				return "", "", r.stop(ReasonInterrupted, "interrupted while the reviewer chose among the attempts of "+task.ID)
			}
			if err != nil || run == nil {
				why := "the reviewer's run did not end with an answer"
				var s *errStop
				if errors.As(err, &s) && s.o != nil {
					why = "the reviewer's run ended without an answer: " + s.o.Summary
				}
				return "", why, nil
			}
			return run.Result.FinalMessage, "", nil
		},
		Emit: r.emit,
	}.Choose(ctx, wave.TaskText{ID: task.ID, Title: task.Title, Description: task.Description}, results)
}

// runViewOnly runs the chooser in slot (one past the attempts'): its own
// layer over the loop folder, applied never, cleared after. The state's
// runs in flight stay the attempts' (the chooser's entry added to them
// while it runs).
func (r *runner) runViewOnly(ctx context.Context, slot int, task, prompt string) (*AgentRun, error) {
	prev := r.st.InFlight
	if prev != nil {
		r.st.InFlightMore = append([]*InFlight{prev}, r.st.InFlightMore...)
	}
	r.st.InFlight = nil
	r.slot, r.viewOnly = slot, true
	defer func() {
		l, _ := slotLayer(r.dir, slot)
		sandbox.ClearLayer(l) // nothing the chooser wrote reaches the folder
		r.slot, r.viewOnly, r.layer, r.trees = 0, false, nil, nil
		if prev != nil {
			r.dropInFlight(prev)
		}
		r.st.InFlight = prev
	}()
	return r.runAgent(ctx, spec.PhaseChooser, false, task, prompt)
}
