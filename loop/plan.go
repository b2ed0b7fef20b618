package loop

import (
	"github.com/looprinter/looprinter/plan"
)

// The plan's format and its task graph are plan/'s: these names keep the
// engine's code and the packages above it reading as they did.

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
