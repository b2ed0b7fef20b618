package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// Build runs at once (parallel: N). A wave is the ready tasks pickWave
// chooses; its runs start together, each in the layer of its own slot
// over the loop folder, and the engine waits for every one to end. The
// folder is not changed while any of them is mounted. Then, on the
// engine's goroutine and in plan order, each run is judged and applied as
// a single run is (applyLayer, the guard), a file a run applied before it
// in the wave also changed is merged three-way (mergeText), and its task
// is judged (judgeBuild) on the tree as the applies left it. A merge that
// conflicts applies nothing of that run: a task_conflict record, and the
// task runs again in a later wave.

// waveTasks is the wave the engine starts now: nil when builds run one at
// a time (parallel: 1, no copy-on-write layer here, one ready task).
func (r *runner) waveTasks(plan *Plan) []Task {
	l := r.spec()
	if l.Parallel < 2 || l.Shape != spec.ShapeCycle || !r.layersInForce() {
		return nil
	}
	b := wave.BudgetFor(l, r.st.spent())
	// pickWave reserves for the runs in flight past the first; here the
	// wave starts from none, so its first run is decided as today.
	w := pickWave(plan, nil, l.Parallel, b)
	for i, t := range w {
		if i > 0 && r.attemptsOf(t) > 1 {
			w = w[:i] // a task tried N ways at once runs in a wave of its own
			break
		}
	}
	if len(w) < 2 {
		return nil
	}
	return w
}

// buildWave runs a wave's build runs at once, then judges and applies
// them one by one in plan order (wave.Wave; the engine's side is
// waveHost).
func (w *waves) buildWave(ctx context.Context, plan *Plan, tasks []Task) error {
	return wave.Wave[*waveRun]{Host: &waveHost{waveRuns: waveRuns{ws: w}, plan: plan, tasks: tasks}, N: len(tasks), Workers: runtime.NumCPU()}.Run(ctx)
}

func (h *waveHost) Start(k int) (*waveRun, error) {
	prompt, err := h.ws.prompt(h.plan, h.tasks[k])
	if err != nil {
		return nil, err
	}
	r := h.ws.run
	return r.startWaveRun(k, h.tasks[k], prompt, r.spec().AgentFor("build", false), 0, len(h.tasks))
}

func (h *waveHost) Finish(ctx context.Context, rn *waveRun) error {
	if h.w == nil {
		h.w = &waveApply{Merger: wave.NewMerger(), seen: clonePlan(h.ws.run.st.Judged)}
	}
	return h.ws.finishAndJudge(ctx, rn, h.w)
}

func (h *waveRuns) Begin(runs []*waveRun) error {
	r := h.ws.run
	r.st.CurrentTask = runs[0].task.ID
	if err := r.store.checkpointInFlight(); err != nil {
		return r.stop(ReasonBlocked, "cannot save state: "+err.Error())
	}
	for _, rn := range runs {
		r.emit(record.Event{Event: record.AgentStart, Phase: "build", Task: rn.task.ID, Backend: rn.a.Backend, Model: rn.a.Model,
			PromptFile: rn.req.PromptFile, AgentRun: rn.id, Slot: rn.slot + 1, Attempt: rn.req.Attempt, Iteration: rn.req.Iteration})
	}
	h.stopTicker = r.store.checkpointEvery(5 * time.Second)
	return nil
}

func (h *waveRuns) Try(ctx context.Context, rn *waveRun) { h.ws.run.waveTries(ctx, rn) }

func (h *waveRuns) End(runs []*waveRun) {
	r := h.ws.run
	h.stopTicker()
	// Nothing any run started outlives the wave; only then are files judged.
	r.sweep()
	r.publishTranscripts(runs)
	for _, rn := range runs {
		r.endCgroup(rn.cgroup)
	}
}

func (h *waveRuns) Save() error       { return h.ws.run.store.note() }
func (h *waveRuns) Saved(rn *waveRun) { h.ws.run.appliedSaved(rn) }

