// Package fleet runs loops on a Temporal cluster: one workflow per loop, one
// activity per engine step (loop.RunStep), on workers on any number of
// machines. The workflow carries the engine's private files (the trusted
// state among them) and the commit the loop is at; the work tree travels
// through a git remote and branch: a worker fetches the branch, runs the
// step, commits and pushes before the step is complete. docs/fleet.md
// describes the design and its failure handling.
package fleet

import (
	"time"

	"github.com/looprinter/looprinter/loop"
)

// Names on the Temporal side. Changing one breaks running workflows.
const (
	WorkflowName = "looprinter.Loop"
	StepName     = "looprinter.Step"

	QueryStatus  = "status"
	SignalPause  = "pause"
	SignalResume = "resume"
	SignalStop   = "stop"

	// Error types of a step that failed (temporal.ApplicationError.Type).
	ErrPushRefused = "PushRefused" // the branch moved: the step runs again on the new head
	ErrInterrupted = "Interrupted" // the worker stopped during the step
	ErrBlocked     = "Blocked"     // the loop cannot go on (history rewritten, loop file invalid)

	// ReasonStopped is the outcome of a loop stopped through the fleet
	// (looprinter fleet stop); its exit code is that of an interrupted run.
	ReasonStopped = loop.ReasonInterrupted
)

// Defaults of LoopInput's tuning fields.
const (
	DefaultHeartbeatTimeout = 30 * time.Second
	DefaultStepTimeout      = 24 * time.Hour
	DefaultMaxFailures      = 10
	DefaultStepsPerRun      = 100
	// StickyWait is how long a step waits for the worker that ran the
	// previous step (its checkout is warm) before any worker may take it.
	StickyWait = 5 * time.Second
)

// LoopInput is the input of the loop workflow.
type LoopInput struct {
	Name     string `json:"name"`
	LoopFile string `json:"loop_file"` // the loop file's path in the repository, with /
	Spec     []byte `json:"spec"`      // the loop file's contents: it wins over the branch's copy
	Remote   string `json:"remote"`    // the git remote every worker fetches and pushes
	Branch   string `json:"branch"`

	TaskQueue        string        `json:"task_queue,omitempty"` // the steps' queue; default: the workflow's own
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	StepTimeout      time.Duration `json:"step_timeout,omitempty"`
	MaxFailures      int           `json:"max_failures,omitempty"`  // failed attempts of one step before BLOCKED
	StepsPerRun      int           `json:"steps_per_run,omitempty"` // steps before continue-as-new
	// SearchAttributes: the namespace has the custom search attributes
	// (fleet/search.go), so the workflow keeps them up to date.
	SearchAttributes bool `json:"search_attributes,omitempty"`

	Carry *Carry `json:"carry,omitempty"` // what a continued workflow takes over
}

// Carry is the workflow's state between steps, handed over on
// continue-as-new.
type Carry struct {
	Private  map[string][]byte `json:"private,omitempty"` // the engine's private files, state.json among them
	Commit   string            `json:"commit,omitempty"`  // the branch head the last step pushed
	Steps    int               `json:"steps"`
	Failures int               `json:"failures,omitempty"` // failed attempts of the current step
	Spent    *Spent            `json:"spent,omitempty"`    // what failed attempts of the current step spent
	Notes    []string          `json:"notes,omitempty"`    // recorded as warnings by the next step
	Paused   bool              `json:"paused,omitempty"`
	Sticky   string            `json:"sticky,omitempty"` // the task queue of the worker that ran the last step
	Status   Status            `json:"status"`
}

// StepInput is the input of one step activity.
type StepInput struct {
	WorkflowID string            `json:"workflow_id"`
	Seq        int               `json:"seq"` // the step's number, from 1
	Name       string            `json:"name"`
	LoopFile   string            `json:"loop_file"`
	Spec       []byte            `json:"spec"`
	Remote     string            `json:"remote"`
	Branch     string            `json:"branch"`
	Commit     string            `json:"commit,omitempty"` // the head the previous step pushed
	Private    map[string][]byte `json:"private,omitempty"`
	Spent      *Spent            `json:"spent,omitempty"`
	Notes      []string          `json:"notes,omitempty"`
}

