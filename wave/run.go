package wave

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/record"
)

// The orchestration of a wave and of a best-of: in which order the runs
// start, run, are judged, applied and saved, and what happens when one of
// them cannot start, stops the loop, or fails. The engine gives what it
// takes (a Host, a BestOfHost: start a run in a slot, run the started
// runs at once, judge and apply one, the saves, the records) as it gives
// the judge what it takes; R is its own handle on one started run.

// Runs is what both a wave and a best-of take of the engine.
type Runs[R any] interface {
	// Start prepares the run in slot k (from 0): the budgets asked, its
	// layer and confinement, its prompt, in flight in the state. An error
	// is a stop.
	Start(k int) (R, error)
	// Begin readies the started runs to run at once (one save with every
	// run in flight, an agent_start each); an error is a stop. Try runs
	// one run's agent, with its retries and waits, on a goroutine of its
	// own, beside the others' (what it changes of the engine's is the
	// engine's to guard). End follows once every Try returned: nothing
	// any run started outlives the runs.
	Begin(runs []R) error
	Try(ctx context.Context, r R)
	End(runs []R)
	// Save saves the state with the verdicts given since the last save;
	// Saved drops the note of r's apply once its verdict is saved.
	Save() error
	Saved(r R)
}

// Host is what a wave of build runs takes of the engine.
type Host[R any] interface {
	Runs[R]
	// Finish judges and applies one ended run, in plan order after the
	// runs before it, and judges its task on the tree the applies left.
	Finish(ctx context.Context, r R) error
}

// Speculator is a Host that judges a wave's runs at once before any is
// applied (speculative prefix judging): run k on the tree the applies of
// runs 0..k in plan order leave when each lands as assumed (applied
// whole, merged cleanly, passed, nothing refused or put back). The
// applies and verdicts still follow one by one in plan order; a run's
// speculative verdict is used only while every run before it finished as
// assumed (Trust), and Finish checks the tree itself before using it.
// From the first run that did not, the rest are judged on the tree as
// today.
type Speculator[R any] interface {
	// Speculate judges runs[k] on its prefix's tree, unapplied; several
	// at once (Wave.Workers), each on a goroutine of its own, after End.
	Speculate(ctx context.Context, runs []R, k int)
	// Trust says, before Finish(r), whether every run before r finished
	// as assumed: only then may r's speculative verdict stand.
	Trust(r R, ok bool)
	// AsAssumed says, after Finish(r), whether r finished as its prefix
	// assumed.
	AsAssumed(r R) bool
}

// Wave runs the build runs of N ready tasks at once (slots 0..N-1), then
// finishes them one by one in plan order. A run that cannot start stops
// the starts: the ones started run and are finished, then its error is
// returned. Each verdict is saved before the next run is finished; the
// first error is returned.
type Wave[R any] struct {
	Host Host[R]
	N    int
	// Workers bounds the runs judged at once before the applies when the
	// Host is a Speculator (below 2: none; each is judged after its
	// apply); the engine gives its cores.
	Workers int
}

// Run runs the wave.
func (w Wave[R]) Run(ctx context.Context) error {
	h := w.Host
	var runs []R
	var pending error
	for k := 0; k < w.N; k++ {
		rn, err := h.Start(k)
		if err != nil {
			pending = err
			break
		}
		runs = append(runs, rn)
	}
	if len(runs) == 0 {
		return pending
	}
	if err := runAll(ctx, h, runs); err != nil {
		return err
	}
	sp, speculate := h.(Speculator[R])
	speculate = speculate && w.Workers > 1 && len(runs) > 1 && ctx.Err() == nil
	if speculate {
		Each(ctx, len(runs), w.Workers, func(i int) { sp.Speculate(ctx, runs, i) })
	}
	exact := speculate // every run finished so far as assumed
	for _, rn := range runs {
		if speculate {
			sp.Trust(rn, exact)
		}
		err := h.Finish(ctx, rn)
		if err != nil && pending == nil {
			pending = err
		}
		if speculate {
			exact = exact && err == nil && sp.AsAssumed(rn)
		}
		if err := h.Save(); err != nil {
			if pending == nil {
				pending = err
			}
		} else {
			h.Saved(rn) // its verdict is saved
		}
	}
	return pending
}

// runAll runs the started runs at once and waits for every one to end.
func runAll[R any](ctx context.Context, h Runs[R], runs []R) error {
	if err := h.Begin(runs); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, rn := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Try(ctx, rn)
		}()
	}
	wg.Wait()
	h.End(runs)
	return nil
}

// BestOfHost is what a best-of takes of the engine.
type BestOfHost[R any] interface {
	Runs[R]
	// Unstart drops a started attempt that never ran (a best-of starts
	// whole): its cgroup, its layers, its place in flight, its iteration.
	Unstart(r R)
	// Stopped is the stop an attempt met while it ran (nil: none).
	Stopped(r R) error
	// Abandon writes the agent_end of an attempt nothing of which is
	// judged and drops it.
	Abandon(r R)
	// Interrupted and Blocked are the engine's stops.
	Interrupted(summary string) error
	Blocked(summary string) error
	// Judge judges an ended attempt on its own layer, unapplied: its
	// result and, when its agent run itself ended without working, why.
	// Several attempts are judged at once, each on a goroutine of its own
	// (BestOf.Workers): what Judge changes of the engine's is the
	// engine's to guard, and each attempt's records carry its run.
	Judge(ctx context.Context, r R) (Attempt, string)
	// Measure runs the strength pass of the passing attempts (at once,
	// each writing only its own attempt's Caught and Judged).
	Measure(ctx context.Context, runs []R, results []Attempt)
	// Choose runs the reviewer over the judged attempts (retry.choose:
	// review); an error is a stop.
	Choose(ctx context.Context, runs []R, results []Attempt) (Choice, error)
	// Keep applies a passing attempt and judges it on the applied tree;
	// not kept, the apply was taken back and a says why it failed there.
	// Drop clears an attempt's layers and takes it out of flight.
	Keep(ctx context.Context, r R, a *Attempt) (bool, error)
	Drop(r R)
	// Emit writes a record; EmitFor one tagged with r's run.
	Emit(ev record.Event)
	EmitFor(r R, ev record.Event)
	// Failed notes one failed try of the task, none of its attempts
	// passing: signal is every attempt's failure, summary the record's.
	Failed(signal, summary string) error
	// JudgeKept judges the task of the kept attempt, applied and passing.
	JudgeKept(ctx context.Context, r R) error
	// Iteration is r's build run number.
	Iteration(r R) int
}

