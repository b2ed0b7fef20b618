package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/plan"
	"github.com/looprinter/looprinter/wave"
)

// A wave's runs judged at once (speculative prefix judging, wave.Speculator).
// Once every run of a wave ended, and before any is applied, run k (in
// plan order) has its task's checks (git.rollback: task's gate checks, the
// only checks a run's verdict runs) run on the tree serial applying would
// leave when runs 0..k all land as assumed: every one applied whole, its
// files merged as wave.Merger.Prepare merges them, every task before k
// passed (the judged plan marks it). That tree's change over the loop
// folder is laid, as one upper folder in the engine's private folder, under
// the check box's own layer (judge.PrefixChecks); the runs are judged up to
// the machine's cores at once. Then the runs are applied and judged in plan
// order as before; run k's task gate takes the results run at once only
// when every run before it finished as assumed (wave.Wave's Trust) and the
// folder holds, when k's checks would run, exactly what its prefix's tree
// laid (usePrefix: every path the applies wrote is one the tree laid, and
// every file it laid is in the folder, byte for byte, with its mode).
// Otherwise, and for every run after, the checks run on the folder as
// before. Nothing of an agent's is judged while it can still write: the
// runs ended, their layers are the engine's; the upper folder is the
// engine's copy.

func (h *waveHost) ready() {
	h.pre.once.Do(func() {
		r := h.ws.run
		l := r.spec()
		h.pre.cmds = l.GateChecks()
		h.pre.on = l.Git.Rollback == "task" && h.ws.roll != nil && h.ws.roll.engineCommits() && judge.PrefixOK(h.pre.cmds) && r.st.Judged != nil
		if !h.pre.on {
			return
		}
		data, err := guard.ReadBounded(loopdir.Dir(r.dir).Plan(), MaxPlanBytes)
		if err != nil {
			h.pre.on = false
			return
		}
		h.pre.plan, h.pre.judged = data, clonePlan(r.st.Judged)
		r.judge()
	})
}

// Speculate judges runs[k] on its prefix's tree (wave.Speculator).
func (h *waveHost) Speculate(ctx context.Context, runs []*waveRun, k int) {
	h.ready()
	if !h.pre.on {
		return
	}
	r := h.ws.run
	scratch := filepath.Join(r.priv, "prefix", fmt.Sprint(runs[k].slot))
	os.RemoveAll(scratch)
	defer os.RemoveAll(scratch)
	p, ok := h.prefixTree(ctx, runs[:k+1], scratch)
	if !ok || ctx.Err() != nil {
		return
	}
	p.cmds = h.pre.cmds
	p.results = r.judge().PrefixChecks(ctx, "task", runs[k].task.ID, p.cmds, filepath.Join(scratch, "u"))
	if ctx.Err() != nil || len(p.results) != len(p.cmds) {
		return
	}
	runs[k].pre = p
}

func (h *waveHost) Trust(rn *waveRun, ok bool) {
	if rn.pre != nil {
		rn.pre.trusted = ok
	}
}

func (h *waveHost) AsAssumed(rn *waveRun) bool { return rn.asAssumed }

// prefixTree lays, in scratch/u, the change the applies of runs (in plan
// order) make to the loop folder when each lands as assumed
// (wave.SimulatePrefix), with the plan the engine writes once every task
// before the last passed. false: no such tree is laid; the last run is
// judged after its apply.
func (h *waveHost) prefixTree(ctx context.Context, runs []*waveRun, scratch string) (*prefixJudged, bool) {
	r := h.ws.run
	uppers := make([]string, len(runs))
	for i, rn := range runs {
		uppers[i] = rn.layer.Upper
	}
	tree, ok := wave.SimulatePrefix(ctx, r.dir, uppers, h.notApplied, filepath.Join(scratch, "merge"))
	if !ok {
		return nil, false
	}
	var passed []string
	for _, rn := range runs[:len(runs)-1] {
		passed = append(passed, rn.task.ID)
	}
	plan, ok := judgedPlanData(h.pre.plan, h.pre.judged, passed)
	if !ok {
		return nil, false
	}
	planPerm := os.FileMode(0o644)
	if fi, err := os.Lstat(loopdir.Dir(r.dir).Plan()); err == nil {
		planPerm = fi.Mode().Perm()
	}
	if !tree.Put(loopdir.OutputDir+"/plan.json", plan, planPerm) {
		return nil, false
	}
	laid, ok := tree.Lay(filepath.Join(scratch, "u"))
	if !ok {
		return nil, false
	}
	return &prefixJudged{laid: laid}, true
}

// notApplied says whether rel of a run's layer is one no apply takes: the
// plan (the engine's), the engine's own paths, the holdout files and the
// repository hidden from the run. Laid or not, the folder's version shows.
func (h *waveHost) notApplied(upper, rel string) bool {
	if rel == loopdir.OutputDir+"/plan.json" {
		return true
	}
	if _, owned := confine.EngineOwned(rel, true); owned {
		return true
	}
	j := h.ws.run.judge()
	return j.HoldoutPath(upper, rel) || j.TouchesHoldout(rel) || confine.GitHidden(j.HiddenGit(), rel)
}

// judgedPlanData is plan.json as writeJudged leaves data once judged (the
// engine's plan at the wave's start) has the tasks passed marked: data
// itself when it says so already, else data with each task's mark set.
// false: writeJudged would write the plan whole (not laid).
func judgedPlanData(data []byte, judged *Plan, passed []string) ([]byte, bool) {
	want := clonePlan(judged)
	for i := range want.Tasks {
		if slices.Contains(passed, want.Tasks[i].ID) {
			want.Tasks[i].Passes = true
		}
	}
	cur, errs := CheckPlan(data)
	if len(errs) > 0 || cur == nil {
		return nil, false
	}
	s, marks := planDiffs(want, cur, "")
	switch {
	case len(s) > 0:
		return nil, false
	case len(marks) == 0:
		return data, true
	}
	passes := make([]bool, len(want.Tasks))
	for i, t := range want.Tasks {
		passes[i] = t.Passes
	}
	return plan.MarkPassed(data, passes)
}

// usePrefix hands rn's checks run at once to its task gate when they
// stand: every run before it finished as assumed, and the folder, now
// that rn is applied, is its prefix's tree (every path an apply of the
// wave wrote or changed one the tree laid, every file the tree laid here
// with its sum and mode).
func (w *waves) usePrefix(rn *waveRun, a *waveApply) {
	p := rn.pre
	if p == nil || !p.trusted || w.roll == nil {
		return
	}
	planRel := loopdir.OutputDir + "/plan.json"
	for _, rel := range append(append([]string(nil), a.changed...), a.applied...) {
		if rel != planRel && !p.laid.Covers(rel) {
			return
		}
	}
	if !p.laid.Holds(w.run.dir) {
		return
	}
	w.roll.pre = prejudged{task: rn.task.ID, cmds: p.cmds, results: p.results}
	p.used = true
}

// passed says whether task is marked passed in the judged plan.
func (w *waves) passed(task string) bool {
	if w.run.st.Judged == nil {
		return false
	}
	t, ok := w.run.st.Judged.Find(task)
	return ok && t.Passes
}