// StepOutput is what one step did.
type StepOutput struct {
	Commit  string            `json:"commit"`
	Private map[string][]byte `json:"private"`
	Status  Status            `json:"status"`
	Outcome *Outcome          `json:"outcome,omitempty"`
	Worker  string            `json:"worker"`
	Queue   string            `json:"queue,omitempty"` // the worker's own task queue
}

// Spent is what an attempt of a step spent that did not finish (its worker
// died, its push was refused): it counts against the budgets, and nothing
// it did is credited. Workers send it with every heartbeat.
type Spent struct {
	Iterations int            `json:"iterations"`
	AgentRuns  int            `json:"agent_runs"`
	PlanRuns   int            `json:"plan_runs"`
	CostUSD    float64        `json:"cost_usd"`
	WallMS     int64          `json:"wall_ms"`
	InFlight   *loop.InFlight `json:"in_flight,omitempty"`
	Worker     string         `json:"worker,omitempty"`
}

// merge keeps the higher of each counter: attempts of one step start from
// the same state, so each one's counters include the ones before it.
func (s *Spent) merge(o *Spent) *Spent {
	if s == nil {
		return o
	}
	if o == nil {
		return s
	}
	m := *s
	m.Iterations, m.AgentRuns, m.PlanRuns = max(s.Iterations, o.Iterations), max(s.AgentRuns, o.AgentRuns), max(s.PlanRuns, o.PlanRuns)
	m.CostUSD, m.WallMS = max(s.CostUSD, o.CostUSD), max(s.WallMS, o.WallMS)
	if o.InFlight != nil {
		m.InFlight = o.InFlight
	}
	if o.Worker != "" {
		m.Worker = o.Worker
	}
	return &m
}

// Status is a fleet loop as `looprinter fleet status` shows it.
type Status struct {
	Loop          string  `json:"loop"`
	Shape         string  `json:"shape,omitempty"`
	Phase         string  `json:"phase,omitempty"`
	Cycle         int     `json:"cycle"`
	Iterations    int     `json:"iterations"`
	AgentRuns     int     `json:"agent_runs"`
	TasksPassed   int     `json:"tasks_passed"`
	CostUSD       float64 `json:"cost_usd"`
	WallMS        int64   `json:"wall_ms"`
	CycleGate     string  `json:"cycle_gate,omitempty"`
	ObjectiveGate string  `json:"objective_gate,omitempty"`

	Steps    int      `json:"steps"`
	Failures int      `json:"failures,omitempty"`
	Paused   bool     `json:"paused,omitempty"`
	Stopping bool     `json:"stopping,omitempty"`
	Worker   string   `json:"worker,omitempty"` // the worker of the last step
	Commit   string   `json:"commit,omitempty"`
	Outcome  string   `json:"outcome,omitempty"`
	ExitCode int      `json:"exit_code"`
	Summary  string   `json:"summary,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// statusOf is a state's counters as a Status.
func statusOf(st *loop.State) Status {
	return Status{Loop: st.Loop, Shape: st.Shape, Phase: st.Phase, Cycle: st.Cycle, Iterations: st.Iterations, AgentRuns: st.AgentRuns,
		TasksPassed: st.TasksPassed, CostUSD: st.CostUSD, WallMS: st.WallMS, CycleGate: st.CycleGate, ObjectiveGate: st.ObjectiveGate}
}

// Outcome is how a fleet loop ended: the engine's outcome without its state.
type Outcome struct {
	Reason      string   `json:"reason"`
	ExitCode    int      `json:"exit_code"`
	Summary     string   `json:"summary"`
	Evidence    []string `json:"evidence,omitempty"`
	NotVerified []string `json:"not_verified,omitempty"`
	RuledOut    []string `json:"ruled_out,omitempty"`
	Next        []string `json:"next,omitempty"`
}

func outcomeOf(o *loop.Outcome) *Outcome {
	return &Outcome{Reason: o.Reason, ExitCode: o.ExitCode, Summary: o.Summary, Evidence: o.Evidence, NotVerified: o.NotVerified, RuledOut: o.RuledOut, Next: o.Next}
}

// Result is the loop workflow's result.
type Result struct {
	Outcome Outcome `json:"outcome"`
	Status  Status  `json:"status"`
	Commit  string  `json:"commit"`
	Branch  string  `json:"branch"`
}
