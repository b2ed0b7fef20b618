// Package loop is the engine: the loop shapes, their phases and gates, the
// budgets, and the state machine over working-records/state.json. It prints
// nothing and never exits the process: it writes records (which the CLI
// renders) and returns an Outcome.
package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/failover"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/prompt"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/statefile"
	"github.com/looprinter/looprinter/stopping"
)

// Outcome reasons, with their exit codes (docs/stopping.md).
const (
	ReasonDone        = "done"
	ReasonBudget      = "budget_spent"
	ReasonNoProgress  = "no_progress"
	ReasonTimeCost    = "time_or_cost"
	ReasonBlocked     = "blocked"
	ReasonInterrupted = "interrupted"
	// ReasonAlreadyPassing: every check passed before any agent run.
	ReasonAlreadyPassing = "already_passing"
	// ReasonNotVerified: the gates passed, but a gate that decides DONE
	// never failed, so nothing shows it judged the agent's work.
	ReasonNotVerified = "not_verified"
)

// ExitCodes maps each reason to the exit code of `run`.
var ExitCodes = map[string]int{
	ReasonDone: 0, ReasonBudget: 1, ReasonNoProgress: 2, ReasonTimeCost: 3,
	ReasonBlocked: 4, ReasonAlreadyPassing: 5, ReasonNotVerified: 6, ReasonInterrupted: 130,
}

// titles name each reason as the final report does.
var titles = map[string]string{
	ReasonDone: "DONE", ReasonBudget: "BUDGET SPENT", ReasonNoProgress: "NO PROGRESS",
	ReasonTimeCost: "TIME OR COST BUDGET", ReasonBlocked: "BLOCKED", ReasonInterrupted: "INTERRUPTED",
	ReasonAlreadyPassing: "ALREADY PASSING", ReasonNotVerified: "NOT VERIFIED",
}

// Title is a reason as the final report names it.
func Title(reason string) string {
	if t, ok := titles[reason]; ok {
		return t
	}
	return strings.ToUpper(reason)
}

// Outcome is how a run of the loop ended, with its evidence.
type Outcome struct {
	Reason      string   `json:"reason"`
	ExitCode    int      `json:"exit_code"`
	Summary     string   `json:"summary"`
	Evidence    []string `json:"evidence,omitempty"`
	NotVerified []string `json:"not_verified,omitempty"`
	RuledOut    []string `json:"ruled_out,omitempty"`
	Next        []string `json:"next,omitempty"`
	State       *State   `json:"state"`
	Records     string   `json:"records"`
	Plan        *Plan    `json:"plan,omitempty"`

	// Kept is the work the engine took off the branch (rollbacks, the
	// attempts after the best state), each on its ref.
	Kept []KeptRef `json:"kept,omitempty"`
}

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

// errStop carries an outcome out of a step.
type errStop struct{ o *Outcome }

func (e *errStop) Error() string { return e.o.Reason }

