package loop

import (
	"context"
	"slices"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	rollbacks "github.com/looprinter/looprinter/rollback"
	"github.com/looprinter/looprinter/spec"
)

// Checkpoints and rollback live in rollback/ (the ledger, what counts as
// the best state, the move back); this is the engine's side: when a
// checkpoint is taken, whether a loop's commits can be checkpoints, what a
// move back means for the plan the engine judged.

// rollback is the engine's keeper of checkpoints. What it needs of the
// engine comes in at construction (openEngine).
type rollback struct {
	dir   string // the loop folder
	priv  string // the engine's private folder
	st    *State // the engine's state (Judged, TaskBase, the rollback marks)
	spec  func() *spec.Loop
	emit  func(record.Event)
	judge func() *judge.Judge // the engine's judge: it runs the gate checks
	// aside lists the runner files the agent added (the clean room's
	// set-aside list) on the tree as it is now.
	aside func() ([]string, error)
	// writeJudged writes plan.json from the judged plan (judgedPlan.writeJudged).
	writeJudged  func() error
	noteWriteErr func(error)
	// pre is the next task gate's checks already run (a wave's run judged
	// at once with the others, on the same tree: wave_prefix.go); taken
	// once.
	pre prejudged
}

// keeper is the rollback room's keeper over the engine's state.
func (rb *rollback) keeper() *rollbacks.Keeper {
	return &rollbacks.Keeper{Dir: rb.dir, Priv: rb.priv, Name: rb.spec().Name, Marks: &rb.st.Marks, Emit: rb.emit,
		Aside: rb.aside, Passed: rb.judgedTasks,
		At: func() (int, int) { return rb.st.Cycle, rb.st.Iterations }}
}

// engineCommits says whether the engine's commits can be checkpoints: a git
// repository, and a loop that commits (the review shape's fixer commits
// itself, so its history is not the engine's).
func (rb *rollback) engineCommits() bool {
	if rb.spec().Shape == spec.ShapeReview || (rb.spec().Git.Commit != nil && !*rb.spec().Git.Commit) {
		return false
	}
	return confine.GitDir(rb.spec()) != ""
}

// judgedTasks are the tasks of the engine's plan it judged passed.
func (rb *rollback) judgedTasks() []string {
	var out []string
	if rb.st.Judged != nil {
		for _, t := range rb.st.Judged.Tasks {
			if t.Passes {
				out = append(out, t.ID)
			}
		}
	}
	return out
}

// noteCheckpoint records the results of checks that just ran as a
// checkpoint (rollback.Keeper.NoteCheckpoint), when the engine's commits
// can be checkpoints.
func (rb *rollback) noteCheckpoint(results []CheckResult, baseline bool, room *record.CleanRoom) {
	if len(results) == 0 || !rb.engineCommits() {
		return
	}
	rb.keeper().NoteCheckpoint(results, baseline, room)
}

// rollbackTask runs the gate checks after a build run when git.rollback is
// task. If a check that passed at the latest checkpoint fails now, the run
// is undone at once (rollback.Keeper.UndoBroken) and the returned text
// says which checks it broke (for the next prompt). The results are
// returned for the checkpoint the run's commit makes when nothing broke.
func (rb *rollback) rollbackTask(ctx context.Context, task Task) (string, []CheckResult) {
	if rb.spec().Git.Rollback != "task" || !rb.engineCommits() {
		return "", nil
	}
	cmds := rb.spec().GateChecks()
	if len(cmds) == 0 {
		return "", nil
	}
	results := rb.judge().RunChecksFrom(ctx, "task", cmds, rb.pre.take(task.ID, cmds))
	if ctx.Err() != nil {
		return "", nil
	}
	rb.emit(record.Event{Event: record.Verify, Gate: "task", Task: task.ID, Pass: record.Bool(judge.AllPass(results)), Checks: judge.ChecksOf(results)})
	return rb.keeper().UndoBroken(ctx, task.ID, results)
}

// settleBest leaves the branch at the best checkpoint when the loop stops
// without DONE (rollback.Keeper.SettleBest), and the plan the engine
// judged goes back with the files. It returns what was kept, or nil.
func (rb *rollback) settleBest(o *Outcome) *KeptRef {
	switch o.Reason {
	case ReasonBudget, ReasonNoProgress, ReasonTimeCost, ReasonBlocked:
	default:
		return nil
	}
	if !rb.engineCommits() {
		return nil
	}
	s := rb.keeper().SettleBest(Title(o.Reason))
	o.Next = append(o.Next, s.Next...)
	if s.Kept == nil {
		return nil
	}
	if rb.st.Judged != nil {
		at := map[string]bool{}
		for _, id := range s.Tasks {
			at[id] = true
		}
		for i := range rb.st.Judged.Tasks {
			t := &rb.st.Judged.Tasks[i]
			if t.Passes && !at[t.ID] {
				t.Passes = false
				delete(rb.st.TaskBase, t.ID)
			}
		}
		rb.noteWriteErr(rb.writeJudged())
	}
	return s.Kept
}

// guardRefs puts back every kept ref an agent moved or deleted.
func (rb *rollback) guardRefs() {
	if rb.engineCommits() {
		rb.keeper().GuardRefs()
	}
}

// noteOutside finds the user's files when a run starts
// (rollback.Keeper.NoteOutside).
func (rb *rollback) noteOutside(ctx context.Context) {
	if rb.engineCommits() {
		rb.keeper().NoteOutside(ctx, rb.st.Touched)
	}
}

func loadLedger(priv string) *Ledger { return rollbacks.Load(priv) }

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
