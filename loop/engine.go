// Package loop is the engine: the loop shapes, their phases and gates, the
// budgets, and the state machine over working-records/state.json. It prints
// nothing and never exits the process: it writes records (which the CLI
// renders) and returns an Outcome.
package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/prompt"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/stopping"
)

// Options tune a run. The zero value is ready to use.
type Options struct {
	// Subscribers see every record as it is written (console, notifier, git).
	Subscribers []func(record.Event)
	// Backoff gives the wait before retry n (from 1) after an API error or a
	// rate limit without a reset time. Defaults to 5s·3^(n-1), at most 10m.
	Backoff func(n int) time.Duration
	// Fresh moves the old state aside and starts the counters again.
	Fresh bool
	// Hooks act on records as they are written and may fail the loop (git
	// commits, notifications).
	Hooks []Hook
	// Reopen, when set, is a gate outside the loop that failed after the
	// loop was DONE (the forge's CI, review comments): a DONE loop starts
	// its next cycle with its signal (reopen.go).
	Reopen *Reopen
}

// Hook acts on a record as it is written (a git commit after a passed task,
// a notification at a stop). It may write records of its own with emit;
// they do not go through the hooks again. An error stops the loop BLOCKED
// at the end of the current step: a failed commit is never a success.
type Hook func(ev record.Event, emit func(record.Event)) error

// Engine runs one loop directory.
type Engine struct {
	// jd runs the checks and judges them (package judge; loop/judge.go).
	jd *judge.Judge
	// recreated is where the state of a loop whose folder was removed and
	// made again at this path was set aside ("" when it was not).
	recreated string
	// review runs the review shape (loop/shape_review.go).
	review *review.Shape

	spec      *spec.Loop
	dir       string
	st        *State
	rec       *record.Writer
	opts      Options
	priv      string // the engine's private folder for this loop
	specTime  time.Time
	lastPlan  *Plan
	guard     *guard.Guard     // protection: the protected set, its snapshot, the watch, the list of changes
	planCache *planCache       // the last plan.json parsed
	red       *redact.Redactor // secrets never leave: records, state, prompts, transcripts (loop/redact.go)
	lock      *loopdir.Lock    // the loop's lock, held from openEngine to close
	store     *store           // the state on disk and the wall clock (loop/store.go)
	judged    *judgedPlan      // the engine's own copy of the plan (loop/judged.go)
	roll      *rollback        // checkpoints and rollback (loop/rollback.go)
	run       *runner          // the agent runs: confinement, layers, failover, the operator (loop/runner.go)

	// nop is no-progress detection (stopping.NoProgress; loop/noprogress.go).
	nop *stopping.NoProgress
	// approval holds the first plan for the operator's OK (operator.PlanGate;
	// loop/approve.go).
	approval *operator.PlanGate
	// prompts puts each run's prompt together (prompt.Builder;
	// loop/prompts.go).
	prompts *prompt.Builder

	hookMu  sync.Mutex
	hookErr error

	// tags is the run of a wave (or the attempt of a best-of) every record
	// written meanwhile carries, and the lock that orders the records
	// written at once (bestof_judging.go).
	tags tagger
	// gates is what the judge's verdicts mean for the loop: the setup, the
	// baseline, the done verdict (loop/judge.go, loop/strength.go).
	gates *verdicts
	// waves runs a wave's build runs and a best-of's attempts
	// (loop/wave_run.go, loop/bestof_run.go).
	waves *waves
}

// noteRecreated records that the loop folder is not the one the engine
// last ran in: a new loop, whatever the old one's outcome was.
func (e *Engine) noteRecreated() {
	if e.recreated != "" {
		e.emit(record.Event{Event: record.Warning, Kind: "folder_recreated", Message: "the loop folder was removed and made again at this path since the engine last ran here: this is a new loop, and nothing of the old one (its outcome, counters, evidence) carries over; the old loop's engine state is kept at " + e.recreated})
	}
}

// setRedactor puts r in force for everything the engine writes: the
// records, the state (through a copy of r that remembers its results) and
// what the engine redacts itself.
func (e *Engine) setRedactor(r *redact.Redactor) {
	e.red = r
	e.store.setStateRed(r)
	e.rec.SetRedactor(r)
}

// recordUntrusted records a violation for each part of the saved state that
// did not check out.
func (e *Engine) recordUntrusted(untrusted []string) {
	for _, u := range untrusted {
		e.emit(record.Event{Event: record.Violation, Kind: "state_forged", File: loopdir.RecordsDir + "/state.json", Message: u})
	}
}

func previousNote(outcome string) string {
	if outcome == "" {
		return ""
	}
	return "previous run ended: " + outcome
}

// doneOutcome is the DONE outcome with the state's evidence.
func (e *Engine) doneOutcome() *Outcome {
	o := e.outcome(ReasonDone, e.doneSummary())
	o.Evidence, o.NotVerified = e.st.Evidence, e.st.NotVerified
	return o
}

