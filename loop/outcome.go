// How a loop ends: the reasons and their exit codes, the Outcome, and the
// error that carries a stop up to the loop.

package loop

import (
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/stopping"
)

// Outcome reasons, with their exit codes (docs/stopping.md): stopping's.
const (
	ReasonDone           = stopping.ReasonDone
	ReasonBudget         = stopping.ReasonBudget
	ReasonNoProgress     = stopping.ReasonNoProgress
	ReasonTimeCost       = stopping.ReasonTimeCost
	ReasonBlocked        = stopping.ReasonBlocked
	ReasonInterrupted    = stopping.ReasonInterrupted
	ReasonAlreadyPassing = stopping.ReasonAlreadyPassing
	ReasonNotVerified    = stopping.ReasonNotVerified
)

// ExitCodes maps each reason to the exit code of `run`; Title names a
// reason as the final report does.
var ExitCodes, Title = stopping.ExitCodes, stopping.Title

// nextSteps is the advice of a loop that stopped for reason.
func nextSteps(reason string, l *spec.Loop) []string { return stopping.NextSteps(reason, l.Path) }

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
