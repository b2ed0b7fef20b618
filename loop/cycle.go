package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/textcut"
)

// archivePending finishes an archive that a crash interrupted.
func (e *Engine) archivePending() {
	if e.st.PendingArchive == "" {
		return
	}
	if _, err := os.Stat(loopdir.Dir(e.dir).Plan()); err == nil {
		to := loopdir.UniquePath(loopdir.Dir(e.dir).InRecords(e.st.PendingArchive))
		if err := os.Rename(loopdir.Dir(e.dir).Plan(), to); err == nil {
			e.st.PlanArchive = filepath.Base(to)
			e.emit(record.Event{Event: record.PlanArchived, From: loopdir.OutputDir + "/plan.json", To: rel(e.dir, to), Reason: e.st.PendingReason})
		}
	}
	e.st.PendingArchive, e.st.PendingReason = "", ""
}

// stepPlanOrBuild decides from plan.json whether to plan or to build, and
// does one agent run.
func (e *Engine) stepPlanOrBuild(ctx context.Context) error {
	e.archivePending()
	os.MkdirAll(loopdir.Dir(e.dir).Output(), 0o755)
	plan, errs, err := e.readPlan()
	if err == nil && len(errs) == 0 && e.st.Judged == nil {
		// A plan the engine has not accepted yet (written by hand before the
		// loop started, or by an older version): accept it now.
		errs = e.judged.acceptPlan(plan)
	}
	if err == nil && len(errs) == 0 {
		if v := e.judged.enforceJudgedPlan("", "a change made between runs"); len(v) > 0 {
			e.st.LastFailure = strings.Join(v, "\n")
		}
		plan = clonePlan(e.st.Judged)
	}
	switch {
	case err == nil && len(errs) > 0:
		// A malformed plan cannot be built from: the cycle gate names every
		// problem and the next cycle re-plans with them.
		e.emit(record.Event{Event: record.PlanInvalid, Errors: errs})
		e.st.Phase = PhaseCycleGate
		return nil
	case err == nil:
		e.lastPlan = plan
		if next, ok := plan.Next(); ok {
			e.st.Phase = PhaseBuild
			if n := e.run.attemptsOf(next); n > 1 {
				if w := bestOfWidth(e.spec, e.st, n); w > 1 {
					if w < n {
						e.emit(record.Event{Event: record.Warning, Task: next.ID, Kind: "best_of_narrowed",
							Message: fmt.Sprintf("%s gets %d of its %d attempts at once: the budgets left cover no more", next.ID, w, n)})
					}
					return e.waves.buildBestOf(ctx, plan, next, w)
				}
			}
			if wave := e.run.waveTasks(plan); wave != nil {
				return e.waves.buildWave(ctx, plan, wave)
			}
			return e.build(ctx, plan, next)
		}
		if e.st.Phase == PhaseBuild {
			e.st.Phase = PhaseCycleGate // every task passes: judge the cycle
			return nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return e.stop(ReasonBlocked, "cannot read "+loopdir.Dir(e.dir).Plan()+": "+err.Error())
	}
	return e.plan(ctx)
}

// plan runs the plan or re-plan agent.
func (e *Engine) plan(ctx context.Context) error {
	e.st.Phase = PhasePlan
	e.st.Judged, e.st.TaskBase = nil, nil
	phase, prompt, err := e.prompts.Plan()
	if err != nil {
		return err
	}
	run, err := e.run.runAgent(ctx, phase, false, "", prompt)
	if err != nil {
		return err
	}
	if note := killedNote(e.spec.AgentFor(phase, false), run.Result); note != "" {
		e.st.PendingErrors = append(e.st.PendingErrors, note)
	}
	if len(run.Tamper) > 0 {
		e.st.PendingErrors = append(e.st.PendingErrors, tamperNote(run.Tamper))
	}
	plan, errs, rerr := e.readPlan()
	if rerr == nil && len(errs) == 0 {
		errs = e.judged.acceptPlan(plan)
	}
	switch {
	case rerr != nil:
		e.emit(record.Event{Event: record.PlanInvalid, Errors: []string{"the " + phase + " run did not write " + loopdir.OutputDir + "/plan.json"}})
		e.st.Phase = PhaseCycleGate
	case len(errs) > 0:
		e.emit(record.Event{Event: record.PlanInvalid, Errors: errs})
		e.st.Phase = PhaseCycleGate
	default:
		e.lastPlan = clonePlan(e.st.Judged)
		e.st.PendingErrors, e.st.PendingGap = nil, ""
		if _, ok := e.st.Judged.Next(); ok {
			e.st.Phase = PhaseBuild
		} else {
			e.st.Phase = PhaseCycleGate
		}
	}
	return nil
}

// build runs one agent on the first task whose passes is false, then holds
// the agent to the contract: only that task marked, the plan otherwise
// unchanged, its target changed since before the task's first attempt, no
// protected file touched.
func (e *Engine) build(ctx context.Context, plan *Plan, task Task) error {
	prompt, err := e.buildPrompt(plan, task)
	if err != nil {
		return err
	}
	run, err := e.run.runAgent(ctx, "build", false, task.ID, prompt, true)
	if err == nil {
		after, errs, rerr := e.readPlan()
		if rerr != nil || len(errs) > 0 {
			after = nil
		}
		err = e.judgeBuild(ctx, task, run, e.st.Judged, after)
	} else {
		// A run cut short never counts as done, whatever it wrote into the
		// plan before it was stopped: the task runs again on resume.
		e.judged.enforceJudgedPlan(task.ID, "the build run that was cut short")
	}
	// The note of its apply (runAgent) goes once its verdict is saved.
	if serr := e.store.note(); serr != nil {
		if err == nil {
			err = serr
		}
	} else {
		e.run.singleSaved()
	}
	return err
}

// buildPrompt notes the task's target before its first attempt and
// renders the prompt of a build run on it.
func (e *Engine) buildPrompt(plan *Plan, task Task) (string, error) {
	e.st.CurrentTask = task.ID
	target := e.path(filepath.FromSlash(task.TargetFile))
	if e.st.TaskBase == nil {
		e.st.TaskBase = map[string]string{}
	}
	if _, ok := e.st.TaskBase[task.ID]; !ok {
		// Judged against the target before the task's first attempt, so work a
		// killed run did correctly can still pass on the next, live, run.
		e.st.TaskBase[task.ID] = guard.FileSum(target)
	}
	return e.prompts.Build(task, plan.Tasks)
}

// judgeBuild judges a build run on task that ended: seen is the judged
// plan it started from, after the plan it left (nil when it left none
// that reads), of which only its own task's mark counts.
func (e *Engine) judgeBuild(ctx context.Context, task Task, run *AgentRun, seen, after *Plan) error {
	target := e.path(filepath.FromSlash(task.TargetFile))
	var problems []string
	if note := killedNote(e.spec.AgentFor("build", false), run.Result); note != "" {
		problems = append(problems, note)
	}
	structure, marks := planDiffs(seen, after, task.ID)
	done := false
	if after != nil && len(structure) == 0 {
		t, _ := after.Find(task.ID)
		done = t.Passes
	}
	// Everything but the run's own mark goes back as the engine judged it.
	for _, d := range structure {
		e.emit(record.Event{Event: record.Violation, Task: task.ID, Kind: "plan_changed", Message: fmt.Sprintf("the build run for %s: %s; the plan was put back", task.ID, d)})
		problems = append(problems, "VIOLATION: "+d+"; the plan was put back as the engine judged it")
	}
	for _, m := range marks {
		kind := "plan_changed"
		if m.Passes {
			kind = "marked_other_task"
		}
		msg := fmt.Sprintf("%s (by the run for %s); it was set back", m, task.ID)
		e.emit(record.Event{Event: record.Violation, Task: m.ID, Kind: kind, Message: msg})
		problems = append(problems, "VIOLATION: "+msg)
	}
	if len(run.Tamper) > 0 {
		problems = append(problems, tamperNote(run.Tamper))
	}
	broke, checked := e.roll.rollbackTask(ctx, task)
	if broke != "" {
		problems, done = append(problems, broke), false
	}
	passed := false
	switch {
	case broke != "":
	case done && guard.FileSum(target) == e.st.TaskBase[task.ID]:
		msg := fmt.Sprintf("%s was marked done without changing its target %s; it was set back to false", task.ID, task.TargetFile)
		e.emit(record.Event{Event: record.Violation, Task: task.ID, Kind: "marked_done_without_change", File: task.TargetFile, Message: msg})
		problems = append(problems, "VIOLATION: "+msg)
	case done && len(problems) > 0:
	case done:
		passed = true
	default:
		problems = append(problems, fmt.Sprintf("the run for %s ended without marking it passes: true", task.ID))
	}
	for i := range e.st.Judged.Tasks {
		if e.st.Judged.Tasks[i].ID == task.ID {
			e.st.Judged.Tasks[i].Passes = passed
		}
	}
	e.store.noteWriteErr(e.judged.writeJudged())
	e.lastPlan = clonePlan(e.st.Judged)
	if !passed {
		e.st.taskFailed(task.ID)
	}
	if passed {
		e.st.TasksPassed++
		e.emit(record.Event{Event: record.TaskPassed, Task: task.ID, File: task.TargetFile, Message: task.Title, Checks: judge.ChecksOf(checked)})
		e.roll.noteCheckpoint(checked, false, nil)
		e.st.LastFailure = ""
		e.nop.Progress()
	}
	if len(problems) > 0 {
		signal := strings.Join(problems, "\n")
		return e.noteFailure(signal, fmt.Sprintf("run %d on %s: %s", e.st.Iterations, task.ID, textcut.LastLine(run.Result.FinalMessage)))
	}
	return nil
}

// stepCycleGate judges the cycle: the built-in plan checks, progress.txt,
// then the user's verify checks.
func (e *Engine) stepCycleGate(ctx context.Context) error {
	var errs []string
	plan, perrs, err := e.readPlan()
	invalid := false // no plan the engine could take: no build ran this cycle
	switch {
	case err != nil:
		errs, invalid = append(errs, loopdir.OutputDir+"/plan.json is missing"), true
	case len(perrs) > 0:
		errs, invalid = append(errs, perrs...), true
	case e.st.Judged == nil:
		if aerrs := e.judged.acceptPlan(plan); len(aerrs) > 0 {
			errs, invalid = append(errs, aerrs...), true
			break
		}
		fallthrough
	default:
		// Only the engine's own judgement counts, not the marks in the file.
		errs = append(errs, e.judged.enforceJudgedPlan("", "a change made before the cycle gate")...)
		plan = clonePlan(e.st.Judged)
		e.lastPlan = plan
		for _, t := range plan.Tasks {
			if !t.Passes {
				errs = append(errs, fmt.Sprintf("task %s is not done (passes is false)", t.ID))
			}
		}
	}
	if fi, err := os.Stat(loopdir.Dir(e.dir).Progress()); err != nil || fi.Size() == 0 || isBlank(loopdir.Dir(e.dir).Progress()) {
		errs = append(errs, loopdir.OutputDir+"/progress.txt is missing or empty: each build run must append its findings")
	}
	var results []judge.CheckResult
	if invalid && len(e.spec.Verify) > 0 {
		// The gate fails on the plan whatever the checks say, and no build
		// run changed the tree since they last ran: not run again.
		errs = append(errs, "the verify checks were not run: the plan is invalid, so no build ran this cycle and the gate fails on the plan alone")
	} else {
		results = e.judge().RunChecks(ctx, "cycle", e.spec.Verify)
	}
	if ctx.Err() != nil {
		return e.stop(ReasonInterrupted, "interrupted during the cycle gate")
	}
	// The objective gate comes next on the same tree: a check in both
	// lists runs once.
	e.judge().KeepForNextGate(e.st.gateKey(), results)
	errs = append(errs, e.judge().Ratchet("cycle", results)...)
	e.judge().ApplyBaseline(results, e.st.Baseline)
	pass := len(errs) == 0 && judge.AllPass(results)
	signal := judge.FailureSignal(errs, results)
	e.emit(record.Event{Event: record.Verify, Gate: "cycle", Pass: record.Bool(pass), Checks: judge.ChecksOf(results), Errors: errs,
		FailureSignal: signal, Signature: sigIf(!pass, signal)})
	if !invalid {
		e.roll.noteCheckpoint(results, false, nil)
	}
	e.st.Evidence = judge.Evidence("cycle", results, errs)
	if len(errs) == 0 && len(e.spec.Verify) == 0 {
		e.st.addNotVerified("cycle gate: no verify checks configured; only the plan and progress files were checked")
	}
	if pass {
		e.st.CycleGate = "pass"
		e.st.Phase = PhaseObjective
		e.st.GateSig, e.st.GateSame, e.st.GateTried = "", 0, nil
		e.judge().SaveTestBase(results, true)
		if !e.st.CycleFailed && len(e.spec.Verify) > 0 {
			e.st.addNotVerified("cycle gate: its checks passed before any agent run and never failed; they guard against regressions but show nothing about the agent's work")
		}
		return nil
	}
	e.st.CycleGate = "fail"
	e.st.CycleFailed = true
	if err := e.nop.GateFailure(signal, e.prompts.PlanSummary(plan)); err != nil {
		e.archive(fmt.Sprintf("plan_cycle_%d.json", e.st.Cycle), "cycle gate failed")
		return err
	}
	return e.nextCycle(fmt.Sprintf("plan_cycle_%d.json", e.st.Cycle), "cycle gate failed", strings.Split(signal, "\n"), "")
}

// stepObjectiveGate judges the key objective.
func (e *Engine) stepObjectiveGate(ctx context.Context) error {
	if len(e.spec.ObjectiveVerify) == 0 {
		e.emit(record.Event{Event: record.Warning, Gate: "objective", Message: "no objective_verify checks: the objective gate passes through; the objective is NOT VERIFIED"})
		e.emit(record.Event{Event: record.Verify, Gate: "objective", Pass: record.Bool(true), Message: "pass-through"})
		e.st.addNotVerified("objective: no objective_verify checks configured; the objective gate passed through")
		e.st.ObjectiveGate = "not_verified"
		e.st.Phase = PhasePost
		return nil
	}
	results := e.judge().RunGate(ctx, "objective", e.st.gateKey(), e.spec.ObjectiveVerify)
	if ctx.Err() != nil {
		return e.stop(ReasonInterrupted, "interrupted during the objective gate")
	}
	// verify_baseline: new-only never excuses the objective: DONE needs
	// every objective check to pass for real.
	violations := e.judge().Ratchet("objective", results)
	pass := judge.AllPass(results)
	gap := judge.FailureSignal(violations, results)
	var room *record.CleanRoom
	if pass && (e.st.ObjectiveFailed || e.spec.AllowPassing) {
		var signal string
		var err error
		if room, signal, err = e.gates.done(ctx, "objective", e.spec.ObjectiveVerify); err != nil {
			return err
		}
		if signal != "" {
			pass, gap = false, signal
		}
	}
	e.emit(record.Event{Event: record.Verify, Gate: "objective", Pass: record.Bool(pass), Checks: judge.ChecksOf(results),
		FailureSignal: gap, Signature: sigIf(!pass, gap), CleanRoom: room, Message: strings.TrimPrefix(sharedNote(results), "; ")})
	e.roll.noteCheckpoint(results, false, room)
	e.st.Evidence = append(e.st.Evidence, gateEvidence("objective", results, nil, pass, gap)...)
	if pass {
		e.st.ObjectiveGate = "pass"
		e.judge().SaveTestBase(results, true)
		if !e.st.ObjectiveFailed && !e.spec.AllowPassing {
			return e.stop(ReasonNotVerified, "the objective checks passed before any agent run and never failed since: they cannot show that the agent's work met the objective. Sharpen objective_verify so it fails until the work is done (or set allow_passing: true to keep a passing loop green)")
		}
		e.st.Phase = PhasePost
		e.nop.Progress()
		return nil
	}
	e.st.ObjectiveGate = "fail"
	e.st.ObjectiveFailed = true
	sig := judge.Signature(gap)
	if sig == e.st.GapSig {
		e.st.GapSame++
	} else {
		e.st.GapSig, e.st.GapSame = sig, 1
	}
	name := fmt.Sprintf("plan_cycle_%d_objective_gap.json", e.st.Cycle)
	if e.st.GapSame >= e.spec.Budget.GapStall {
		e.archive(name, "objective gate failed")
		return e.stop(ReasonNoProgress, fmt.Sprintf("the objective gap stayed the same for %d cycles (signature %s)", e.st.GapSame, sig))
	}
	return e.nextCycle(name, "objective gate failed", nil, gap)
}

// nextCycle archives the plan and starts the next cycle with what the
// re-plan must carry. The state is saved before the plan moves, so a crash
// in between finishes the archive on restart.
func (e *Engine) nextCycle(archive, reason string, errs []string, gap string) error {
	if e.st.Cycle >= e.spec.Budget.Cycles {
		e.archive(archive, reason)
		return e.stop(ReasonBudget, fmt.Sprintf("cycle budget spent: %d cycles, the last one's %s", e.st.Cycle, reason))
	}
	e.st.PendingArchive, e.st.PendingReason = archive, reason
	e.st.PendingErrors, e.st.PendingGap = errs, gap
	e.st.Judged, e.st.TaskBase = nil, nil
	e.st.Cycle++
	e.st.CycleGate, e.st.ObjectiveGate = "pending", "pending"
	e.st.Phase = PhasePlan
	if err := e.store.checkpoint(); err != nil {
		return err
	}
	e.archivePending()
	return nil
}

func (e *Engine) archive(name, reason string) {
	e.st.Judged, e.st.TaskBase = nil, nil
	e.st.PendingArchive, e.st.PendingReason = name, reason
	e.archivePending()
}

// stepPost runs each post phase until its done signal, at most max_steps
// agent runs each.
func (e *Engine) stepPost(ctx context.Context) error {
	for e.st.PostIndex < len(e.spec.PostPhases) {
		p := e.spec.PostPhases[e.st.PostIndex]
		if e.st.PostSteps >= p.MaxSteps {
			e.st.addNotVerified(fmt.Sprintf("post phase %s: no <promise>%s</promise> after %d steps (step cap reached)", p.Name, p.Done, p.MaxSteps))
			e.emit(record.Event{Event: record.PostPhaseEnd, Phase: p.Name, Pass: record.Bool(false), Reason: "max_steps", Message: fmt.Sprintf("%s hit its step cap of %d without %s", p.Name, p.MaxSteps, p.Done)})
			e.st.PostIndex++
			e.st.PostSteps = 0
			return nil
		}
		prompt, err := e.prompts.Post(p)
		if err != nil {
			return err
		}
		e.st.PostSteps++
		run, err := e.run.runAgent(ctx, p.Name, true, "", prompt)
		if err != nil {
			return err
		}
		if run.Result.Promise == p.Done && len(run.Tamper) == 0 {
			e.emit(record.Event{Event: record.PostPhaseEnd, Phase: p.Name, Pass: record.Bool(true), Message: fmt.Sprintf("%s done after %s", p.Name, plural(e.st.PostSteps, "step"))})
			e.st.PostIndex++
			e.st.PostSteps = 0
		}
		return nil
	}
	e.st.Phase = PhaseDone
	return nil
}

// stepRalph is one attempt of the ralph shape: the same prompt, the last
// failure injected, then the verify checks.
func (e *Engine) stepRalph(ctx context.Context) error {
	if e.st.Iterations >= e.spec.Budget.Iterations {
		return e.stop(ReasonBudget, fmt.Sprintf("attempt budget spent: %d attempts without passing the verify checks", e.st.Iterations))
	}
	prompt, err := e.prompts.Ralph()
	if err != nil {
		return err
	}
	run, err := e.run.runAgent(ctx, "ralph", false, "", prompt, true)
	if err != nil {
		return err
	}
	results := e.judge().RunChecks(ctx, "verify", e.spec.Verify)
	if ctx.Err() != nil {
		return e.stop(ReasonInterrupted, "interrupted during the verify checks")
	}
	// The verify checks decide DONE here: verify_baseline never excuses them.
	problems := e.judge().Ratchet("verify", results)
	if note := killedNote(e.spec.AgentFor("ralph", false), run.Result); note != "" {
		problems = append(problems, note)
	}
	if len(run.Tamper) > 0 {
		problems = append(problems, tamperNote(run.Tamper))
	}
	pass := judge.AllPass(results) && len(problems) == 0
	signal := judge.FailureSignal(problems, results)
	var room *record.CleanRoom
	if pass && (e.st.ObjectiveFailed || e.spec.AllowPassing) {
		var rs string
		var err error
		if room, rs, err = e.gates.done(ctx, "verify", e.spec.Verify); err != nil {
			return err
		}
		if rs != "" {
			pass, signal = false, rs
		}
	}
	e.emit(record.Event{Event: record.Verify, Gate: "verify", Pass: record.Bool(pass), Checks: judge.ChecksOf(results), Errors: problems,
		FailureSignal: signal, Signature: sigIf(!pass, signal), CleanRoom: room})
	e.roll.noteCheckpoint(results, false, nil)
	e.st.Evidence = gateEvidence("verify", results, problems, pass, signal)
	if pass {
		e.st.CycleGate = "pass"
		e.judge().SaveTestBase(results, true)
		if !e.st.ObjectiveFailed && !e.spec.AllowPassing {
			return e.stop(ReasonNotVerified, "the verify checks passed before any agent run and never failed since: they cannot show that the agent's work met the objective. Sharpen them so they fail until the work is done (or set allow_passing: true to keep a passing loop green)")
		}
		e.st.Phase = PhasePost
		e.nop.Progress()
		return nil
	}
	e.st.ObjectiveFailed = true
	e.st.CycleGate = "fail" // ralph's verify: what status shows
	return e.noteFailure(signal, fmt.Sprintf("attempt %d: %s", e.st.Iterations, textcut.LastLine(run.Result.FinalMessage)))
}

func sigIf(ok bool, signal string) string {
	if !ok {
		return ""
	}
	return judge.Signature(signal)
}

func isBlank(path string) bool {
	b, err := os.ReadFile(path)
	return err != nil || strings.TrimSpace(string(b)) == ""
}
