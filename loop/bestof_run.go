package loop

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	rollbacks "github.com/looprinter/looprinter/rollback"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// Best of N, run (docs/design.md "Best of N"): a task whose next run gets
// more than one attempt (attemptsFor) is a wave of its own whose slots all
// carry it, each attempt on spec.Loop.AttemptAgent(k) in slotLayer(dir, k)
// with the same prompt. Once every attempt ended, each is judged on its
// own layer without applying it (bestOfHost.Judge; the attempts at once, up to
// the machine's cores, each in a check box of its own): what an apply would refuse
// is taken out of its layer as a violation, its own plan mark and target
// are read from its layer, and the task's checks run on the folder with
// its layer laid over it (judge.JudgeAttempt). pickBest keeps one; only
// its layer is applied, as one run of a wave is (finishWaveRun); the
// others' layers are committed on refs (when the loop commits) and
// cleared. No attempt passing is one failed try whose failure is every
// attempt's (bestOfFailure).

// taskFailed counts a failed try of task in this cycle.
func (s *State) taskFailed(task string) {
	if s.TaskFails == nil {
		s.TaskFails = map[string]int{}
	}
	s.TaskFails[s.taskKey(task)]++
}

// bestOfWidth is how many of n attempts the budgets let start
// (wave.Width).
func bestOfWidth(l *spec.Loop, st *State, n int) int {
	return wave.Width(l, st.spent(), n)
}

// buildBestOf runs n attempts of task at once, judges each on its own
// layer (as many at once as the machine has cores), applies the best
// passing one, or notes one failed try (wave.BestOf; the engine's side is
// bestOfHost).
func (w *waves) buildBestOf(ctx context.Context, plan *Plan, task Task, n int) error {
	prompt, err := w.prompt(plan, task)
	if err != nil {
		return err
	}
	workers := checkWorkers()
	return wave.BestOf[*waveRun]{Host: &bestOfHost{waveRuns: waveRuns{ws: w}, task: task, prompt: prompt, workers: workers, n: n}, Task: task.ID, N: n, Workers: workers}.Run(ctx)
}

// checkWorkers is how many checks of a best-of run at once: its attempts
// judged, then the mutants of their strength passes (the machine's
// cores, at least 1).
var checkWorkers = func() int { return max(runtime.NumCPU(), 1) }

// bestOfHost is the engine's side of a best-of (wave.BestOfHost).
type bestOfHost struct {
	waveRuns
	task   Task
	prompt string
	// workers bounds the checks run at once (checkWorkers); n is how many
	// attempts start at once (each capped at its share: wave.RunCap).
	workers, n int
	// seen is the judged plan every attempt started from, taken once the
	// attempts ended; iteration the first attempt's build run number.
	seen      *Plan
	seenTaken bool
	prep      sync.Once // beforeJudge
	iteration int
	// run and after are the kept attempt's, for its task's verdict.
	run   *AgentRun
	after *Plan
}

func (h *bestOfHost) Start(k int) (*waveRun, error) {
	r := h.ws.run
	rn, err := r.startWaveRun(k, h.task, h.prompt, r.spec().AttemptAgent(k), k+1, h.n)
	if err == nil && k == 0 {
		h.iteration = rn.req.Iteration
	}
	return rn, err
}

func (h *bestOfHost) Drop(rn *waveRun)          { h.ws.run.dropAttempt(rn) }
func (h *bestOfHost) Stopped(rn *waveRun) error { return rn.stop }
func (h *bestOfHost) Iteration(rn *waveRun) int { return rn.req.Iteration }
func (h *bestOfHost) Emit(ev record.Event)      { h.ws.run.emit(ev) }

func (h *bestOfHost) Unstart(rn *waveRun) {
	h.ws.run.endCgroup(rn.cgroup)
	h.ws.run.dropAttempt(rn)
	h.ws.run.st.Iterations--
}

func (h *bestOfHost) Abandon(rn *waveRun) {
	defer h.ws.tags.set(runOf(rn))()
	h.ws.run.endRecord("build", h.task.ID, rn.ran, rn.res, nil)
	h.ws.run.dropAttempt(rn)
}

func (h *bestOfHost) EmitFor(rn *waveRun, ev record.Event) { h.ws.tags.emitAs(runOf(rn), ev) }

