// The names the engine gives types of the rooms below it: the state's
// fields (the operator's, failover's, stopping's, the plan's) and the
// judge's results, kept so that callers and the state read as before.

package loop

import (
	"github.com/looprinter/looprinter/failover"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/plan"
	"github.com/looprinter/looprinter/stopping"
)

// PlanWait is the first plan's wait for an OK (operator.PlanWait).
type PlanWait = operator.PlanWait

// FailoverState is what the engine knows about usage limits.
type FailoverState = failover.State

// EscalationState is what the engine knows of escalations.
type EscalationState = failover.Escalation

// Repeat is one task's no-progress count in a wave (stopping.Repeat).
type Repeat = stopping.Repeat

// Question is an agent's question the loop waits on (operator.Question).
type Question = operator.Question

// Answered is what the next agent run's prompt carries about the last
// question (operator.Answered).
type Answered = operator.Answered

// Task is one entry of output/plan.json (plan.Task).
type Task = plan.Task

// Plan is output/plan.json (plan.Plan).
type Plan = plan.Plan

// CheckResult is one check command's outcome, with its failure signal.
type CheckResult = judge.CheckResult
