package loop

import (
	"path/filepath"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/plan"
	"github.com/looprinter/looprinter/textcut"
)

// The plan's format and its task graph are plan/'s: these names keep the
// engine's code and the packages above it reading as they did.

// Task is one entry of output/plan.json (plan.Task).
type Task = plan.Task

// Plan is output/plan.json (plan.Plan).
type Plan = plan.Plan

// Bounds of a plan (plan.MaxBytes, plan.MaxTasks).
const (
	MaxPlanBytes = plan.MaxBytes
	MaxPlanTasks = plan.MaxTasks
)

// CheckPlan runs the built-in plan checks on raw plan.json contents
// (plan.Check).
func CheckPlan(data []byte) (*Plan, []string) { return plan.Check(data) }

// ReadPlan reads and checks a plan file (plan.Read).
func ReadPlan(path string) (*Plan, []string, error) { return plan.Read(path) }

// targetProblem says why a targetFile can never be a task's target
// (plan.TargetProblem).
func targetProblem(target string) string { return plan.TargetProblem(target) }

// sameDepends and dependsText: plan.SameDepends, plan.DependsText.
func sameDepends(a, b []string) bool  { return plan.SameDepends(a, b) }
func dependsText(ids []string) string { return plan.DependsText(ids) }

// planCache is the last plan.json the engine parsed (plan.Cache).
type planCache = plan.Cache

// readPlan is ReadPlan for the engine's own plan.json, parsed again only
// when the file changed (plan.Cache). A copy is returned: callers may
// change it.
func (e *Engine) readPlan() (*Plan, []string, error) {
	if e.planCache == nil {
		e.planCache = &planCache{}
	}
	return e.planCache.Read(loopdir.Dir(e.dir).Plan())
}

// CurrentPlan is the plan every view of a loop shows (the run's final
// report, status, report, the dashboard): output/plan.json when it is a
// valid plan; else the engine's own copy of the plan it judges; else, for a
// loop that has stopped, the plan archived last in its final run (a gate
// that failed right before the stop archives it for the next plan); else
// nil.
func CurrentPlan(dir string, st *State) *Plan {
	if p, errs, err := ReadPlan(loopdir.Dir(dir).Plan()); err == nil && len(errs) == 0 {
		return p
	}
	if st == nil {
		return nil
	}
	if st.Judged != nil {
		return clonePlan(st.Judged)
	}
	if st.Outcome != "" && st.PlanArchive != "" && filepath.Base(st.PlanArchive) == st.PlanArchive {
		if p, errs, err := ReadPlan(loopdir.Dir(dir).InRecords(st.PlanArchive)); err == nil && len(errs) == 0 {
			return p
		}
	}
	return nil
}

func truncate(s string, n int) string { return textcut.Cut(s, n) }