func (h *bestOfHost) Interrupted(why string) error { return h.ws.run.stop(ReasonInterrupted, why) }
func (h *bestOfHost) Blocked(why string) error     { return h.ws.run.stop(ReasonBlocked, why) }

// seenPlan is the judged plan every attempt started from.
func (h *bestOfHost) seenPlan() *Plan {
	if !h.seenTaken {
		h.seen, h.seenTaken = clonePlan(h.ws.run.st.Judged), true
	}
	return h.seen
}

// beforeJudge readies, once, what the attempts judged at once only read:
// the judged plan they started from, the judge, the records of the
// agents' network (endRecord's, written before any attempt's agent_end).
func (h *bestOfHost) beforeJudge() {
	h.prep.Do(func() {
		h.seenPlan()
		h.ws.run.judge()
		h.ws.run.net.Flush()
	})
}

func (h *bestOfHost) Keep(ctx context.Context, rn *waveRun, a *wave.Attempt) (bool, error) {
	var kept bool
	var err error
	h.run, h.after, kept, err = h.keepAttempt(ctx, rn, a)
	return kept, err
}

func (h *bestOfHost) Failed(signal, summary string) error {
	h.ws.run.st.taskFailed(h.task.ID)
	return h.ws.noteFailure(signal, summary)
}

func (h *bestOfHost) JudgeKept(ctx context.Context, rn *waveRun) error {
	defer h.ws.tags.wave(rn)()
	return h.ws.judgeBuild(ctx, h.task, h.run, h.seenPlan(), h.after)
}

// dropAttempt clears an attempt's layers and takes it out of flight:
// nothing of it reaches the loop folder.
func (r *runner) dropAttempt(rn *waveRun) {
	if rn.onlyLimits && !rn.dropped {
		r.st.Iterations-- // every try hit a usage limit: not an attempt
	}
	rn.dropped = true
	sandbox.ClearLayer(rn.layer)
	for _, l := range rn.trees {
		sandbox.ClearWork(l)
	}
	r.dropInFlight(rn.fl)
}

