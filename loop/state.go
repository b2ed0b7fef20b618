package loop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Phases of the state machine. The engine is a loop over step(state): each
// step reads plain state, does one thing (an agent run, a gate, an archive)
// and returns the next state, which is saved before the next step starts.
const (
	PhaseSetup     = "setup"
	PhaseBaseline  = "baseline"
	PhasePlan      = "plan"
	PhaseBuild     = "build"
	PhaseCycleGate = "cycle_gate"
	PhaseObjective = "objective_gate"
	PhasePost      = "post"
	PhaseRalph     = "ralph"
	PhaseReview    = "review"
	PhaseDone      = "done"
	PhaseStopped   = "stopped"
)

// StateVersion is the schema version of state.json.
const StateVersion = 1

// State is everything that must survive a restart. It is replaced atomically
// after every step.
type State struct {
	V     int    `json:"v"`
	Loop  string `json:"loop"`
	Shape string `json:"shape"`
	Phase string `json:"phase"`

	Cycle       int `json:"cycle"`        // current cycle, from 1
	Iterations  int `json:"iterations"`   // build runs (ralph: attempts), counted when started
	AgentRuns   int `json:"agent_runs"`   // every agent run, all phases
	PlanRuns    int `json:"plan_runs"`    // plan and re-plan runs
	TasksPassed int `json:"tasks_passed"` // tasks that passed, all cycles

	CostUSD float64 `json:"cost_usd"`
	WallMS  int64   `json:"wall_ms"`

	SetupDone    bool `json:"setup_done"`
	BaselineDone bool `json:"baseline_done"`
	// Baseline holds, per check command, the normalized failure lines seen
	// before the first agent run.
	Baseline map[string][]string `json:"baseline,omitempty"`

	// What the next plan/re-plan/build prompt must carry.
	PendingErrors []string `json:"pending_errors,omitempty"` // cycle gate errors
	PendingGap    string   `json:"pending_gap,omitempty"`    // objective gap
	LastFailure   string   `json:"last_failure,omitempty"`   // failure signal of the last failed attempt

	// No-progress detection.
	FailureSig string   `json:"failure_sig,omitempty"`
	SameCount  int      `json:"same_count,omitempty"`
	Tried      []string `json:"tried,omitempty"`     // what was tried against the current failure
	RuledOut   []string `json:"ruled_out,omitempty"` // every failed attempt, the last 20, for the final report
	GateSig    string   `json:"gate_sig,omitempty"`  // the cycle gate's, counted apart from build runs
	GateSame   int      `json:"gate_same,omitempty"`
	GateTried  []string `json:"gate_tried,omitempty"`
	GapSig     string   `json:"gap_sig,omitempty"`
	GapSame    int      `json:"gap_same,omitempty"`

	PendingArchive string `json:"pending_archive,omitempty"` // plan archive a crash interrupted
	PendingReason  string `json:"pending_reason,omitempty"`

	CurrentTask string `json:"current_task,omitempty"`
	PostIndex   int    `json:"post_index,omitempty"`
	PostSteps   int    `json:"post_steps,omitempty"`

	CycleGate     string   `json:"cycle_gate"`     // pending | pass | fail
	ObjectiveGate string   `json:"objective_gate"` // pending | pass | fail | not_verified
	Evidence      []string `json:"evidence,omitempty"`
	NotVerified   []string `json:"not_verified,omitempty"`
	Warned80      []string `json:"warned_80,omitempty"` // budgets already notified at 80%

	Review *ReviewState `json:"review,omitempty"` // the review shape's rounds and findings

	Outcome  string `json:"outcome,omitempty"` // set when the loop has stopped
	ExitCode int    `json:"exit_code"`
	Summary  string `json:"summary,omitempty"`

	AgentPGID int       `json:"agent_pgid,omitempty"` // the running agent's process group
	PID       int       `json:"pid"`
	Run       string    `json:"run"`
	Records   string    `json:"records,omitempty"` // current record file
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// StatePath is where a loop directory keeps its state.
func StatePath(dir string) string { return filepath.Join(dir, RecordsDir, "state.json") }

// RecordsDir and OutputDir are relative to the loop's directory.
const (
	RecordsDir = "working-records"
	OutputDir  = "output"
)

// LoadState reads state.json; a missing file is a fresh state.
func LoadState(dir string) (*State, error) {
	data, err := os.ReadFile(StatePath(dir))
	if os.IsNotExist(err) {
		return &State{V: StateVersion, Cycle: 1, CycleGate: "pending", ObjectiveGate: "pending"}, nil
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s is corrupt (%v): move it away to start the loop's counters again", StatePath(dir), err)
	}
	if st.Cycle == 0 {
		st.Cycle = 1
	}
	return &st, nil
}

// Save replaces state.json atomically: write a temporary file, then rename.
func (st *State) Save(dir string) error {
	st.V = StateVersion
	st.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(StatePath(dir), append(data, '\n'))
}

// WriteFileAtomic replaces a file so that readers see the old or the new
// contents, never a part: write a temporary file beside it, then rename.
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
