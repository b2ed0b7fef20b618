package wave

import (
	"context"
	"fmt"

	"github.com/looprinter/looprinter/record"
)

// Review is retry.choose: review over a best-of's judged attempts: when
// the loop asks for it and more than one attempt passed, a reviewer is
// shown the passing attempts (ChooserPrompt) and its answer read strictly
// (ParseChoice). Every failure but a stop falls back to the rule's pick,
// with a warning saying why (Choice.Refused). The engine gives what it
// takes: whether its sandbox can give the reviewer a layer of its own,
// each attempt's layer, and the reviewer's run.
type Review struct {
	// Asked says the loop asks for a reviewer's pick.
	Asked bool
	// Viewable says the sandbox gives the reviewer a copy-on-write layer of
	// its own (asked only when a reviewer is to run).
	Viewable func() bool
	// Dir is the loop folder; Upper(i) attempt i's layer over it.
	Dir   string
	Upper func(i int) string
	// Nonce makes the prompt's fence lines.
	Nonce func() string
	// Run runs the reviewer on prompt: its final message, or why it gave
	// none, or an error that stops the loop.
	Run func(ctx context.Context, prompt string) (final, why string, err error)
	// Emit writes a record.
	Emit func(record.Event)
}

// Choose runs the reviewer over the judged attempts of task when asked and
// more than one passed: its pick, or none (Choice{}), or why none counts.
func (v Review) Choose(ctx context.Context, task TaskText, results []Attempt) (Choice, error) {
	var passing []int // attempt numbers, from 1
	for i, a := range results {
		if a.Pass {
			passing = append(passing, i+1)
		}
	}
	if !v.Asked || len(passing) < 2 {
		return Choice{}, nil
	}
	fallBack := func(why string) (Choice, error) {
		v.Emit(record.Event{Event: record.Warning, Task: task.ID, Kind: "best_of_review",
			Message: fmt.Sprintf("retry.choose: review: %s: %s; the rule's pick is kept", task.ID, why)})
		return Choice{Refused: why}, nil
	}
	if !v.Viewable() {
		return fallBack("the reviewer runs only with a copy-on-write layer of its own, which this sandbox does not give")
	}
	var diffs []string
	for _, n := range passing {
		d, err := LayerDiff(ctx, v.Dir, v.Upper(n-1), MaxChooserDiffs/len(passing))
		if err != nil {
			return fallBack(fmt.Sprintf("the diff of attempt %d cannot be read (%v)", n, err))
		}
		diffs = append(diffs, d)
	}
	rule, _ := PickBest(results)
	final, why, err := v.Run(ctx, ChooserPrompt(task, results, passing, diffs, rule+1, v.Nonce()))
	switch {
	case err != nil:
		return Choice{}, err
	case why != "":
		return fallBack(why)
	}
	keep, reason, perr := ParseChoice(final, len(results), passing)
	if perr != nil {
		return fallBack("the reviewer's answer is refused: " + perr.Error())
	}
	return Choice{Chosen: keep, Reason: reason}, nil
}
