package loop

import (
	"context"
	"errors"
	"os"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// StepOptions tune RunStep.
type StepOptions struct {
	Options
	// Run names the run in the records (a fleet uses its workflow id).
	Run string
	// Notes are recorded as warnings before the step (a previous attempt of
	// the step that died on another machine, a branch that moved).
	Notes []string
}

// RunStep runs exactly one step of the loop in l.Dir — the next step of the
// state machine, from the engine's own copy of the state — and saves the
// state, as Run does between two steps. It returns the outcome when the
// step stopped the loop, and nil when the loop goes on. A durable workflow
// engine calls it once per activity: the state and the private folder are
// put in place before the call and read back after it.
//
// The first step of a loop writes loop_start, the last one loop_stop; the
// steps between write only their own records, so the records read as one
// run. An in-flight run found in the state (an engine that died mid-step)
// is judged first, as Run judges it.
func RunStep(ctx context.Context, l *spec.Loop, opts StepOptions) (*Outcome, error) {
	e, untrusted, resumed, err := openEngine(l, opts.Options, opts.Run, false)
	if err != nil {
		return nil, err
	}
	defer e.close()
	st := e.st
	if st.Outcome != "" && st.Phase != PhaseDone {
		// A stopped loop runs on: the previous stop is history.
		st.Outcome, st.Summary, st.PlanArchive = "", "", ""
	}
	if err := e.store.checkpoint(); err != nil {
		return nil, err
	}
	if !resumed {
		e.emit(record.Event{Event: record.LoopStart, Loop: l.Name, Shape: l.Shape, LoopFile: l.Path, Dir: e.dir, PID: os.Getpid(), Phase: st.Phase})
		for _, w := range l.Warnings() {
			e.emit(record.Event{Event: record.Warning, Message: w})
		}
	}
	e.recordUntrusted(untrusted)
	if l.Redact.Off {
		e.st.addNotVerified(redactionNote)
	}
	for _, n := range opts.Notes {
		e.emit(record.Event{Event: record.Warning, Message: n})
	}
	end := func(o *Outcome) (*Outcome, error) {
		e.run.net.Close() // every connection's record before the final state
		out := e.finish(o)
		e.store.tallySpend()
		return out, nil
	}
	e.noteRecreated()
	e.store.noteDeadWall()
	e.gates.refreshVacuous()
	if err := e.recover(); err != nil {
		return end(e.outcome(ReasonBlocked, err.Error()))
	}
	if err := e.gates.holdoutStart(); err != nil {
		return end(e.outcome(ReasonBlocked, err.Error()))
	}
	if st.Phase == PhaseDone {
		return end(e.doneOutcome())
	}
	if o := e.oneStep(ctx); o != nil {
		return end(o)
	}
	return nil, nil
}

// oneStep is one turn of Engine.loop: it runs the step of the current phase
// and saves the state, or returns the outcome that stopped the loop (DONE
// once the step reached it).
func (e *Engine) oneStep(ctx context.Context) *Outcome {
	if ctx.Err() != nil {
		return e.outcome(ReasonInterrupted, "interrupted; state and records were written")
	}
	// A full disk stops the loop before a step spends anything, and after
	// one, before its failures (the agent's, a check's, a write of the
	// engine's) are taken for the agent's: BLOCKED, whatever else the step
	// decided, but DONE or an interruption.
	if why := e.store.noSpace(); why != "" {
		return e.outcome(ReasonBlocked, why)
	}
	o := e.step(ctx)
	if o == nil || o.Reason != ReasonDone && o.Reason != ReasonInterrupted {
		if why := e.store.noSpace(); why != "" {
			return e.outcome(ReasonBlocked, why)
		}
	}
	return o
}

// step runs the step of the phase the loop is in; nil: the loop goes on.
func (e *Engine) step(ctx context.Context) *Outcome {
	if err := e.run.waitForAnswer(ctx); err != nil {
		var s *errStop
		if errors.As(err, &s) {
			return s.o
		}
		return e.outcome(ReasonBlocked, "cannot save state: "+err.Error())
	}
	e.reloadSpec()
	if err := e.approval.Hold(ctx); err != nil {
		var s *errStop
		if errors.As(err, &s) {
			return s.o
		}
		return e.outcome(ReasonBlocked, err.Error())
	}
	var err error
	switch e.st.Phase {
	case "", PhaseSetup:
		err = e.gates.setup(ctx)
	case PhaseBaseline:
		err = e.gates.baseline(ctx)
	case PhasePlan, PhaseBuild:
		if e.spec.Shape == spec.ShapeRalph {
			e.st.Phase = PhaseRalph
			err = e.stepRalph(ctx)
		} else {
			err = e.stepPlanOrBuild(ctx)
		}
	case PhaseRalph:
		err = e.stepRalph(ctx)
	case PhaseReview:
		err = e.review.Step(ctx)
	case PhaseCycleGate:
		err = e.stepCycleGate(ctx)
	case PhaseObjective:
		err = e.stepObjectiveGate(ctx)
	case PhasePost:
		err = e.stepPost(ctx)
	default:
		e.st.Phase = PhaseSetup
	}
	if errors.Is(err, errAsked) {
		err = nil // the step runs again once the question is answered
	}
	if err != nil {
		var s *errStop
		if errors.As(err, &s) {
			return s.o
		}
		return e.outcome(ReasonBlocked, err.Error())
	}
	if err := e.takeHookErr(); err != nil {
		e.store.checkpoint()
		return e.outcome(ReasonBlocked, err.Error())
	}
	if err := e.store.stepEnd(); err != nil {
		return e.outcome(ReasonBlocked, "cannot save state: "+err.Error())
	}
	if e.st.Phase == PhaseDone {
		return e.doneOutcome()
	}
	return nil
}

// InFlightCost is what the agent run in flight in st has cost so far, as its
// transcript in dir reports it (0 when no run is in flight or its
// transcript is unreadable). A fleet worker sends it with its heartbeats, so
// that a run whose machine dies is still counted.
func InFlightCost(l *spec.Loop, st *State) float64 {
	if st == nil || st.InFlight == nil || st.InFlight.Transcript == "" {
		return 0
	}
	f := st.InFlight
	a := l.AgentFor(f.Phase, f.Post)
	ad, err := agent.Lookup(a.Backend)
	if err != nil {
		return 0
	}
	req := agent.Request{Phase: f.Phase, Task: f.Task, Dir: l.Dir, Backend: a.Backend, Model: a.Model, Prices: prices(l.Prices), Transcript: f.Transcript}
	return agent.ParseTranscript(req, ad).CostUSD
}

// loop drives the state machine until a step returns an outcome: between
// steps it holds while paused, then runs one step (oneStep, which a fleet
// worker also calls on its own).
func (e *Engine) loop(ctx context.Context) *Outcome {
	for {
		if ctx.Err() != nil {
			return e.outcome(ReasonInterrupted, "interrupted; state and records were written")
		}
		if err := e.waitWhilePaused(ctx); err != nil {
			var s *errStop
			if errors.As(err, &s) {
				return s.o
			}
		}
		if e.st.Phase == PhaseDone {
			return e.doneOutcome()
		}
		if o := e.oneStep(ctx); o != nil {
			return o
		}
		e.store.keepSummary()
	}
}
