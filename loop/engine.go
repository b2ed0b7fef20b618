// Package loop is the engine: the loop shapes, their phases and gates, the
// budgets, and the state machine over working-records/state.json. It prints
// nothing and never exits the process: it writes records (which the CLI
// renders) and returns an Outcome.
package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/looprinter/looprinter/netpolicy"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
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
}

// Hook acts on a record as it is written (a git commit after a passed task,
// a notification at a stop). It may write records of its own with emit;
// they do not go through the hooks again. An error stops the loop BLOCKED
// at the end of the current step: a failed commit is never a success.
type Hook func(ev record.Event, emit func(record.Event)) error

// Engine runs one loop directory.
type Engine struct {
	// netProxy is the loop's network proxy (network.go), started at the
	// first agent run.
	netProxy   *netpolicy.Proxy
	netStarted bool
	// summarized is when the history's summary was last brought up to
	// date (tally.go).
	summarized time.Time
	// holdouts are the holdout files (holdout.go); holdoutGitChecked is set
	// once git was found to carry none of them.
	holdouts          []string
	holdoutGitChecked bool
	// recreated is where the state of a loop whose folder was removed and
	// made again at this path was set aside ("" when it was not).
	recreated string

	spec       *spec.Loop
	dir        string
	st         *State
	rec        *record.Writer
	opts       Options
	mark       time.Time     // wall time is counted from here since the last checkpoint
	markRem    time.Duration // wall time below a millisecond, carried to the next checkpoint
	deadWall   time.Duration // wall time the previous run spent after its last save, when it died
	deadPID    int           // that run's pid
	priv       string        // the engine's private folder for this loop
	ckMu       sync.Mutex    // checkpoints come from the step and from the wall-time ticker
	unsynced   bool          // the last save has not been synced (stepEnd, note, tick)
	sandbox    string        // the sandbox kind in force
	specTime   time.Time
	lastPlan   *Plan
	watch      *treeWatch                      // the loop folder's changes; nil when walked instead
	noWatch    bool                            // the watch could not be set up: walk every run
	prot       *protCache                      // the protected set, kept up to date from watch
	guard      *guard                          // the protected files' snapshot as on disk
	snapFiles  *protFile                       // the protected list the snapshot was taken of
	snapSimple bool                            // every file of it watched, none with other links
	layer      *sandbox.Layer                  // the copy-on-write layer over the loop folder, when in force
	trees      []sandbox.Layer                 // the layers over HOME and caches, never applied
	roFiles    []string                        // the protected files' paths for the sandbox
	roFor      *protFile                       // the protected list roFiles was made of
	marks      map[string]bool                 // paths the watch saw change since the last snapshot
	planCache  *planCache                      // the last plan.json parsed
	marksGone  []string                        // folders moved or removed since the last snapshot
	ignores    map[string]*gitignore.GitIgnore // .gitignore of each folder, for the list of changes
	red        *redact.Redactor                // secrets never leave: records, state, prompts, transcripts (loop/redact.go)
	stateRed   *redact.Redactor                // red with its results remembered, for the state saved several times a step
	lock       *loopdir.Lock                   // the loop's lock, held from openEngine to close
	jr         *journal                        // the engine's copy of the state (loop/journal.go)

	hookMu   sync.Mutex
	hookErr  error
	spaceErr error // the first write of the engine's own that failed for want of space (loop/diskspace.go)
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
	if err := e.checkpoint(); err != nil { // the run is visible to status at once
		return nil, err
	}
	e.emit(record.Event{Event: record.LoopStart, Loop: l.Name, Shape: l.Shape, LoopFile: l.Path, Dir: e.dir, PID: os.Getpid(), Resumed: resumed, Phase: st.Phase, Message: previousNote(previous)})
	e.recordUntrusted(untrusted)
	e.noteRecreated()
	e.noteDeadWall()
	e.refreshVacuous() // the loop file may have changed since the last run
	if err := e.recover(); err != nil {
		return e.finish(e.outcome(ReasonBlocked, err.Error())), nil
	}
	if err := e.holdoutStart(); err != nil {
		return e.finish(e.outcome(ReasonBlocked, err.Error())), nil
	}
	for _, w := range l.Warnings() {
		e.emit(record.Event{Event: record.Warning, Message: w})
	}
	if l.Redact.Off {
		e.addNotVerified(redactionNote)
	}
	if st.Phase == PhaseDone {
		o := e.outcome(ReasonDone, "the loop was already DONE; nothing to run (use --fresh to start again)")
		o.Evidence, o.NotVerified = st.Evidence, st.NotVerified
		return e.finish(o), nil
	}
	if err := e.checkpoint(); err != nil {
		return nil, err
	}
	o := e.loop(ctx)
	out := e.finish(o)
	e.tallySpend()
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
		removeJournal(priv)
	}
	os.Chmod(loopdir.Dir(dir).Records(), 0o700)
	st, untrusted, err := loadTrusted(dir)
	if err != nil {
		return fail(err)
	}
	jr, err := openJournal(priv)
	if err != nil {
		return fail(fmt.Errorf("cannot open the engine's state journal: %w", err))
	}
	resumed = !st.StartedAt.IsZero()
	if opts.Backoff == nil {
		opts.Backoff = defaultBackoff
	}
	start := time.Now()
	if runID == "" {
		runID = fmt.Sprintf("%s-%d", start.UTC().Format("20060102T150405"), os.Getpid())
	}
	rec, err := loopdir.Dir(dir).CreateRecords(runID, l.Agent.Backend, start)
	if err != nil {
		jr.close()
		return fail(err)
	}
	for _, s := range opts.Subscribers {
		rec.Subscribe(s)
	}
	e = &Engine{spec: l, dir: dir, st: st, rec: rec, opts: opts, mark: start, priv: priv, lock: lock, jr: jr, recreated: recreated}
	e.setRedactor(Redactor(l))
	if fi, err := os.Stat(l.Path); err == nil {
		e.specTime = fi.ModTime()
	}
	// A run that died (SIGKILL, a power loss) saved its wall time last at
	// st.UpdatedAt; it lived on until its last sign of life.
	e.deadWall, e.deadPID = deadRunTail(st, start), st.PID
	st.WallMS += e.deadWall.Milliseconds()
	st.Loop, st.Shape, st.PID, st.Run, st.Records = l.Name, l.Shape, os.Getpid(), runID, rec.Path()
	if !resumed {
		st.StartedAt = start.UTC()
	}
	sandbox.BecomeSubreaper()
	return e, untrusted, resumed, nil
}