// Run runs the loop in l.Dir until it stops. The only errors returned are
// those that prevent the loop from starting (the lock, unreadable state);
// everything else is an Outcome.
func Run(ctx context.Context, l *spec.Loop, opts Options) (*Outcome, error) {
	e, untrusted, resumed, err := openEngine(l, opts, "", opts.Fresh)
	if err != nil {
		return nil, err
	}
	defer e.close()
	st := e.st
	if opts.Fresh && !resumed {
		// A fresh start makes its own plan: the old one goes to the records.
		if _, err := os.Lstat(loopdir.Dir(e.dir).Plan()); err == nil {
			st.PendingArchive, st.PendingReason = "plan_before_fresh_start.json", "a fresh start"
		}
	}
	previous := st.Outcome
	st.Outcome, st.Summary, st.PlanArchive = "", "", ""
	if err := e.store.checkpoint(); err != nil { // the run is visible to status at once
		return nil, err
	}
	e.emit(record.Event{Event: record.LoopStart, Loop: l.Name, Shape: l.Shape, LoopFile: l.Path, Dir: e.dir, PID: os.Getpid(), Resumed: resumed, Phase: st.Phase, Message: previousNote(previous)})
	e.recordUntrusted(untrusted)
	e.noteRecreated()
	e.store.noteDeadWall()
	e.gates.refreshVacuous() // the loop file may have changed since the last run
	if err := e.recover(); err != nil {
		return e.finish(e.outcome(ReasonBlocked, err.Error())), nil
	}
	if err := e.gates.holdoutStart(); err != nil {
		return e.finish(e.outcome(ReasonBlocked, err.Error())), nil
	}
	e.roll.noteOutside(ctx)
	for _, w := range l.Warnings() {
		e.emit(record.Event{Event: record.Warning, Message: w})
	}
	if l.Redact.Off {
		e.st.addNotVerified(redactionNote)
	}
	if opts.Reopen != nil && st.Phase == PhaseDone {
		if o := e.reopen(*opts.Reopen); o != nil {
			return e.finish(o), nil
		}
	}
	if st.Phase == PhaseDone {
		o := e.outcome(ReasonDone, "the loop was already DONE; nothing to run (use --fresh to start again)")
		o.Evidence, o.NotVerified = st.Evidence, st.NotVerified
		return e.finish(o), nil
	}
	if err := e.store.checkpoint(); err != nil {
		return nil, err
	}
	o := e.loop(ctx)
	e.run.net.Close() // every connection's record (and refused host) before the final state
	out := e.finish(o)
	e.store.tallySpend()
	return out, nil
}

