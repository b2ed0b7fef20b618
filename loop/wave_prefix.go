package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
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

// prefixJudged is one run's checks run on its prefix's tree.
type prefixJudged struct {
	want    map[string]wantFile    // what the folder must hold when the run is judged
	dirs    map[string]os.FileMode // the folders the tree laid, with their modes
	cmds    []string
	results []CheckResult
	trusted bool // every run before it finished as assumed
	used    bool // its results stood
}

// wantFile is a file the prefix's tree holds: its sum and its mode.
type wantFile struct {
	sum  string
	perm os.FileMode
}

// prefixWave is what the runs judged at once read, readied once.
type prefixWave struct {
	once   sync.Once
	on     bool
	cmds   []string
	plan   []byte // the folder's plan.json as the wave found it
	judged *Plan
}

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
// order) make to the loop folder when each lands as assumed: each layer's
// files, a file two of them wrote merged as Prepare merges it, and the
// plan the engine writes once every task before the last passed. false:
// no such tree is laid (a removal, a replaced folder, a link, a file too
// large to merge, a conflict): the last run is judged after its apply.
func (h *waveHost) prefixTree(ctx context.Context, runs []*waveRun, scratch string) (*prefixJudged, bool) {
	r := h.ws.run
	type simFile struct {
		data []byte
		perm os.FileMode
	}
	sim := map[string]simFile{}
	dirs := map[string]os.FileMode{}
	tmp := filepath.Join(scratch, "merge")
	if os.MkdirAll(tmp, 0o700) != nil {
		return nil, false
	}
	for _, rn := range runs {
		entries, err := sandbox.LayerEntries(rn.layer.Upper)
		if err != nil {
			return nil, false
		}
		for _, en := range entries {
			rel := en.Rel
			if h.notApplied(rn.layer.Upper, rel) {
				continue
			}
			switch en.What {
			case "folder":
				if _, f := sim[rel]; f {
					return nil, false
				}
				if _, ok := dirs[rel]; !ok {
					dirs[rel] = en.Mode.Perm()
				}
				continue
			case "written":
			default:
				return nil, false
			}
			if _, d := dirs[rel]; d {
				return nil, false
			}
			mine := wave.ReadBase(filepath.Join(rn.layer.Upper, filepath.FromSlash(rel)))
			if mine.Other || mine.Absent {
				return nil, false
			}
			cur, seen := sim[rel]
			if !seen {
				sim[rel] = simFile{mine.Data, en.Mode.Perm()}
				continue
			}
			// An earlier run of the prefix changed it: Prepare's merge.
			base := wave.ReadBase(filepath.Join(r.dir, filepath.FromSlash(rel)))
			c := wave.BaseFile{Data: cur.data}
			switch {
			case c.Equal(base), mine.Equal(c):
				sim[rel] = simFile{mine.Data, en.Mode.Perm()}
				continue
			case base.Other:
				return nil, false
			}
			var merged []byte
			var conflict bool
			if (base.Absent || len(base.Data) == 0) && rel == loopdir.OutputDir+"/progress.txt" {
				merged = append(append([]byte(nil), c.Data...), mine.Data...)
			} else if merged, conflict, err = wave.MergeText(ctx, tmp, base.Data, c.Data, mine.Data); err != nil || conflict {
				return nil, false
			}
			sim[rel] = simFile{merged, en.Mode.Perm()}
		}
	}
	// The plan as the engine writes it once every task before the last
	// passed.
	planRel := loopdir.OutputDir + "/plan.json"
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
	if _, f := sim[planRel]; f {
		return nil, false
	}
	sim[planRel] = simFile{plan, planPerm}
	up := filepath.Join(scratch, "u")
	p := &prefixJudged{want: map[string]wantFile{}, dirs: map[string]os.FileMode{}}
	rels := make([]string, 0, len(dirs))
	for rel := range dirs {
		rels = append(rels, rel)
	}
	slices.Sort(rels) // parents first
	for _, rel := range rels {
		if err := os.MkdirAll(filepath.Join(up, filepath.FromSlash(rel)), 0o700); err != nil {
			return nil, false
		}
		p.dirs[rel] = dirs[rel]
	}
	for rel, f := range sim {
		to := filepath.Join(up, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return nil, false
		}
		if err := os.WriteFile(to, f.data, f.perm); err != nil || os.Chmod(to, f.perm) != nil {
			return nil, false
		}
		p.want[rel] = wantFile{sum: guard.FileSum(to), perm: f.perm}
	}
	for _, rel := range rels { // the folders' own modes, once filled
		os.Chmod(filepath.Join(up, filepath.FromSlash(rel)), dirs[rel])
	}
	return p, true
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
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil {
		return nil, false
	}
	tasks, ok := doc["tasks"].([]any)
	if !ok || len(tasks) != len(want.Tasks) {
		return nil, false
	}
	for i, t := range tasks {
		m, ok := t.(map[string]any)
		if !ok {
			return nil, false
		}
		m["passes"] = want.Tasks[i].Passes
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
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
	covers := func(rel string) bool {
		_, laid := p.dirs[rel]
		if _, ok := p.want[rel]; ok || laid || rel == planRel {
			return true
		}
		for f := range p.want {
			if strings.HasPrefix(f, rel+"/") {
				return true // a folder above a laid file
			}
		}
		return false
	}
	for _, rel := range a.changed {
		if !covers(rel) {
			return
		}
	}
	for _, rel := range a.applied {
		if !covers(rel) {
			return
		}
	}
	for rel, f := range p.want {
		path := filepath.Join(w.run.dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != f.perm || guard.FileSum(path) != f.sum {
			return
		}
	}
	for rel, perm := range p.dirs {
		fi, err := os.Lstat(filepath.Join(w.run.dir, filepath.FromSlash(rel)))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != perm {
			return
		}
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

// prejudged is the next task gate's checks already run on the tree they
// judge (a run of a wave judged at once with the others).
type prejudged struct {
	task    string
	cmds    []string
	results []CheckResult
}

// take returns the results for task's gate of cmds, once; nil: run them.
func (p *prejudged) take(task string, cmds []string) []CheckResult {
	rs := p.results
	ok := p.task == task && slices.Equal(p.cmds, cmds)
	*p = prejudged{}
	if !ok {
		return nil
	}
	return rs
}