// startWaveRun prepares the run of task in slot k, as runAgent does
// before its agent starts: the budgets asked, counted, its layer and
// confinement, its prompt file, its cgroup, in flight in the state. first
// is the agent the run starts from (failover and escalation applied to
// it); attempt is its number in a best-of (from 1; 0 in a wave of tasks);
// n is how many runs start at once (each capped at its share of the cost
// budget where its CLI holds the cap: wave.RunCap).
func (r *runner) startWaveRun(k int, task Task, prompt string, first spec.Agent, attempt, n int) (*waveRun, error) {
	if err := r.checkBudgets(); err != nil {
		return nil, err
	}
	if r.st.Iterations >= r.spec().Budget.Iterations {
		return nil, r.stop(ReasonBudget, "iteration budget spent: "+plural(r.st.Iterations, "build run")+", "+task.ID+" still open")
	}
	rn := &waveRun{slot: k, task: task}
	rn.first = first
	if attempt > 1 {
		// A best-of counts as one try of its task: the later attempts
		// start from the escalation step the first one reached.
		r.untry(task.ID, first)
	}
	rn.a = r.escalate("build", task.ID, rn.first, r.chooseAgent("build", task.ID, rn.first))
	ad, err := agent.Lookup(rn.a.Backend)
	if err != nil {
		return nil, r.stop(ReasonBlocked, err.Error())
	}
	rn.ad = ad
	if rn.files, rn.rules, err = r.guard.Files(r.spec()); err != nil {
		return nil, r.stop(ReasonBlocked, "cannot list the protected files: "+err.Error())
	}
	r.slot = k
	wrap, err := r.confinement(rn.files, "build")
	r.slot = 0
	if err != nil {
		return nil, r.stop(ReasonBlocked, err.Error())
	}
	if r.layer == nil {
		return nil, r.stop(ReasonBlocked, "a build run of a wave got no copy-on-write layer")
	}
	rn.layer, rn.trees = *r.layer, r.trees
	r.layer, r.trees = nil, nil
	r.st.Iterations++
	r.st.AgentRuns++
	rn.seq = r.st.AgentRuns
	rn.id = fmt.Sprintf("r%d", rn.seq)
	tdir := loopdir.Dir(r.dir).Transcripts()
	os.MkdirAll(tdir, 0o700)
	rn.base = fmt.Sprintf("%04d-c%d-i%d-build-%s", rn.seq, r.st.Cycle, r.st.Iterations, task.ID)
	prompt, rn.told = r.withOperator(prompt)
	rn.prompt = r.red().String(prompt)
	promptFile := loopdir.UniquePath(filepath.Join(tdir, rn.base+".prompt.md"))
	os.WriteFile(promptFile, []byte(rn.prompt), 0o600)
	a := rn.a
	rn.req = agent.Request{
		Phase: "build", Cycle: r.st.Cycle, Iteration: r.st.Iterations, Task: task.ID, Attempt: attempt,
		Dir: r.dir, Prompt: rn.prompt, PromptFile: promptFile,
		Backend: a.Backend, Model: a.Model, Command: a.Command, Args: a.Args, Env: a.Env,
		Permissions: a.Permissions, Timeout: a.Timeout.D(), IdleTimeout: a.IdleTimeout.D(), Grace: a.Grace.D(),
		MaxTurns: a.MaxTurns, MaxBudgetUSD: a.MaxBudgetUSD, Prices: prices(r.spec().Prices), Wrap: wrap, Redact: r.red(),
		OnStart: func(pgid int) {
			r.store.with(func() { rn.fl.PGID = pgid })
			r.store.tick()
		},
	}
	if left := r.spec().Budget.Wall.D() - r.store.wall(); rn.req.Timeout == 0 || left < rn.req.Timeout {
		rn.req.Timeout = max(left, time.Millisecond)
	}
	rn.req.MaxBudgetUSD = wave.RunCap(a.Backend, a.MaxBudgetUSD, r.spec().Budget.CostUSD-r.st.CostUSD, n)
	rn.cgroup = r.runCgroup(rn.seq)
	rn.req.CgroupFD = rn.cgroup.FD()
	rn.fl = &InFlight{Phase: "build", Task: task.ID, Seq: rn.seq, Transcript: filepath.Join(tdir, rn.base+".log"), PromptFile: promptFile,
		Run: rn.id, Slot: k, Backend: a.Backend, Started: time.Now().UTC(), Cgroup: r.st.AgentCgroup, Attempt: attempt}
	r.st.AgentCgroup = "" // the run's own, in its entry
	if k == 0 {
		r.st.InFlight = rn.fl
	} else {
		r.st.InFlightMore = append(r.st.InFlightMore, rn.fl)
	}
	r.recordGuidance("build", task.ID, rn.told)
	return rn, nil
}

