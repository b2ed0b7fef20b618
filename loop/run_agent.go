package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// maxTries bounds the tries of one agent run (rate-limit waits and API
// error retries together); the wall budget normally ends them long before.
// A variable only so that a test can lower it.
var maxTries = 100

// runAgent runs one agent for a phase, with everything around it: the budget
// check first, pause and loop-file changes, the prompt file, protected files,
// rate-limit waits and API-error retries, and the records. It returns a stop
// when the loop must end (budget, blocked, interrupted). iteration says the
// run is a build run or a ralph attempt: it is counted once its agent is
// about to start, never before (a run the budgets refuse is not counted).
func (r *runner) runAgent(ctx context.Context, phase string, post bool, task string, prompt string, iteration ...bool) (*AgentRun, error) {
	if err := r.checkBudgets(); err != nil {
		return nil, err
	}
	counts := len(iteration) > 0 && iteration[0]
	if (counts || phase == "plan" || phase == "replan") && r.spec().Shape != spec.ShapeReview && r.st.Iterations >= r.spec().Budget.Iterations {
		msg := "iteration budget spent: " + plural(r.st.Iterations, "build run")
		if r.spec().Shape == spec.ShapeRalph {
			msg = fmt.Sprintf("attempt budget spent: %d attempts without passing the verify checks", r.st.Iterations)
		}
		if task != "" {
			msg += ", " + task + " still open"
		}
		if !counts {
			msg += "; no " + phase + " run starts past it"
		}
		return nil, r.stop(ReasonBudget, msg)
	}
	first := r.spec().AgentFor(phase, post)
	a := r.escalate(phase, task, first, r.chooseAgent(phase, task, first))
	ad, err := agent.Lookup(a.Backend)
	if err != nil {
		return nil, r.stop(ReasonBlocked, err.Error())
	}
	files, rules, err := r.guard.Files(r.spec())
	if err != nil {
		return nil, r.stop(ReasonBlocked, "cannot list the protected files: "+err.Error())
	}
	wrap, err := r.confinement(files, phase)
	if err != nil {
		return nil, r.stop(ReasonBlocked, err.Error())
	}
	changes, err := r.guard.Begin()
	if err != nil {
		return nil, r.stop(ReasonBlocked, err.Error())
	}
	if err := r.guard.Snapshot(changes, files); err != nil {
		return nil, r.stop(ReasonBlocked, err.Error())
	}
	if counts {
		r.st.Iterations++
	}
	if phase == "plan" || phase == "replan" {
		r.st.PlanRuns++
	}
	r.st.AgentRuns++
	seq := r.st.AgentRuns

	tdir := loopdir.Dir(r.dir).Transcripts()
	os.MkdirAll(tdir, 0o700)
	base := fmt.Sprintf("%04d-c%d-i%d-%s", seq, r.st.Cycle, r.st.Iterations, phase)
	if task != "" {
		base += "-" + task
	}
	prompt, told := r.withOperator(prompt)
	// The prompt carries failure signals, progress and guidance: what an
	// agent or a check printed goes to the model provider only redacted.
	prompt = r.red().String(prompt)
	promptFile := uniquePath(filepath.Join(tdir, base+".prompt.md"))
	os.WriteFile(promptFile, []byte(prompt), 0o600)

	req := agent.Request{
		Phase: phase, Cycle: r.st.Cycle, Iteration: r.st.Iterations, Task: task,
		Dir: r.dir, Prompt: prompt, PromptFile: promptFile,
		Backend: a.Backend, Model: a.Model, Command: a.Command, Args: a.Args, Env: a.Env,
		Permissions: a.Permissions, Timeout: a.Timeout.D(), IdleTimeout: a.IdleTimeout.D(), Grace: a.Grace.D(),
		MaxTurns: a.MaxTurns, MaxBudgetUSD: a.MaxBudgetUSD, Prices: prices(r.spec().Prices), Wrap: wrap, Redact: r.red(),
		OnStart: func(pgid int) {
			// Saved so that a restart after SIGKILL can end an orphaned agent
			// (and shown in the public copy).
			r.st.AgentPGID = pgid
			r.store.tick()
		},
	}
	// A run never outlives the loop's wall budget, nor its cost budget
	// where the CLI can cap spend.
	if left := r.spec().Budget.Wall.D() - r.store.wall(); req.Timeout == 0 || left < req.Timeout {
		req.Timeout = max(left, time.Millisecond) // never 0: 0 would mean no timeout
	}
	if left := r.spec().Budget.CostUSD - r.st.CostUSD; req.MaxBudgetUSD == 0 || left < req.MaxBudgetUSD {
		req.MaxBudgetUSD = left
	}
	// Saved before the agent starts: a restart that finds it judges what
	// the run did (and counts what it reported) before anything else.
	cgroup := r.runCgroup(seq)
	req.CgroupFD = cgroup.FD()
	r.st.InFlight = &InFlight{Phase: phase, Task: task, Seq: seq, Post: post, Transcript: filepath.Join(tdir, base+".log"), PromptFile: promptFile, Started: time.Now().UTC()}
	if err := r.store.checkpointInFlight(); err != nil {
		return nil, r.stop(ReasonBlocked, "cannot save state: "+err.Error())
	}
	stopTicker := r.store.checkpointEvery(5 * time.Second)
	defer stopTicker()

	r.recordGuidance(phase, task, told)
	r.emit(record.Event{Event: record.AgentStart, Phase: phase, Task: task, Backend: a.Backend, Model: a.Model, PromptFile: promptFile})
	onTool := func(ev agent.ToolEvent) {
		r.emit(record.Event{Event: record.ToolCall, Phase: phase, Task: task, Tool: ev.Tool, Message: ev.Summary})
	}
	var res agent.Result
	apiErrors, waits := 0, 0
	// A run whose every try hit a usage limit did no work: it is not an
	// attempt (docs/stopping.md: rate limits do not count).
	onlyLimits := true
	// ran is the agent that ran the last try: its records name it, not the
	// agent a failover moved the run on to (agent_retry, agent_end).
	ran := a
	uncount := func() {
		if counts && onlyLimits {
			r.st.Iterations-- // counted above, before the run
		}
	}
	for try := 1; ; try++ {
		req.Transcript = uniquePath(filepath.Join(tdir, fmt.Sprintf("%s.try%d.log", base, try)))
		if try == 1 {
			req.Transcript = uniquePath(filepath.Join(tdir, base+".log"))
		}
		r.st.InFlight.Transcript = req.Transcript
		r.store.with(func() { r.st.InFlight.Ended = time.Time{} })
		res, ran = agent.Run(ctx, req, ad, onTool), a
		r.store.with(func() { r.st.InFlight.Ended = res.Ended })
		r.st.CostUSD += res.CostUSD
		if res.Status != agent.StatusRateLimited {
			onlyLimits = false
		}
		if ctx.Err() != nil {
			break
		}
		var wait time.Duration
		if try >= maxTries {
			// A hard bound, whatever the waits and the retry counts say.
			res.Error = fmt.Sprintf("gave up after %d tries of one agent run (the last: %s): %s", try, res.Status, res.Error)
			res.Status = agent.StatusBlocked
			break
		}
		switch res.Status {
		case agent.StatusRateLimited:
			waits++
			wait = res.RetryAfter
			if wait <= 0 {
				wait = r.backoff(waits)
			}
			next, w, switched := r.failoverOnLimit(phase, task, first, a, wait)
			if agentKey(next) != agentKey(a) {
				if nad, err := agent.Lookup(next.Backend); err == nil {
					a, ad, wait = next, nad, w
					setAgent(&req, a)
				}
			}
			if switched {
				// The next candidate at once: no wait, no attempt counted.
				// The try that hit the limit is recorded on its own agent,
				// with what it cost.
				r.retryRecord(phase, task, ran, res, try, 0)
				continue
			}
			if err := r.limitStop(phase, task, ran, res, try, wait); err != nil {
				uncount() // limits: the policy refuses to wait
				return nil, err
			}
		case agent.StatusAPIError:
			apiErrors++
			if apiErrors > r.spec().Budget.APIRetries {
				res.Status = agent.StatusBlocked
				res.Error = fmt.Sprintf("the API kept failing after %d retries: %s", r.spec().Budget.APIRetries, res.Error)
				break
			}
			wait = r.backoff(apiErrors)
		}
		if wait == 0 {
			break
		}
		left := r.spec().Budget.Wall.D() - r.store.wall()
		if wait >= left {
			// The wait that would pass the budget is recorded, but the
			// try's cost once only: on its agent_end.
			spent := res
			spent.CostUSD, spent.CostEstimated, spent.InputTokens, spent.OutputTokens, spent.CachedTokens = 0, false, 0, 0, 0
			r.retryRecord(phase, task, ran, spent, try, wait)
			r.endRecord(phase, task, ran, res, nil)
			uncount()
			return nil, r.stop(ReasonTimeCost, fmt.Sprintf("%s: waiting %s would pass the wall budget (%s left)", res.Status, wait.Round(time.Second), left.Round(time.Second)))
		}
		r.retryRecord(phase, task, ran, res, try, wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		if ctx.Err() != nil {
			break
		}
		if left := r.spec().Budget.Wall.D() - r.store.wall(); left < req.Timeout {
			req.Timeout = max(left, time.Millisecond)
		}
	}
	if onlyLimits {
		uncount() // given up, or interrupted, while every try hit a limit
	}
	stopTicker()
	// Nothing the agent started outlives its run; only then are files judged.
	r.sweep()
	r.endCgroup(cgroup)
	gitTamper := r.restoreGit()
	r.st.AgentPGID = 0
	run := &AgentRun{Result: res}
	// A build run's apply is noted first: a restart after a kill from here
	// to the save of its task's verdict knows its work is in the folder.
	noted := r.singleApply(phase, task, counts)
	var noteErr error
	if noted {
		noteErr = r.noteSingleApply(seq, task, false, false)
	}
	changed, created, layerTamper, werr := r.endRun(phase, task, changes)
	run.Changed = changed
	r.st.touched(changed)
	tamper, gerr := r.guard.Check(changes, created, rules)
	run.Tamper = append(append(layerTamper, tamper...), gitTamper...)
	if noted {
		if err := r.noteSingleApply(seq, task, true, len(run.Tamper) > 0 || gerr != nil || werr != nil || noteErr != nil); err != nil && noteErr == nil {
			noteErr = err
		}
		if gerr == nil {
			gerr = noteErr // the loop stops: a kill before its verdict is saved would run the task again
		}
	}
	r.endRecord(phase, task, ran, res, run.Changed)
	r.recordTamper(phase, task, run.Tamper)
	r.afterOperator(ctx, phase, task, res, told)
	r.st.InFlight = nil
	if err := r.store.note(); err != nil {
		return nil, err
	}
	if gerr != nil {
		return nil, r.stop(ReasonBlocked, gerr.Error())
	}
	if werr != nil {
		return nil, r.stop(ReasonBlocked, werr.Error())
	}
	if ctx.Err() != nil {
		return nil, r.stop(ReasonInterrupted, "interrupted during the "+phase+" run; the agent was stopped")
	}
	switch res.Status {
	case agent.StatusBlocked, agent.StatusFailed, agent.StatusInterrupted:
		return nil, r.stop(ReasonBlocked, fmt.Sprintf("%s run: %s", phase, r.failedRun(res)))
	}
	if res.Blocked != "" {
		return nil, r.stop(ReasonBlocked, fmt.Sprintf("%s run: the agent asked for a human: %s", phase, res.Blocked))
	}
	if err := r.asked(phase, task, run, prompt, seq); err != nil {
		return nil, err
	}
	return run, nil
}

// uniquePath is loopdir.UniquePath: a file of the records is never
// overwritten.
var uniquePath = loopdir.UniquePath

// restoreGit puts .git's control files back as they were before a Landlock
// run, each change it undid a refused change.
func (r *runner) restoreGit() []guard.Tamper {
	g := r.gitGuard
	if g == nil {
		return nil
	}
	r.gitGuard = nil
	return confine.PutGitBack(r.priv, g, "after the run", r.emit)
}

// failedRun says why an agent run that ended blocked, failed or
// interrupted stops the loop: its error (or status and exit code), the
// question it asked a human, where its transcript is, the fix.
func (r *runner) failedRun(res agent.Result) string {
	msg := res.Error
	if msg == "" {
		msg = fmt.Sprintf("the agent run ended %s (exit %d)", res.Status, res.ExitCode)
	}
	if res.Blocked != "" {
		msg = "the agent asked for a human: " + res.Blocked
	}
	if fi, err := os.Stat(res.Transcript); err == nil && fi.Size() > 0 {
		msg += fmt.Sprintf(" (transcript %s)", rel(r.dir, res.Transcript))
	}
	msg += confine.OutsideView(r.spec(), res) // a path it needs is not in its view: the field to add it to
	if fix := r.net.RefusedFix(); fix != "" {
		res.Fix = fix
	}
	if res.Fix != "" {
		msg += "\nfix: " + res.Fix
	}
	return msg
}

// keepLoopFileEdit decides about a loop file that changed during an agent
// run. Nobody can tell whether the agent or the user edited it, so the rule
// is the supervisor's: a change that weakens nothing (prompts, added checks,
// lower budgets) stays and takes effect at the next run; a change that
// removes or weakens a gate is undone.
func (r *runner) keepLoopFileEdit(rel string, old, cur []byte) (bool, string) {
	if filepath.Join(r.dir, rel) != r.spec().Path {
		return false, ""
	}
	v := spec.Judge(old, cur, r.spec().Path)
	if len(v.Refused) == 0 {
		return true, ""
	}
	return false, strings.Join(v.Refused, "; ")
}