// Judge judges one attempt of a best-of on its own layer, which
// stays unapplied: its agent_end, what an apply would refuse taken out of
// the layer (violations), its own mark and target read from the layer,
// then the task's checks with the layer laid over the folder. It returns
// the attempt's result and, when its agent run itself ended without
// working (failed, blocked, asked for a human), why. The attempts of a
// best-of are judged at once (wave.BestOf), each on a goroutine of its
// own, after beforeJudge: an attempt's records carry its run explicitly
// (emit below), what it counts in the state is taken under the state's
// save lock, and nothing of the engine's or the runner's is set for it.
func (h *bestOfHost) Judge(ctx context.Context, rn *waveRun) (wave.Attempt, string) {
	h.beforeJudge()
	r, seen, iteration := h.ws.run, h.seen, h.iteration
	l := r.spec()
	task := rn.task
	emit := func(ev record.Event) { h.ws.tags.emitAs(runOf(rn), ev) }
	res := wave.Attempt{Index: rn.slot, Agent: rn.ran}
	rn.after, rn.afterTaken = wave.TakeLayerPlan(rn.layer), true
	// What an apply would refuse, out of the layer; its tells are written
	// with the attempt's own emit (attempts are judged at once).
	ap := r.apply
	ap.Emit = emit
	tamper := ap.RefuseInLayer(rn.layer.Upper, rn.files, rn.rules, func(rel, p string) (string, string) {
		return confine.ProtectedEdit(r.dir, rel, p, r.keepEdit)
	})
	var paths []string
	if entries, err := sandbox.LayerEntries(rn.layer.Upper); err == nil {
		for _, en := range entries {
			if en.What != "folder" {
				paths = append(paths, en.Rel)
			}
		}
	}
	// endRecord, its network's records written before the attempts were
	// judged (beforeJudge).
	r.locked(func() { r.countEnd("build", rn.res) })
	emit(r.endEvent("build", task.ID, rn.ran, rn.res, paths))
	rn.ended = true
	r.recordTamperTo(emit, "build", task.ID, tamper)
	var problems []string
	stopWhy := ""
	switch rs := rn.res; {
	case rs.Blocked != "":
		stopWhy = "the agent asked for a human: " + rs.Blocked
	case rs.Status == agent.StatusBlocked, rs.Status == agent.StatusFailed, rs.Status == agent.StatusInterrupted:
		stopWhy = cmp.Or(rs.Error, fmt.Sprintf("the agent run ended %s (exit %d)", rs.Status, rs.ExitCode))
	}
	if stopWhy != "" {
		problems = append(problems, "the attempt's agent run: "+stopWhy)
	}
	if note := killedNote(l.AgentFor("build", false), rn.res); note != "" {
		problems = append(problems, note)
	}
	if len(tamper) > 0 {
		problems = append(problems, tamperNote(tamper))
	}
	structure, marks := planDiffs(seen, rn.after, task.ID)
	done := false
	if rn.after != nil && len(structure) == 0 {
		t, _ := rn.after.Find(task.ID)
		done = t.Passes
	}
	for _, d := range structure {
		emit(record.Event{Event: record.Violation, Task: task.ID, Kind: "plan_changed", Message: fmt.Sprintf("attempt %d of %s: %s; its plan was not applied", rn.slot+1, task.ID, d)})
		problems = append(problems, "VIOLATION: "+d+"; the plan stays as the engine judged it")
	}
	for _, m := range marks {
		kind := "plan_changed"
		if m.Passes {
			kind = "marked_other_task"
		}
		msg := fmt.Sprintf("%s (by attempt %d of %s); it was not applied", m, rn.slot+1, task.ID)
		emit(record.Event{Event: record.Violation, Task: m.ID, Kind: kind, Message: msg})
		problems = append(problems, "VIOLATION: "+msg)
	}
	switch {
	case !done:
		problems = append(problems, fmt.Sprintf("attempt %d for %s ended without marking it passes: true", rn.slot+1, task.ID))
	case wave.LayerFileSum(rn.layer, task.TargetFile) == r.st.TaskBase[task.ID]:
		msg := fmt.Sprintf("attempt %d of %s marked it done without changing its target %s", rn.slot+1, task.ID, task.TargetFile)
		emit(record.Event{Event: record.Violation, Task: task.ID, Kind: "marked_done_without_change", File: task.TargetFile, Message: msg})
		problems = append(problems, "VIOLATION: "+msg)
	}
	if len(problems) == 0 {
		v := r.judge().JudgeAttempt(ctx, judge.AttemptOptions{Task: task.ID, Index: rn.slot, Upper: rn.layer.Upper, Cmds: l.GateChecks(), Baseline: r.st.Baseline})
		res.Pass, res.Signal = v.Pass, v.Signal
	} else {
		res.Signal = strings.Join(problems, "\n")
	}
	if size, err := wave.LayerChange(ctx, r.dir, rn.layer.Upper); err == nil {
		res.Change = size
	}
	if h.ws.commits() {
		ref := bestOfRef(l.Name, task.ID, iteration, rn.slot)
		msg := fmt.Sprintf("looprinter: attempt %d of %s (%s)\n\nA best-of attempt, kept for inspection; not applied unless the loop kept it.", rn.slot+1, task.ID, agentKey(rn.ran))
		if _, err := wave.CommitRef(ctx, r.dir, rn.layer.Upper, ref, msg); err == nil {
			res.Ref = ref
		} else {
			emit(record.Event{Event: record.Warning, Task: task.ID, Kind: "best_of_ref", Message: fmt.Sprintf("attempt %d of %s could not be kept on %s: %v", rn.slot+1, task.ID, ref, err)})
		}
	}
	return res, stopWhy
}

// Measure runs the strength pass of every passing attempt when more than
// one passed (wave/strength.go ranks them by it). The passes run at once:
// their mutants, taken a pass at a time in turn (the first mutant of every
// pass before any pass's second), are judged up to checkWorkers at once
// (as the attempts were), each in a check box of its own over its
// attempt's layer. Each pass keeps its verdicts apart and is read in slot
// order once every mutant was judged: the counts, the pick and the records
// are the passes' one after another.
func (h *bestOfHost) Measure(ctx context.Context, runs []*waveRun, results []wave.Attempt) {
	passing := 0
	for _, a := range results {
		if a.Pass {
			passing++
		}
	}
	if passing < 2 || ctx.Err() != nil {
		return
	}
	jd, cmds := h.ws.run.judge(), h.ws.run.spec().GateChecks()
	passes := make([]*judge.AttemptPass, len(runs))
	for i, rn := range runs {
		if results[i].Pass {
			passes[i] = jd.NewAttemptPass(judge.AttemptOptions{Task: h.task.ID, Index: rn.slot, Upper: rn.layer.Upper, Cmds: cmds}, wave.AttemptMutants)
			defer passes[i].Close()
		}
	}
	type mutant struct{ pass, i int }
	var all []mutant
	for k, more := 0, true; more; k++ {
		more = false
		for p, ps := range passes {
			if ps != nil && k < ps.Mutants() {
				all = append(all, mutant{p, k})
				more = true
			}
		}
	}
	wave.Each(ctx, len(all), h.workers, func(n int) { passes[all[n].pass].Judge(ctx, all[n].i) })
	for i, ps := range passes {
		if ps != nil {
			results[i].Caught, results[i].Judged = ps.Result()
		}
	}
}