// BestOf runs N attempts of one task at once (slots 0..N-1), judges each
// on its own layer, keeps the best passing one (the reviewer's pick tried
// first, then the rule's order: Keeper), the others dropped, or notes one
// failed try whose failure is every attempt's.
type BestOf[R any] struct {
	Host BestOfHost[R]
	Task string
	N    int
	// Workers bounds the attempts judged at once (below 2: one after
	// another, in slot order); the engine gives its cores.
	Workers int
}

// Run runs the best-of.
func (b BestOf[R]) Run(ctx context.Context) error {
	h, task := b.Host, b.Task
	var runs []R
	for k := 0; k < b.N; k++ {
		rn, err := h.Start(k)
		if err != nil {
			for _, s := range runs { // started runs are dropped unrun
				h.Unstart(s)
			}
			return err
		}
		runs = append(runs, rn)
	}
	if err := runAll(ctx, h, runs); err != nil {
		return err
	}
	var stop error
	for _, rn := range runs {
		if err := h.Stopped(rn); err != nil && stop == nil {
			stop = err
		}
	}
	if stop != nil || ctx.Err() != nil {
		for _, rn := range runs { // nothing of any attempt reaches the folder
			h.Abandon(rn)
		}
		if stop != nil {
			return stop
		}
		return h.Interrupted("interrupted during the attempts of " + task + "; the agents were stopped")
	}
	// The attempts are judged at once (Each), their verdicts read in slot
	// order.
	results := make([]Attempt, len(runs))
	whys := make([]string, len(runs))
	Each(ctx, len(runs), b.Workers, func(i int) { results[i], whys[i] = h.Judge(ctx, runs[i]) })
	if ctx.Err() != nil {
		for _, rn := range runs {
			h.Drop(rn)
		}
		return h.Interrupted("interrupted while the attempts of " + task + " were judged")
	}
	blocked := 0
	var first string // the first attempt's reason to stop, when every one ended so
	for _, why := range whys {
		if why != "" {
			blocked++
			if first == "" {
				first = why
			}
		}
	}
	h.Measure(ctx, runs, results)
	pick, err := h.Choose(ctx, runs, results)
	if err != nil {
		for _, rn := range runs {
			h.Drop(rn)
		}
		return err
	}
	// The failing attempts go now (their work is on their refs); the
	// passing ones once one has passed on the applied tree.
	best, ok, err := Keeper{
		Apply:  func(i int) (bool, error) { return h.Keep(ctx, runs[i], &results[i]) },
		Drop:   func(i int) { h.Drop(runs[i]) },
		Chosen: pick.Chosen,
	}.Keep(results)
	b.record(runs, results, pick, best, ok && err == nil, ok)
	if err != nil {
		h.Drop(runs[best]) // applied, or stopped before it
		if serr := h.Save(); serr == nil {
			h.Saved(runs[best])
		}
		return err
	}
	if !ok {
		if blocked == len(runs) {
			return h.Blocked("every attempt of " + task + " ended without working: " + first)
		}
		err := h.Failed(Failure(task, results), fmt.Sprintf("runs %d–%d on %s: %d attempts at once, none passed", h.Iteration(runs[0]), h.Iteration(runs[len(runs)-1]), task, len(runs)))
		if serr := h.Save(); serr != nil && err == nil {
			err = serr
		}
		return err
	}
	// The kept attempt, applied and passing on the applied tree: its task
	// is judged as one run of a wave.
	err = h.JudgeKept(ctx, runs[best])
	if serr := h.Save(); serr != nil && err == nil {
		err = serr
	} else if serr == nil {
		h.Saved(runs[best]) // its verdict is saved
	}
	return err
}

// record writes each attempt's attempt_judged (the kept one naming where
// the others are), then, when one was kept (chosen), the best_of_chosen.
// kept says the attempt at best is kept.
func (b BestOf[R]) record(runs []R, results []Attempt, pick Choice, best int, chosen, kept bool) {
	var others []string // where the attempts not kept are, for the report's line
	for i, a := range results {
		if (!kept || i != best) && a.Ref != "" {
			others = append(others, a.Ref)
		}
	}
	for i, rn := range runs {
		ev := pick.AttemptEvent(b.Task, len(runs), results[i], kept && i == best, kept && best == pick.Chosen-1)
		if kept && i == best && len(others) > 0 {
			ev.Message += "; the other attempts on " + strings.Join(others, ", ")
		}
		b.Host.EmitFor(rn, ev)
	}
	if chosen {
		b.Host.Emit(pick.ChosenEvent(b.Task, results, best))
	}
}
