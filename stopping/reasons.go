package stopping

import (
	"path/filepath"
	"strings"
)

// How a loop ends: the reasons an outcome gives, their exit codes (one a
// reason, docs/stopping.md), the name the final report gives each, and the
// next steps it advises.
const (
	ReasonDone        = "done"
	ReasonBudget      = "budget_spent"
	ReasonNoProgress  = "no_progress"
	ReasonTimeCost    = "time_or_cost"
	ReasonBlocked     = "blocked"
	ReasonInterrupted = "interrupted"
	// ReasonAlreadyPassing: every check passed before any agent run.
	ReasonAlreadyPassing = "already_passing"
	// ReasonNotVerified: the gates passed, but a gate that decides DONE
	// never failed, so nothing shows it judged the agent's work.
	ReasonNotVerified = "not_verified"
)

// ExitCodes maps each reason to the exit code of `run`.
var ExitCodes = map[string]int{
	ReasonDone: 0, ReasonBudget: 1, ReasonNoProgress: 2, ReasonTimeCost: 3,
	ReasonBlocked: 4, ReasonAlreadyPassing: 5, ReasonNotVerified: 6, ReasonInterrupted: 130,
}

// titles name each reason as the final report does.
var titles = map[string]string{
	ReasonDone: "DONE", ReasonBudget: "BUDGET SPENT", ReasonNoProgress: "NO PROGRESS",
	ReasonTimeCost: "TIME OR COST BUDGET", ReasonBlocked: "BLOCKED", ReasonInterrupted: "INTERRUPTED",
	ReasonAlreadyPassing: "ALREADY PASSING", ReasonNotVerified: "NOT VERIFIED",
}

// Title is a reason as the final report names it.
func Title(reason string) string {
	if t, ok := titles[reason]; ok {
		return t
	}
	return strings.ToUpper(reason)
}

// NextSteps is the advice of a loop that stopped for reason, its loop file
// at loopFile; nil for DONE and for a reason with none.
func NextSteps(reason, loopFile string) []string {
	switch reason {
	case ReasonBudget:
		return []string{"read output/progress.txt and the last verify records for what failed",
			"sharpen the prompts or split the objective, then raise budget.iterations or budget.cycles in " + filepath.Base(loopFile) + " and run again (counters are kept)"}
	case ReasonNoProgress:
		return []string{"the same failure repeated: the diagnosis is wrong, not the effort",
			"read the failure signal in the last verify record, fix the cause or the check by hand, or change the prompt's approach, then run again"}
	case ReasonTimeCost:
		return []string{"raise budget.wall or budget.cost_usd if the loop was close", "or make each run cheaper: a smaller model for plan runs, lower agent.max_turns"}
	case ReasonBlocked:
		return []string{"fix what the message above names, then run again: the loop resumes where it stopped"}
	case ReasonInterrupted:
		return []string{"run again to resume where it stopped"}
	}
	return nil
}