// deadRunTail is the wall time a run that died without its final record
// spent after its last save (st.UpdatedAt, the wall time saved then): up
// to its last sign of life, the latest of its last record and its agent
// run's transcript (both written by the engine, as the agent's output
// came), never later than now. 0 when the previous run stopped cleanly.
func deadRunTail(st *State, now time.Time) time.Duration {
	if st.PID == 0 || st.Outcome != "" || st.UpdatedAt.IsZero() {
		return 0
	}
	last := st.UpdatedAt
	if st.Records != "" {
		one := func() ([]string, error) { return []string{st.Records}, nil }
		if evs, _, err := record.TailOf(one, 1, nil); err == nil && len(evs) > 0 && evs[len(evs)-1].TS.After(last) {
			last = evs[len(evs)-1].TS
		}
	}
	if f := st.InFlight; f != nil && f.Transcript != "" {
		for _, p := range []string{f.Transcript, f.Transcript + ".stderr"} {
			if fi, err := os.Stat(p); err == nil && fi.ModTime().After(last) {
				last = fi.ModTime()
			}
		}
	}
	if last.After(now) {
		last = now
	}
	return last.Sub(st.UpdatedAt)
}

// noteDeadWall says how much wall time of a run that died was counted
// after its last save.
func (e *Engine) noteDeadWall() {
	if e.deadWall > 0 {
		e.emit(record.Event{Event: record.Warning, Kind: "wall_after_crash", DurationMS: e.deadWall.Milliseconds(),
			Message: fmt.Sprintf("the previous run (pid %d) died without a final record: %s of wall time after its last save, up to its last record or its agent's last output, was counted", e.deadPID, e.deadWall.Round(time.Millisecond))})
	}
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
	e.ckMu.Lock()
	e.stateRed = r.Memo()
	e.ckMu.Unlock()
	e.rec.SetRedactor(r)
}