// openEngine is the start Run and RunStep share: the loop's lock, the
// engine's private folder, the trusted state (what did not check out is
// returned, each a violation to record), a new record file for run runID
// (made up when empty), and the state journal. resumed says the state had
// run before. fresh moves an old state aside first. Close the engine with
// close.
func openEngine(l *spec.Loop, opts Options, runID string, fresh bool) (e *Engine, untrusted []string, resumed bool, err error) {
	dir := l.Dir
	lock, err := loopdir.AcquireLock(dir)
	if err != nil {
		return nil, nil, false, err
	}
	fail := func(err error) (*Engine, []string, bool, error) {
		lock.Release()
		return nil, nil, false, err
	}
	if err := loopdir.StateInside(dir); err != nil {
		return fail(err)
	}
	priv, err := loopdir.PrivateOf(dir).Ensure()
	if err != nil {
		return fail(fmt.Errorf("cannot create the engine's private folder: %w", err))
	}
	// A folder removed and made again at the same path is a new loop: the
	// old one's state is set aside, never resumed.
	recreated, err := loopdir.Dir(dir).Recreated()
	if err != nil {
		return fail(fmt.Errorf("cannot tell whether the loop folder is the one its state belongs to: %w", err))
	}
	// A second loop file with another name in the same folder is another
	// loop: it never resumes this one's counters and evidence.
	if err := loopdir.Dir(dir).Claim(l.Name, fresh); err != nil {
		return fail(err)
	}
	if fresh {
		stamp := "." + time.Now().UTC().Format("20060102T150405") + ".old"
		os.Remove(loopdir.PrivateOf(dir).LastCommit())
		for _, p := range []string{loopdir.PrivateOf(dir).State(), loopdir.Dir(dir).State()} {
			if _, err := os.Stat(p); err == nil {
				os.Rename(p, p+stamp)
			}
		}
		// The old runs' transcripts go aside too: a new run's names would
		// overwrite some of them and leave the others (a .stderr) beside
		// its own, as if they were its.
		if t := loopdir.Dir(dir).Transcripts(); dirExists(t) {
			os.Rename(t, t+stamp)
		}
		statefile.RemoveJournal(priv)
	}
	os.Chmod(loopdir.Dir(dir).Records(), 0o700)
	st, untrusted, err := loadTrusted(dir)
	if err != nil {
		return fail(err)
	}
	jr, err := statefile.OpenJournal(priv)
	if err != nil {
		return fail(fmt.Errorf("cannot open the engine's state journal: %w", err))
	}
	resumed = !st.StartedAt.IsZero()
	if opts.Backoff == nil {
		opts.Backoff = failover.Backoff
	}
	start := time.Now()
	if runID == "" {
		runID = fmt.Sprintf("%s-%d", start.UTC().Format("20060102T150405"), os.Getpid())
	}
	rec, err := loopdir.Dir(dir).CreateRecords(runID, l.Agent.Backend, start)
	if err != nil {
		jr.Close()
		return fail(err)
	}
	for _, s := range opts.Subscribers {
		rec.Subscribe(s)
	}
	e = &Engine{spec: l, dir: dir, st: st, rec: rec, opts: opts, priv: priv, lock: lock, recreated: recreated}
	e.store = &store{st: st, dir: dir, priv: priv, rec: rec, jr: jr, mark: start, emit: e.emit}
	inForce := func() *spec.Loop { return e.spec } // the loop file in force: reloadSpec replaces it
	e.judged = &judgedPlan{dir: dir, st: st, emit: e.emit, readPlan: e.readPlan, noteWriteErr: e.store.noteWriteErr,
		protectedFiles: func() ([]guard.File, *guard.ProtectRules, error) { return e.guard.Files(e.spec) }}
	e.roll = &rollback{dir: dir, priv: priv, st: st, spec: inForce, emit: e.emit, judge: e.judge,
		aside:       func() ([]string, error) { return setAside(e.dir, e.priv, e.spec, e.judge().IsHoldout) },
		writeJudged: e.judged.writeJudged, noteWriteErr: e.store.noteWriteErr}
	e.run = &runner{dir: dir, priv: priv, st: st, spec: inForce, red: func() *redact.Redactor { return e.red },
		backoff: opts.Backoff, emit: e.emit, stop: e.stop, checkBudgets: e.checkBudgets, store: e.store, judge: e.judge,
		enforceJudgedPlan: e.judged.enforceJudgedPlan, net: confine.Network{Emit: e.emit}, tags: &e.tags}
	e.gates = &verdicts{dir: dir, st: st, spec: inForce, judge: e.judge, emit: e.emit, stop: e.stop, roll: e.roll}
	e.tags.emit, e.review = e.emit, review.New(dir, reviewHost{e})
	e.waves = &waves{run: e.run, roll: e.roll, tags: &e.tags, prompt: e.buildPrompt, judgeBuild: e.judgeBuild, noteFailure: e.noteFailure,
		commits: e.roll.engineCommits, writeJudged: e.judged.writeJudged}
	e.nop, e.approval, e.prompts = newNoProgress(e), newPlanGate(e), newPrompts(e)
	e.run.agents, e.run.ops = newSwitch(e.run), newChannel(e.run)
	rules := func() (*guard.ProtectRules, error) { return protectRules(e.dir, e.spec, e.st.Review) }
	e.guard = guard.New(guard.Config{Dir: dir, Priv: priv, Rules: rules, Keep: e.run.keepEdit, Emit: e.emit})
	e.run.guard = e.guard
	e.run.apply = confine.Applier{Dir: dir, Spec: inForce, Red: e.run.red, Judge: e.judge, Emit: e.emit, NoteTell: e.run.noteTell}
	e.setRedactor(Redactor(l))
	if fi, err := os.Stat(l.Path); err == nil {
		e.specTime = fi.ModTime()
	}
	// A run that died (SIGKILL, a power loss) saved its wall time last at
	// st.UpdatedAt; it lived on until its last sign of life.
	e.store.deadWall, e.store.deadPID = deadRunTail(st, start), st.PID
	e.store.deadAt = lastSignOfLife(st, priv, start)
	st.WallMS += e.store.deadWall.Milliseconds()
	st.Loop, st.Shape, st.PID, st.Run, st.Records = l.Name, l.Shape, os.Getpid(), runID, rec.Path()
	if !resumed {
		st.StartedAt = start.UTC()
	}
	sandbox.BecomeSubreaper()
	return e, untrusted, resumed, nil
}