func (e *Engine) stop(reason, summary string) error {
	return &errStop{e.outcome(reason, summary)}
}

func (e *Engine) outcome(reason, summary string) *Outcome {
	return &Outcome{Reason: reason, ExitCode: ExitCodes[reason], Summary: summary, State: e.st, Records: e.rec.Path()}
}

// finish writes the final record and state.
func (e *Engine) finish(o *Outcome) *Outcome {
	st := e.st
	// The connections the proxy saw last are in the report, not only in
	// the records written as the engine closes.
	e.run.net.Flush()
	if o.NotVerified == nil {
		o.NotVerified = st.NotVerified
	}
	if o.Evidence == nil {
		o.Evidence = st.Evidence
	}
	if o.Reason != ReasonDone {
		o.RuledOut = append(o.RuledOut, st.RuledOut...)
		if o.Next == nil {
			o.Next = nextSteps(o.Reason, e.spec)
		}
	}
	e.roll.settleBest(o)
	e.roll.guardRefs()
	o.Kept = loadLedger(e.priv).Kept
	st.Outcome, st.ExitCode, st.Summary = o.Reason, o.ExitCode, o.Summary
	// The plan the report shows is the one status, report and the
	// dashboard show (CurrentPlan); the engine's last plan when none is.
	o.Plan = outcomePlan(CurrentPlan(e.dir, st), e.lastPlan)
	st.PID = 0
	if o.Reason == ReasonDone {
		st.Phase = PhaseDone
	}
	e.store.checkpoint()
	e.emit(record.Event{Event: record.LoopStop, Reason: o.Reason, ExitCode: record.Int(o.ExitCode), Summary: o.Summary,
		NotVerified: o.NotVerified, Evidence: o.Evidence, CostUSD: st.CostUSD, DurationMS: st.WallMS})
	return redact.Value(e.red, o)
}

// outcomePlan is the plan an outcome shows: the current one, else the
// engine's last.
func outcomePlan(current, last *Plan) *Plan {
	if current != nil {
		return current
	}
	return last
}

func (e *Engine) emit(ev record.Event) {
	e.tags.mu.Lock()
	e.tags.cur.mark(&ev)
	if ev.Cycle == 0 && e.spec.Shape == spec.ShapeCycle {
		ev.Cycle = e.st.Cycle
	}
	if ev.Iteration == 0 {
		ev.Iteration = e.st.Iterations
	}
	e.store.noteWriteErr(e.rec.Write(ev))
	if ev.Event == record.NetRefused && ev.To != "" { // the state's list of refused hosts
		e.store.with(func() { e.st.NetRefused = confine.NoteRefused(e.st.NetRefused, ev) })
	}
	// The hooks (notifications, a webhook) run outside the lock: a slow
	// one holds up no other writer of records.
	e.tags.mu.Unlock()
	for _, h := range e.opts.Hooks {
		emit := func(x record.Event) {
			if x.Cycle == 0 {
				x.Cycle = ev.Cycle
			}
			if x.Iteration == 0 {
				x.Iteration = ev.Iteration
			}
			e.store.noteWriteErr(e.rec.Write(x))
		}
		if err := h(ev, emit); err != nil {
			e.hookMu.Lock()
			if e.hookErr == nil {
				e.hookErr = err
			}
			e.hookMu.Unlock()
		}
	}
}

// takeHookErr returns and clears the first error a hook reported.
func (e *Engine) takeHookErr() error {
	e.hookMu.Lock()
	defer e.hookMu.Unlock()
	err := e.hookErr
	e.hookErr = nil
	return err
}

func (e *Engine) path(parts ...string) string {
	return filepath.Join(append([]string{e.dir}, parts...)...)
}

func (e *Engine) doneSummary() string {
	if e.spec.Shape == spec.ShapeRalph {
		return fmt.Sprintf("the verify checks passed after %s", plural(e.st.Iterations, "attempt"))
	}
	return fmt.Sprintf("both gates passed in cycle %d after %s", e.st.Cycle, plural(e.st.Iterations, "build run"))
}

// checkBudgets stops the loop before an agent run when the wall or cost
// budget is spent, and records an 80% warning once per budget.
func (e *Engine) checkBudgets() error {
	b := e.spec.Budget
	wall := e.store.wall()
	if wall >= b.Wall.D() {
		// The time spent is the report's "spent" figure, counted to the
		// stop's last save: named here too, it would be a second, older one.
		o := e.outcome(ReasonTimeCost, fmt.Sprintf("wall budget spent: the loop's time reached budget.wall (%s)", b.Wall))
		o.Next = stopping.WallNextSteps(e.dir, e.spec.Path)
		return &errStop{o}
	}
	if e.st.CostUSD >= b.CostUSD {
		return e.stop(ReasonTimeCost, fmt.Sprintf("cost budget spent: $%.2f of $%.2f", e.st.CostUSD, b.CostUSD))
	}
	e.warn80("wall", float64(wall)/float64(b.Wall.D()))
	e.warn80("cost_usd", e.st.CostUSD/b.CostUSD)
	if e.spec.Shape != spec.ShapeReview {
		e.warn80("iterations", float64(e.st.Iterations)/float64(b.Iterations))
		e.warn80("cycles", float64(e.st.Cycle)/float64(b.Cycles))
	}
	return nil
}

