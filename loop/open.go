// Opening an engine: Run, the wiring of the rooms the engine composes
// (openEngine, the constructors that take the engine), the recovery of a
// run an engine died in, and closing.

package loop

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/failover"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/prompt"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/statefile"
	"github.com/looprinter/looprinter/stopping"
)

// Run runs the loop in l.Dir until it stops. The only errors returned are
// those that prevent the loop from starting (the lock, unreadable state);
// everything else is an Outcome.
func Run(ctx context.Context, l *spec.Loop, opts Options) (*Outcome, error) {
	e, untrusted, resumed, err := openEngine(l, opts, "", opts.Fresh)
	if err != nil {
		return nil, err
	}
	defer e.shutdown()
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
// shutdown.
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
		if t := loopdir.Dir(dir).Transcripts(); guard.IsDir(t) {
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

// shutdown ends what openEngine started, the lock last.
func (e *Engine) shutdown() {
	e.store.flush()
	e.store.writePrivateCopy()
	if e.run.sandbox != sandbox.Off {
		sandbox.CloseRunBoxesOf(e.dir) // before its folders go
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

// newNoProgress is the engine's no-progress detection, over its state's
// counters.
func newNoProgress(e *Engine) *stopping.NoProgress {
	st := e.st
	return &stopping.NoProgress{
		Counts: stopping.Counts{LastFailure: &st.LastFailure, FailureSig: &st.FailureSig, SameCount: &st.SameCount, Tried: &st.Tried,
			RuledOut: &st.RuledOut, GateSig: &st.GateSig, GateSame: &st.GateSame, GateTried: &st.GateTried, TaskRepeats: &st.TaskRepeats},
		Spec: func() *spec.Loop { return e.spec }, Emit: e.emit,
		Stop: func(summary string, next []string) error {
			o := e.outcome(ReasonNoProgress, summary)
			o.Next = next
			return &errStop{o}
		},
	}
}

// newPrompts is the engine's prompt builder, over its state.
func newPrompts(e *Engine) *prompt.Builder {
	st := e.st
	return &prompt.Builder{Dir: e.dir, Spec: func() *spec.Loop { return e.spec },
		State: prompt.State{Cycle: &st.Cycle, Iterations: &st.Iterations, LastFailure: &st.LastFailure, SameCount: &st.SameCount, Tried: &st.Tried,
			PendingErrors: &st.PendingErrors, PendingGap: &st.PendingGap, GateSame: &st.GateSame, GapSame: &st.GapSame, GateTried: &st.GateTried,
			BaselineSignal: &st.BaselineSignal, BaselineChecks: &st.BaselineChecks, Baseline: &st.Baseline},
		Stop: func(summary string) error { return e.stop(ReasonBlocked, summary) }}
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
	defer e.shutdown()
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