// bestOfRef is where attempt k of a best-of of task is kept (wave.Ref,
// under the loop's refs).
func bestOfRef(name, task string, iteration, k int) string {
	return wave.Ref(rollbacks.RefPrefix(name), task, iteration, k)
}

// The kept attempt of a best-of on the applied tree (wave/keep.go): an
// attempt passed on its own layer, laid under the check box, which code
// can tell from the applied tree (its mounts). Before any other passing
// attempt is dropped, the best one is applied as one run of a wave and the
// task's checks run again on the folder as the apply left it. When they
// fail there, the apply is taken back (wave.Undo), the attempt counts as
// failed with a violation, and the next passing attempt is tried.

// keepAttempt applies rn (a passing attempt) and judges it on the applied
// tree. kept says it passed there and stays applied: run and after are
// then what its task's verdict (judgeBuild) reads. Not kept, the folder is
// as before and res says why it failed.
func (h *bestOfHost) keepAttempt(ctx context.Context, rn *waveRun, res *wave.Attempt) (run *AgentRun, after *Plan, kept bool, err error) {
	r, seen := h.ws.run, h.seenPlan()
	undo, err := wave.Backup(r.dir, rn.layer.Upper, filepath.Join(r.priv, "undo"), engineOwnedPath)
	if err != nil {
		return nil, nil, false, r.stop(ReasonBlocked, "cannot keep what the apply of an attempt replaces: "+err.Error())
	}
	defer undo.Drop()
	untag := h.ws.tags.wave(rn)
	defer untag()
	run, after, err = r.finishWaveRun(ctx, rn, &waveApply{Merger: wave.NewMerger(), seen: seen})
	if err != nil || run == nil {
		return run, after, false, err
	}
	cmds := r.spec().GateChecks()
	results := r.judge().RunChecks(ctx, "task", cmds)
	if ctx.Err() != nil {
		return run, after, false, r.stop(ReasonInterrupted, "interrupted while the kept attempt of "+rn.task.ID+" was judged on the applied tree")
	}
	r.judge().ApplyBaseline(results, r.st.Baseline)
	pass := len(results) == len(cmds) && judge.AllPass(results)
	r.emit(record.Event{Event: record.Verify, Gate: "task", Task: rn.task.ID, Pass: record.Bool(pass), Checks: judge.ChecksOf(results)})
	if pass {
		return run, after, true, nil
	}
	// Taken back: the folder as before the apply, the note of the apply
	// gone, the attempt out of the running.
	if rerr := undo.Restore(); rerr != nil {
		return nil, nil, false, r.stop(ReasonBlocked, "cannot take back the apply of an attempt that failed on the applied tree: "+rerr.Error())
	}
	r.appliedSaved(rn)
	rn.dropped = true
	msg := fmt.Sprintf("attempt %d of %s passed on its own layer but its checks fail on the applied tree: its apply was taken back", rn.slot+1, rn.task.ID)
	r.emit(record.Event{Event: record.Violation, Task: rn.task.ID, Kind: "passed_only_judged", Message: msg})
	res.Pass = false
	res.Signal = "VIOLATION: " + msg + "\n" + judge.FailureSignal(nil, results)
	return nil, nil, false, nil
}

// engineOwnedPath says whether an apply never writes rel: the engine's
// records, the repository, the judged plan.
func engineOwnedPath(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	return first == loopdir.RecordsDir || first == ".git" || rel == loopdir.OutputDir+"/plan.json"
}