// close ends what openEngine started, the lock last.
func (e *Engine) close() {
	e.flush()
	e.writePrivateCopy()
	if e.sandbox != sandbox.Off {
		sandbox.RemoveTempDir(e.dir)
	}
	e.resetWatch()
	e.closeNetwork()
	e.rec.Close()
	e.jr.close()
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
	if st.InFlight != nil {
		return e.judgeDeadRun()
	}
	return nil
}

func previousNote(outcome string) string {
	if outcome == "" {
		return ""
	}
	return "previous run ended: " + outcome
}

func defaultBackoff(n int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < n && d < 10*time.Minute; i++ { // bounded whatever n is
		d *= 3
	}
	if d > 10*time.Minute {
		d = 10 * time.Minute
	}
	return d
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
		e.keepSummary()
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
	e.settleBest(o)
	e.guardRefs()
	o.Kept = loadLedger(e.priv).Kept
	st.Outcome, st.ExitCode, st.Summary = o.Reason, o.ExitCode, o.Summary
	// The plan the report shows is the one status, report and the
	// dashboard show (CurrentPlan); the engine's last plan when none is.
	o.Plan = outcomePlan(CurrentPlan(e.dir, st), e.lastPlan)
	st.PID = 0
	if o.Reason == ReasonDone {
		st.Phase = PhaseDone
	}
	e.checkpoint()
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

// checkpoint saves the state where it must reach the disk now (a loop
// starting or stopping, a question asked or answered, a crashed run
// judged): it folds elapsed wall time into the state (in full: what is
// below a millisecond is carried to the next save), saves the state to the
// journal and syncs it, syncs the records at the same time, and writes the
// public copy.
func (e *Engine) checkpoint() error { return e.save(true, true) }

// stepEnd ends a step: the state goes to the journal and the public copy
// without waiting for the disk. The step's state and records reach the disk
// together at the next synced save, which comes before anything that takes
// time or could lose work: the next agent run (checkpointInFlight), the
// next checks (flush), a question, the loop's stop, the engine's close. One
// sync of each file per step (a group commit), and a power loss loses at
// most the step under way and the one before it, which had done nothing
// since but decide what runs next.
func (e *Engine) stepEnd() error { return e.save(false, true) }

// checkpointInFlight saves, synced, a run about to start (with the records
// of the step before it), so that a crash during the run is judged as one
// when the loop starts again. The public copy is written when the agent has
// started (the OnStart tick), with its process group.
func (e *Engine) checkpointInFlight() error { return e.save(true, false) }

// flush makes the last saves durable when some are not (before checks run:
// a check can run for minutes).
func (e *Engine) flush() error {
	e.ckMu.Lock()
	pending := e.unsynced
	e.ckMu.Unlock()
	if !pending {
		return nil
	}
	return e.save(true, false)
}

// note saves the state without waiting for the disk (journal only): enough
// against a crash of the process (the kernel keeps what was written), used
// where a power loss would also end the agent (its process group).
func (e *Engine) note() error { return e.save(false, false) }

// tick is note with the public copy written too (the wall time while an
// agent runs, every few seconds, for people and tools to see).
func (e *Engine) tick() error { return e.save(false, true) }

// save saves the state to the journal, with the public copy when copies
// says so. durable syncs the journal and, at the same time, the records:
// both reach the disk before save returns.
func (e *Engine) save(durable, copies bool) error {
	e.ckMu.Lock()
	defer e.ckMu.Unlock()
	now := time.Now()
	d := now.Sub(e.mark) + e.markRem
	e.st.WallMS += d.Milliseconds()
	e.markRem = d - time.Duration(d.Milliseconds())*time.Millisecond
	e.mark = now
	var synced chan struct{}
	if durable {
		// The records and the state reach the disk together: one wait for
		// both flushes, not one after the other.
		synced = make(chan struct{})
		go func() { e.rec.Sync(); close(synced) }()
	}
	st := redact.Value(e.stateRed, e.st) // a copy, when it holds a secret
	_, err := st.save(e.dir, e.jr, durable, copies)
	e.st.V, e.st.UpdatedAt = st.V, st.UpdatedAt
	if synced != nil {
		<-synced
	}
	if err == nil {
		e.unsynced = !durable
	}
	e.noteWriteErr(err)
	return err
}

// writePrivateCopy writes the state.json of the private folder, for what
// reads the folder when no engine runs (a fleet carries it to the next
// step's worker); the engine itself reads its journal.
func (e *Engine) writePrivateCopy() {
	e.ckMu.Lock()
	defer e.ckMu.Unlock()
	st := redact.Value(e.stateRed, e.st)
	if data, err := json.Marshal(st); err == nil {
		writeCopy(loopdir.PrivateOf(e.dir).State(), indented(data))
	}
}

// checkpointEvery saves the state every d while an agent runs, so that a
// crash loses at most d of wall time. The returned func stops it (and may
// be called more than once).
func (e *Engine) checkpointEvery(d time.Duration) func() {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				e.tick()
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

func (e *Engine) wall() time.Duration {
	e.ckMu.Lock()
	defer e.ckMu.Unlock()
	return time.Duration(e.st.WallMS)*time.Millisecond + time.Since(e.mark)
}

func (e *Engine) emit(ev record.Event) {
	if ev.Cycle == 0 && e.spec.Shape == spec.ShapeCycle {
		ev.Cycle = e.st.Cycle
	}
	if ev.Iteration == 0 {
		ev.Iteration = e.st.Iterations
	}
	e.noteWriteErr(e.rec.Write(ev))
	for _, h := range e.opts.Hooks {
		emit := func(x record.Event) {
			if x.Cycle == 0 {
				x.Cycle = ev.Cycle
			}
			if x.Iteration == 0 {
				x.Iteration = ev.Iteration
			}
			e.noteWriteErr(e.rec.Write(x))
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

func (e *Engine) checkEnv() []string {
	return append(os.Environ(), "LOOPRINTER_DIR="+e.dir, fmt.Sprintf("LOOPRINTER_CYCLE=%d", e.st.Cycle))
}

// stepSetup runs the setup commands once per loop directory.
func (e *Engine) stepSetup(ctx context.Context) error {
	if !e.st.SetupDone && len(e.spec.Setup) > 0 {
		results := e.runChecks(ctx, "setup", e.spec.Setup)
		pass := allPass(results)
		e.emit(record.Event{Event: record.Setup, Pass: record.Bool(pass), Checks: checksOf(results)})
		if ctx.Err() != nil {
			return e.stop(ReasonInterrupted, "interrupted during setup")
		}
		if !pass {
			return e.stop(ReasonBlocked, "setup failed: "+firstFailure(results)+"; fix it and run again (setup runs again until it passes)")
		}
	}
	e.st.SetupDone = true
	e.st.Phase = PhaseBaseline
	return nil
}

// stepBaseline runs the checks once before the first agent run and records
// what already fails; it stops the loop when the checks cannot judge it.
func (e *Engine) stepBaseline(ctx context.Context) error {
	if !e.st.BaselineDone {
		cmds := e.spec.GateChecks()
		base := map[string][]string{}
		baselineSignal := ""
		if len(cmds) > 0 {
			results := e.runChecks(ctx, "baseline", cmds)
			if ctx.Err() != nil {
				return e.stop(ReasonInterrupted, "interrupted during the baseline checks")
			}
			for _, r := range results {
				if !r.Pass {
					base[r.Command] = normalizeAll(r.Lines)
				}
			}
			baselineSignal = failureSignal(nil, results)
			e.emit(record.Event{Event: record.Baseline, Pass: record.Bool(allPass(results)), Checks: checksOf(results),
				Message: fmt.Sprintf("%d of %d checks already fail before any agent run", len(base), len(cmds))})
			e.noteCheckpoint(results, true)
			if err := e.judgeBaseline(results); err != nil {
				return err // the baseline runs again next time
			}
			e.saveTestBase(results, false)
		}
		e.st.Baseline = base
		e.st.BaselineSignal = baselineSignal
		e.st.BaselineDone = true
	}
	switch e.spec.Shape {
	case spec.ShapeRalph:
		e.st.Phase = PhaseRalph
	case spec.ShapeReview:
		e.st.Phase = PhaseReview
	default:
		e.st.Phase = PhasePlan
	}
	return nil
}

func normalizeAll(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, normalize(l))
	}
	return out
}

// runChecks runs commands in order and saves each output under
// working-records/checks/.
func (e *Engine) runChecks(ctx context.Context, gate string, cmds []string) []CheckResult {
	// The step before reaches the disk first: checks can run for minutes.
	// (A save that fails here fails again, reported, at the step's end.)
	e.flush()
	dir := loopdir.Dir(e.dir).Checks()
	os.MkdirAll(dir, 0o700)
	stamp := time.Now().UTC().Format("20060102T150405.000")
	return e.runVisibleChecks(ctx, cmds, func(i int) string {
		return filepath.Join(dir, fmt.Sprintf("%s-c%d-i%d-%s-%d.log", stamp, e.st.Cycle, e.st.Iterations, gate, i+1))
	})
}

// runCheckList runs commands in order in the loop's folder, each output saved
// at logPath(i), until the context ends.
func runCheckList(ctx context.Context, l *spec.Loop, cmds, env []string, logPath func(i int) string) []CheckResult {
	var out []CheckResult
	red := Redactor(l)
	for i, c := range cmds {
		out = append(out, runCheck(ctx, l.Dir, c, logPath(i), l.CheckTimeout.D(), env, l.TestSummaries, red))
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// applyBaseline marks failing checks whose failure lines all failed before
// the loop started, when verify_baseline is new-only.
func (e *Engine) applyBaseline(results []CheckResult) {
	if e.spec.VerifyBaseline != "new-only" {
		return
	}
	for i := range results {
		r := &results[i]
		old, ok := e.st.Baseline[r.Command]
		excused := fmt.Sprintf("`%s` still fails as it did before the loop (verify_baseline: new-only): only new failures were checked", r.Command)
		if r.Pass || !ok {
			e.dropNotVerified(excused) // it passes for real now
			continue
		}
		known := map[string]bool{}
		for _, l := range old {
			known[l] = true
		}
		var fresh []string
		for _, l := range r.Lines {
			if !known[normalize(l)] {
				fresh = append(fresh, l)
			}
		}
		r.Baseline = true
		if len(fresh) == 0 {
			r.Pass = true // only failures that were there before the loop
			r.Signal = ""
			e.addNotVerified(excused)
		} else {
			r.Lines = fresh
			r.Signal = strings.Join(fresh, "\n")
		}
	}
}

func allPass(rs []CheckResult) bool {
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}

func checksOf(rs []CheckResult) []record.Check {
	out := make([]record.Check, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Check)
	}
	return out
}

func firstFailure(rs []CheckResult) string {
	for _, r := range rs {
		if !r.Pass {
			return fmt.Sprintf("`%s` exited %d", r.Command, r.ExitCode)
		}
	}
	return ""
}

// failureSignal is the fenced, labelled failure text of failing checks.
func failureSignal(errs []string, rs []CheckResult) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	for _, r := range rs {
		if r.Pass {
			continue
		}
		fmt.Fprintf(&b, "$ %s   # exit %d\n%s\n", r.Command, r.ExitCode, r.Signal)
	}
	return strings.TrimRight(b.String(), "\n")
}

func evidence(gate string, rs []CheckResult, errs []string) []string {
	var out []string
	for _, er := range errs {
		out = append(out, fmt.Sprintf("%s gate: %s", gate, er))
	}
	for _, r := range rs {
		mark := "pass"
		if !r.Pass {
			mark = "FAIL"
		}
		extra := ""
		if r.Baseline {
			extra = " (baseline failure)"
		}
		out = append(out, fmt.Sprintf("%s gate: `%s` exit %d %s%s (%dms)", gate, r.Command, r.ExitCode, mark, extra, r.DurationMS))
	}
	return out
}

// noteFailure feeds no-progress detection for agent attempts (build runs,
// ralph attempts). It returns a stop when the same failure came back
// budget.same_failure times in a row.
func (e *Engine) noteFailure(signal, tried string) error {
	e.st.LastFailure = signal
	return e.noteRepeat(&e.st.FailureSig, &e.st.SameCount, &e.st.Tried, "", signal, tried)
}

// noteGateFailure is noteFailure for the cycle gate. It keeps its own count,
// so that tasks passing in between do not hide a gate that fails the same
// way every cycle.
func (e *Engine) noteGateFailure(signal, tried string) error {
	e.st.LastFailure = signal
	return e.noteRepeat(&e.st.GateSig, &e.st.GateSame, &e.st.GateTried, "cycle", signal, tried)
}

func (e *Engine) noteRepeat(last *string, count *int, triedList *[]string, gate, signal, tried string) error {
	sig := Signature(signal)
	if sig == *last {
		*count++
	} else {
		*last, *count, *triedList = sig, 1, nil
	}
	if tried != "" {
		if first := firstSignalLine(signal); first != "" {
			tried = strings.TrimRight(tried, ": ") + " → failed: " + first
		}
		e.st.RuledOut = append(e.st.RuledOut, tried)
		if len(e.st.RuledOut) > 20 {
			e.st.RuledOut = e.st.RuledOut[len(e.st.RuledOut)-20:]
		}
		*triedList = append(*triedList, tried)
		if len(*triedList) > 10 {
			*triedList = (*triedList)[len(*triedList)-10:]
		}
	}
	if *count >= 2 {
		e.emit(record.Event{Event: record.SameFailure, Gate: gate, Signature: sig, Repeats: *count, FailureSignal: signal})
	}
	if *count >= e.spec.Budget.SameFailure {
		return e.stop(ReasonNoProgress, fmt.Sprintf("the same failure came back %d times in a row (signature %s)", *count, sig))
	}
	return nil
}

// firstSignalLine is the first line of a failure signal that says what
// failed: a FAIL/Error line or a violation, else the first line.
func firstSignalLine(signal string) string {
	var first string
	for _, l := range strings.Split(signal, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if first == "" {
			first = l
		}
		if failLine.MatchString(l) || strings.HasPrefix(l, "VIOLATION") {
			return truncate(l, 160)
		}
	}
	return truncate(first, 160)
}

// progressMade resets no-progress detection after real progress.
func (e *Engine) progressMade() {
	e.st.FailureSig, e.st.SameCount, e.st.Tried, e.st.LastFailure = "", 0, nil, ""
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
	wall := e.wall()
	if wall >= b.Wall.D() {
		o := e.outcome(ReasonTimeCost, fmt.Sprintf("wall budget spent: %s of %s", wall.Round(time.Second), b.Wall))
		o.Next = e.wallNextSteps(wall)
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