// dirExists says whether p is a folder.
func dirExists(p string) bool { return guard.IsDir(p) }

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

// close ends what openEngine started, the lock last.
func (e *Engine) close() {
	e.store.flush()
	e.store.writePrivateCopy()
	if e.run.sandbox != sandbox.Off {
		sandbox.RemoveTempDir(e.dir)
	}
	e.guard.Close()
	e.run.net.Close()
	e.run.putHoldoutsBack()
	judge.CloseChecksNetwork(e.dir)
	e.rec.Close()
	e.store.jr.Close()
	e.lock.Release()
}

// recordUntrusted records a violation for each part of the saved state that
// did not check out.
func (e *Engine) recordUntrusted(untrusted []string) {
	for _, u := range untrusted {
		e.emit(record.Event{Event: record.Violation, Kind: "state_forged", File: loopdir.RecordsDir + "/state.json", Message: u})
	}
}

// recover deals with an engine that died mid-run before anything else: what
// is left of its agent is stopped and its run in flight is judged.
func (e *Engine) recover() error {
	st := e.st
	if st.AgentPGID != 0 || st.AgentCgroup != "" {
		if n := len(KillOrphans(e.dir, st)); n > 0 {
			where := fmt.Sprintf("process group %d", st.AgentPGID)
			if st.AgentCgroup != "" {
				where = "its cgroup and " + where
			}
			e.emit(record.Event{Event: record.Warning, Message: fmt.Sprintf("stopped %s of a run that crashed (%s)", plural(n, "leftover agent process"), where)})
		}
		st.AgentPGID, st.AgentCgroup = 0, ""
	}
	landed := e.run.landedTasks() // before the applies are finished
	if err := confine.ResumeApply(e.dir, slotLayer, e.emit); err != nil {
		return err
	}
	if st.InFlight != nil || len(st.InFlightMore) > 0 {
		e.run.killWave()
		e.run.publishLeftTranscripts()
	}
	if ts := confine.RecoverGit(e.priv, e.emit); len(ts) > 0 {
		task := ""
		if st.InFlight != nil {
			task = st.InFlight.Task
		}
		e.run.recordTamper("build", task, ts)
	}
	if st.InFlight != nil {
		if err := e.run.judgeDead(); err != nil {
			return err
		}
	}
	// The other runs of a wave the engine died in: each judged as one
	// that died (its layer, not applied, is dropped at its slot's next run).
	for len(st.InFlightMore) > 0 {
		st.InFlight, st.InFlightMore = st.InFlightMore[0], st.InFlightMore[1:]
		slot := st.InFlight.Slot
		if err := e.run.judgeDead(); err != nil {
			return err
		}
		if l, _ := slotLayer(e.dir, slot); slot > 0 {
			sandbox.ClearLayer(l) // what it wrote never reaches the folder
		}
	}
	return e.waves.judgeLanded(landed, &e.lastPlan)
}

func previousNote(outcome string) string {
	if outcome == "" {
		return ""
	}
	return "previous run ended: " + outcome
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

func nextSteps(reason string, l *spec.Loop) []string {
	switch reason {
	case ReasonBudget:
		return []string{"read output/progress.txt and the last verify records for what failed",
			"sharpen the prompts or split the objective, then raise budget.iterations or budget.cycles in " + filepath.Base(l.Path) + " and run again (counters are kept)"}
	case ReasonNoProgress:
		return []string{"the same failure repeated: the diagnosis is wrong, not the effort",
			"read the failure signal in the last verify record, fix the cause or the check by hand, or change the prompt's approach, then run again"}
	case ReasonTimeCost:
		return []string{"raise budget.wall or budget.cost_usd if the loop was close", "or make each run cheaper: a smaller model for plan runs, lower agent.max_turns"}
	case ReasonBlocked:
		return []string{"fix what the message above names, then run again: the loop resumes where it stopped"}
	case ReasonInterrupted:
		return []string{"run again to resume where it stopped"}
	}
	return nil
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

// plural is "1 build run", "2 build runs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
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
