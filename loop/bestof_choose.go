package loop

import (
	"context"
	"errors"
	"fmt"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/record"
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

// chooseByReview runs the chooser over a best-of's judged attempts when
// the loop asks for it and more than one passed. An error is a stop
// (interrupted); every other failure falls back to the rule.
func (e *Engine) chooseByReview(ctx context.Context, task Task, runs []*waveRun, results []wave.Attempt) (wave.Choice, error) {
	var passing []int // attempt numbers, from 1
	for i, a := range results {
		if a.Pass {
			passing = append(passing, i+1)
		}
	}
	if !e.spec.Retry.ChoosesByReview() || len(passing) < 2 {
		return wave.Choice{}, nil
	}
	r := e.run
	fallBack := func(why string) (wave.Choice, error) {
		e.emit(record.Event{Event: record.Warning, Task: task.ID, Kind: "best_of_review",
			Message: fmt.Sprintf("retry.choose: review: %s: %s; the rule's pick is kept", task.ID, why)})
		return wave.Choice{Refused: why}, nil
	}
	if !r.layersInForce() {
		return fallBack("the reviewer runs only with a copy-on-write layer of its own, which this sandbox does not give")
	}
	var diffs []string
	for _, n := range passing {
		d, err := wave.LayerDiff(ctx, r.dir, runs[n-1].layer.Upper, wave.MaxChooserDiffs/len(passing))
		if err != nil {
			return fallBack(fmt.Sprintf("the diff of attempt %d cannot be read (%v)", n, err))
		}
		diffs = append(diffs, d)
	}
	rule, _ := wave.PickBest(results)
	prompt := wave.ChooserPrompt(wave.TaskText{ID: task.ID, Title: task.Title, Description: task.Description}, results, passing, diffs, rule+1, forge.Nonce())
	run, err := r.runViewOnly(ctx, len(runs), task.ID, prompt)
	if ctx.Err() != nil {
		return wave.Choice{}, r.stop(ReasonInterrupted, "interrupted while the reviewer chose among the attempts of "+task.ID)
	}
	if err != nil || run == nil {
		why := "the reviewer's run did not end with an answer"
		var s *errStop
		if errors.As(err, &s) && s.o != nil {
			why = "the reviewer's run ended without an answer: " + s.o.Summary
		}
		return fallBack(why)
	}
	keep, reason, perr := wave.ParseChoice(run.Result.FinalMessage, len(results), passing)
	if perr != nil {
		return fallBack("the reviewer's answer is refused: " + perr.Error())
	}
	return wave.Choice{Chosen: keep, Reason: reason}, nil
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