func (e *Engine) warn80(name string, frac float64) {
	if frac < 0.8 {
		return
	}
	for _, w := range e.st.Warned80 {
		if w == name {
			return
		}
	}
	e.st.Warned80 = append(e.st.Warned80, name)
	e.emit(record.Event{Event: record.BudgetWarning, Kind: name, Message: fmt.Sprintf("%s budget at %.0f%%", name, frac*100)})
}

// readPlan is ReadPlan for the engine's own plan.json, parsed again only
// when the file changed (plan.Cache). A copy is returned: callers may
// change it.
func (e *Engine) readPlan() (*Plan, []string, error) {
	if e.planCache == nil {
		e.planCache = &planCache{}
	}
	return e.planCache.Read(loopdir.Dir(e.dir).Plan())
}

// CurrentPlan is the plan every view of a loop shows (the run's final
// report, status, report, the dashboard): output/plan.json when it is a
// valid plan; else the engine's own copy of the plan it judges; else, for a
// loop that has stopped, the plan archived last in its final run (a gate
// that failed right before the stop archives it for the next plan); else
// nil.
func CurrentPlan(dir string, st *State) *Plan {
	if p, errs, err := ReadPlan(loopdir.Dir(dir).Plan()); err == nil && len(errs) == 0 {
		return p
	}
	if st == nil {
		return nil
	}
	if st.Judged != nil {
		return clonePlan(st.Judged)
	}
	if st.Outcome != "" && st.PlanArchive != "" && filepath.Base(st.PlanArchive) == st.PlanArchive {
		if p, errs, err := ReadPlan(loopdir.Dir(dir).InRecords(st.PlanArchive)); err == nil && len(errs) == 0 {
			return p
		}
	}
	return nil
}

// judge is the engine's judge, made on first use.
func (e *Engine) judge() *judge.Judge {
	if e.jd == nil {
		e.jd = &judge.Judge{
			Dir:             e.dir,
			Priv:            e.priv,
			Spec:            func() *spec.Loop { return e.spec },
			Redactor:        Redactor,
			Emit:            e.emit,
			Flush:           func() { e.store.flush() },
			Stamp:           func() (int, int) { return e.st.Cycle, e.st.Iterations },
			AddNotVerified:  func(s string) { e.store.with(func() { e.st.addNotVerified(s) }) }, // locked: attempts are judged at once
			DropNotVerified: func(s string) { e.store.with(func() { e.st.dropNotVerified(s) }) },
			AddEvidence:     func(s string) { e.st.Evidence = append(e.st.Evidence, s) },
			SetAside:        func() ([]string, error) { return setAside(e.dir, e.priv, e.spec, e.judge().IsHoldout) },
			StartFiles: func() []string {
				rf, _ := runnerStart(e.priv)
				return rf.Files
			},
			StartTop: func() []string {
				rf, _ := runnerStart(e.priv)
				return rf.Top
			},
			WriteFile: WriteFileAtomic,
			Flaky:     func() judge.FlakyTests { return e.st.Flaky },
			NoteFlaky: func(cmd string, tests []string) { e.st.Flaky = judge.NoteFlaky(e.st.Flaky, cmd, tests) },
			Auditor: judge.Auditor{
				Agent: func() string { return review.AgentName(e.gates.auditor()) },
				Tells: func() []string { return e.st.Tells },
				Next: func() (string, string) {
					e.st.AuditRuns++
					keep := review.RecordPath(fmt.Sprintf("audit-%d-findings.json", e.st.AuditRuns))
					return keep, review.AgentOutput(keep)
				},
				Ask: func(ctx context.Context, prompt, keep string) (bool, []string, error) {
					return e.review.AskJSON(ctx, "auditor", "audit", prompt, keep, func(data []byte) []string {
						_, errs := review.ParseFindings(data)
						return errs
					})
				},
				Findings: func(keep, bar string) (int, []judge.Finding) { return auditFindings(filepath.Join(e.dir, keep), bar) },
				Touched:  func() []string { return e.st.Touched },
				LeftOut:  func() int { return e.st.TouchedLeftOut },
				Schema:   review.FindingsSchema,
			},
		}
	}
	return e.jd
}

// Reopen is a gate outside the loop that failed once the loop was DONE:
// the forge's CI on the pushed commit, review comments on its pull
// request. Its signal is the next failure signal, as an objective gap is:
// the loop starts its next cycle with a re-plan that reads it.
type Reopen struct {
	// Gate names the gate ("ci", "pr-review"), for the records.
	Gate string
	// Signal is what the re-plan reads: the failing jobs and their log
	// lines, the review comments. It is data, fenced by the prompt.
	Signal string
	// Message says in one line why, for the records and the report.
	Message string
}