// waveEmit writes a record of a wave's run, one at a time.
func (r *runner) waveEmit(rn *waveRun, ev record.Event) {
	ev.AgentRun, ev.Slot = rn.id, rn.slot+1
	if ev.Iteration == 0 {
		ev.Iteration = rn.req.Iteration
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(ev)
}

// waveTries runs a wave's agent with runAgent's retries and waits, on its
// own goroutine: what it changes in the state is taken under the save
// lock, its records under r.mu. A usage limit makes this run wait (or
// fail over) as runAgent does: the other runs of the wave on the same
// backend meet the same limit and wait too.
func (r *runner) waveTries(ctx context.Context, rn *waveRun) {
	tdir := loopdir.Dir(r.dir).Transcripts()
	onTool := func(ev agent.ToolEvent) {
		r.waveEmit(rn, record.Event{Event: record.ToolCall, Phase: "build", Task: rn.task.ID, Tool: ev.Tool, Message: ev.Summary})
	}
	apiErrors, waits := 0, 0
	rn.onlyLimits = true
	a, ad := rn.a, rn.ad
	for try := 1; ; try++ {
		final := loopdir.UniquePath(filepath.Join(tdir, fmt.Sprintf("%s.try%d.log", rn.base, try)))
		if try == 1 {
			final = loopdir.UniquePath(filepath.Join(tdir, rn.base+".log"))
		}
		rn.req.Transcript = r.liveTranscript(rn, final)
		r.store.with(func() { rn.fl.Transcript, rn.fl.Ended = rn.req.Transcript, time.Time{} })
		rn.res, rn.ran = agent.Run(ctx, rn.req, ad, onTool), a
		rn.res.Transcript = final // where it is once the wave ended
		r.store.with(func() { r.st.CostUSD, rn.fl.Ended = r.st.CostUSD+rn.res.CostUSD, rn.res.Ended })
		if rn.res.Status != agent.StatusRateLimited {
			rn.onlyLimits = false
		}
		if ctx.Err() != nil {
			return
		}
		var wait time.Duration
		if try >= maxTries {
			rn.res.Error = fmt.Sprintf("gave up after %d tries of one agent run (the last: %s): %s", try, rn.res.Status, rn.res.Error)
			rn.res.Status = agent.StatusBlocked
			return
		}
		switch rn.res.Status {
		case agent.StatusRateLimited:
			waits++
			wait = rn.res.RetryAfter
			if wait <= 0 {
				wait = r.backoff(waits)
			}
			r.mu.Lock()
			next, w, switched := r.failoverOnLimit("build", rn.task.ID, rn.first, a, wait)
			r.mu.Unlock()
			if agentKey(next) != agentKey(a) {
				if nad, err := agent.Lookup(next.Backend); err == nil {
					a, ad, wait = next, nad, w
					setAgent(&rn.req, a)
				}
			}
			if switched {
				r.waveEmit(rn, r.retryEvent("build", rn.task.ID, rn.ran, rn.res, try, 0))
				continue
			}
			if r.waveLimitStop(rn, try, wait) {
				return // limits: the policy refuses to wait
			}
		case agent.StatusAPIError:
			apiErrors++
			if apiErrors > r.spec().Budget.APIRetries {
				rn.res.Status = agent.StatusBlocked
				rn.res.Error = fmt.Sprintf("the API kept failing after %d retries: %s", r.spec().Budget.APIRetries, rn.res.Error)
				return
			}
			wait = r.backoff(apiErrors)
		}
		if wait == 0 {
			return
		}
		left := r.spec().Budget.Wall.D() - r.store.wall()
		if wait >= left {
			spent := rn.res
			spent.CostUSD, spent.CostEstimated, spent.InputTokens, spent.OutputTokens, spent.CachedTokens = 0, false, 0, 0, 0
			r.waveEmit(rn, r.retryEvent("build", rn.task.ID, rn.ran, spent, try, wait))
			rn.stop = r.stop(ReasonTimeCost, fmt.Sprintf("%s: waiting %s would pass the wall budget (%s left)", rn.res.Status, wait.Round(time.Second), left.Round(time.Second)))
			return
		}
		r.waveEmit(rn, r.retryEvent("build", rn.task.ID, rn.ran, rn.res, try, wait))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		if ctx.Err() != nil {
			return
		}
		if left := r.spec().Budget.Wall.D() - r.store.wall(); left < rn.req.Timeout {
			rn.req.Timeout = max(left, time.Millisecond)
		}
	}
}

// finishAndJudge applies one ended run of a wave (finishWaveRun) and
// judges its task (judgeBuild), every record written meanwhile carrying
// the run's id.
func (w *waves) finishAndJudge(ctx context.Context, rn *waveRun, a *waveApply) error {
	defer w.tags.wave(rn)()
	run, after, err := w.run.finishWaveRun(ctx, rn, a)
	if err == nil && run != nil {
		a.applied = append(a.applied, a.Paths...)
		w.usePrefix(rn, a)
		err = w.judgeBuild(ctx, rn.task, run, a.seen, after)
		w.roll.pre = prejudged{} // taken, or never another run's
		rn.asAssumed = err == nil && len(run.Tamper) == 0 && w.passed(rn.task.ID)
	}
	return err
}

// finishWaveRun judges and applies one run of a wave that ended, as
// runAgent does for a single run, and returns it with the plan it left
// for its task's verdict (judgeBuild); no run when it conflicted with a
// run applied before it (a task_conflict: nothing of it applied).
func (r *runner) finishWaveRun(ctx context.Context, rn *waveRun, w *waveApply) (*AgentRun, *Plan, error) {
	r.slot, r.layer, r.trees = rn.slot, &rn.layer, rn.trees
	defer func() { r.slot, r.layer, r.trees = 0, nil, nil }()
	task := rn.task.ID
	if rn.onlyLimits {
		r.st.Iterations-- // every try hit a usage limit: not an attempt
	}
	// Its own task's mark is read from its layer; the plan it left is
	// never applied (the folder's is the engine's judged plan).
	after := rn.after
	if !rn.afterTaken {
		after = wave.TakeLayerPlan(rn.layer)
	}
	var conflict string
	if rn.stop == nil && ctx.Err() == nil {
		var err error
		if conflict, err = w.Prepare(ctx, r.dir, r.priv, rn.layer); err != nil {
			conflict = "cannot merge: " + err.Error()
		}
	}
	if rn.stop != nil || ctx.Err() != nil || conflict != "" {
		// Nothing of this run reaches the folder.
		derr := sandbox.ClearLayer(rn.layer)
		for _, l := range rn.trees {
			sandbox.ClearWork(l)
		}
		if !rn.ended {
			r.endRecord("build", task, rn.ran, rn.res, nil)
		}
		r.dropInFlight(rn.fl)
		switch {
		case rn.stop != nil:
			return nil, nil, rn.stop
		case ctx.Err() != nil:
			return nil, nil, r.stop(ReasonInterrupted, "interrupted during the build runs; the agents were stopped")
		case derr != nil:
			return nil, nil, r.stop(ReasonBlocked, "cannot drop a conflicting run's layer: "+derr.Error())
		}
		msg := fmt.Sprintf("the run for %s was not applied: %s; %s runs again on the tree the wave left", task, conflict, task)
		r.emit(record.Event{Event: record.TaskConflict, Phase: "build", Task: task, Message: msg})
		r.st.LastFailure = msg
		return nil, nil, nil
	}
	changes, err := r.guard.Begin()
	if err == nil {
		err = r.guard.Snapshot(changes, rn.files)
	}
	if err == nil {
		err = r.noteApplying(rn, after, false, false)
	}
	if err != nil {
		r.dropInFlight(rn.fl)
		return nil, nil, r.stop(ReasonBlocked, err.Error())
	}
	run := &AgentRun{Result: rn.res}
	changed, created, layerTamper, werr := r.endRun("build", task, changes)
	w.Log.Add(w.Paths, w.Replaced...)
	w.changed = append(append(w.changed, changed...), created...)
	run.Changed = changed
	r.st.touched(changed)
	tamper, gerr := r.guard.Check(changes, created, rn.rules)
	run.Tamper = append(layerTamper, tamper...)
	if !rn.ended {
		r.endRecord("build", task, rn.ran, rn.res, run.Changed)
	}
	r.recordTamper("build", task, run.Tamper)
	if err := r.noteApplying(rn, after, true, len(run.Tamper) > 0 || gerr != nil || werr != nil); err != nil && gerr == nil {
		gerr = err
	}
	r.afterOperator(ctx, "build", task, rn.res, rn.told)
	// Out of flight with its verdict in the same save (buildWave's, after
	// this): a crash before it judges the run again as one that died (its
	// applied work stays; its task runs again), never loses a verdict.
	r.dropInFlight(rn.fl)
	if gerr != nil {
		return nil, nil, r.stop(ReasonBlocked, gerr.Error())
	}
	if werr != nil {
		return nil, nil, r.stop(ReasonBlocked, werr.Error())
	}
	switch res := rn.res; res.Status {
	case agent.StatusBlocked, agent.StatusFailed, agent.StatusInterrupted:
		return nil, nil, r.stop(ReasonBlocked, "build run for "+task+": "+r.failedRun(res))
	}
	if rn.res.Blocked != "" {
		return nil, nil, r.stop(ReasonBlocked, fmt.Sprintf("build run for %s: the agent asked for a human: %s", task, rn.res.Blocked))
	}
	if err := r.asked("build", task, run, rn.prompt, rn.seq); err != nil {
		return nil, nil, err
	}
	return run, after, nil
}

// killWave ends what is left of the runs of a wave the engine died in:
// each has its own cgroup and process group.
func (r *runner) killWave() {
	for _, f := range append([]*InFlight{r.st.InFlight}, r.st.InFlightMore...) {
		if f == nil || (f.PGID == 0 && f.Cgroup == "") {
			continue
		}
		if n := len(KillOrphans(r.dir, &State{AgentPGID: f.PGID, AgentCgroup: f.Cgroup})); n > 0 {
			r.emit(record.Event{Event: record.Warning, AgentRun: f.Run, Message: fmt.Sprintf("stopped %s of the run for %s that crashed", plural(n, "leftover agent process"), f.Task)})
		}
		f.PGID, f.Cgroup = 0, ""
	}
}

// dropInFlight takes a judged run of a wave out of the state's runs in
// flight.
func (r *runner) dropInFlight(f *InFlight) {
	if r.st.InFlight == f {
		r.st.InFlight = nil
	}
	for i, g := range r.st.InFlightMore {
		if g == f {
			r.st.InFlightMore = append(r.st.InFlightMore[:i:i], r.st.InFlightMore[i+1:]...)
			break
		}
	}
}

// waveLimitStop is limitStop for a run of a wave (waveTries, on the run's
// own goroutine): the same policy and the same stop, set on the run; its
// agent_end is written when the wave's runs are judged (finishWaveRun).
// It says whether the run stops.
func (r *runner) waveLimitStop(rn *waveRun, try int, wait time.Duration) bool {
	msg := r.limitSummary(rn.ran, wait)
	if msg == "" {
		return false
	}
	r.waveEmit(rn, r.retryEvent("build", rn.task.ID, rn.ran, costless(rn.res), try, wait))
	rn.stop = r.stop(ReasonBlocked, msg)
	return true
}
