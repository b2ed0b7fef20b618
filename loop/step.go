package loop

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
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

// waitWhilePaused holds the loop between agent runs while the pause file exists.
func (e *Engine) waitWhilePaused(ctx context.Context) error {
	if _, err := os.Stat(loopdir.Dir(e.dir).Pause()); err != nil {
		return nil
	}
	e.emit(record.Event{Event: record.Paused, Message: "paused before the next agent run; `looprinter resume` goes on"})
	e.store.flush() // a pause can last hours: what the last step did reaches the disk now
	for {
		select {
		case <-ctx.Done():
			return e.stop(ReasonInterrupted, "interrupted while paused")
		case <-time.After(250 * time.Millisecond):
		}
		e.store.mark = time.Now() // time spent paused is not loop time
		if _, err := os.Stat(loopdir.Dir(e.dir).Pause()); err != nil {
			e.emit(record.Event{Event: record.Resumed})
			return nil
		}
	}
}

// reloadSpec picks up changes to the loop file before each agent run.
func (e *Engine) reloadSpec() {
	fi, err := os.Stat(e.spec.Path)
	if err != nil || fi.ModTime().Equal(e.specTime) {
		return
	}
	e.specTime = fi.ModTime()
	l, err := spec.Load(e.spec.Path)
	if err != nil {
		e.emit(record.Event{Event: record.Warning, Message: "the loop file changed but is invalid; keeping the previous one: " + err.Error()})
		return
	}
	changes := spec.Diff(e.spec, l)
	if len(changes) == 0 {
		return
	}
	if l.Shape != e.spec.Shape {
		e.emit(record.Event{Event: record.Warning, Message: "the loop file's shape changed; a running loop keeps its shape"})
		l.Shape = e.spec.Shape
	}
	e.spec = l
	e.setRedactor(Redactor(l))
	e.gates.refreshVacuous()
	e.emit(record.Event{Event: record.SpecChanged, Changes: changes, Message: strings.Join(changes, "\n")})
}
