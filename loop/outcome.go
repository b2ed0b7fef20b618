// How a loop ends: the reasons and their exit codes, the Outcome, and the
// error that carries a stop up to the loop.

package loop

import "strings"

// Outcome reasons, with their exit codes (docs/stopping.md).
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

// Outcome is how a run of the loop ended, with its evidence.
type Outcome struct {
	Reason      string   `json:"reason"`
	ExitCode    int      `json:"exit_code"`
	Summary     string   `json:"summary"`
	Evidence    []string `json:"evidence,omitempty"`
	NotVerified []string `json:"not_verified,omitempty"`
	RuledOut    []string `json:"ruled_out,omitempty"`
	Next        []string `json:"next,omitempty"`
	State       *State   `json:"state"`
	Records     string   `json:"records"`
	Plan        *Plan    `json:"plan,omitempty"`

	// Kept is the work the engine took off the branch (rollbacks, the
	// attempts after the best state), each on its ref.
	Kept []KeptRef `json:"kept,omitempty"`
}

// errStop carries an outcome out of a step.
type errStop struct{ o *Outcome }

func (e *errStop) Error() string { return e.o.Reason }
