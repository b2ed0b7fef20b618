package loop

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/review"
	rollbacks "github.com/looprinter/looprinter/rollback"
	"github.com/looprinter/looprinter/statefile"
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
	// BaselineSignal is the failure signal of the checks that failed then,
	// as the prompts show it.
	BaselineSignal string `json:"baseline_signal,omitempty"`
	// BaselineChecks is each failing check's part of BaselineSignal, by
	// command: the prompts show the failures verify_baseline: new-only
	// excuses apart, labelled.
	BaselineChecks map[string]string `json:"baseline_checks,omitempty"`

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
	// BuildCostUSD and BuildRuns are what the loop's ended build runs cost,
	// and how many: a wave's cost reserve (wave.go).
	BuildCostUSD float64 `json:"build_cost_usd,omitempty"`
	BuildRuns    int     `json:"build_runs,omitempty"`
	// TaskRepeats is no-progress detection of a wave's runs, per task: the
	// same task failing the same way, in whatever slot it ran.
	TaskRepeats map[string]*Repeat `json:"task_repeats,omitempty"`
	GapSig      string             `json:"gap_sig,omitempty"`
	GapSame     int                `json:"gap_same,omitempty"`

	PendingArchive string `json:"pending_archive,omitempty"` // plan archive a crash interrupted
	PendingReason  string `json:"pending_reason,omitempty"`
	// PlanArchive is the file of working-records/ the plan went to last in
	// this run (a failed gate archives it for the next plan): the plan a
	// loop that stopped right after ended with (CurrentPlan).
	PlanArchive string `json:"plan_archive,omitempty"`

	CurrentTask string `json:"current_task,omitempty"`
	PostIndex   int    `json:"post_index,omitempty"`
	PostSteps   int    `json:"post_steps,omitempty"`

	// Whether each gate ever failed (at the baseline or later): a gate that
	// never failed has not shown it can tell the agent's work from none.
	CycleFailed     bool `json:"cycle_failed,omitempty"`
	ObjectiveFailed bool `json:"objective_failed,omitempty"`

	CycleGate     string   `json:"cycle_gate"`     // pending | pass | fail
	ObjectiveGate string   `json:"objective_gate"` // pending | pass | fail | not_verified
	Evidence      []string `json:"evidence,omitempty"`
	NotVerified   []string `json:"not_verified,omitempty"`
	Warned80      []string `json:"warned_80,omitempty"` // budgets already notified at 80%
	// NetRefused are the hosts (host:port) the loop's proxy refused an
	// agent, at most 20, for status and the report: what to add to
	// network.allow when the agent needs them.
	NetRefused []string `json:"net_refused,omitempty"`
	// StrengthBase is the loop folder's git tree before the first agent
	// run (verify_strength on); Strength the last verify_strength pass.
	// Escalation: the tasks whose runs went to a stronger agent
	// (failover/escalate.go).
	Escalation   *EscalationState `json:"escalation,omitempty"`
	StrengthBase string           `json:"strength_base,omitempty"`
	Strength     *record.Strength `json:"strength,omitempty"`

	Review *review.State `json:"review,omitempty"` // the review shape's rounds and findings

	Failover *FailoverState `json:"failover,omitempty"` // usage limits and the agent each phase is on

	// Landing says how the last landing of a finished loop went ("landed
	// on main …", "not landed on main: …"): beside the outcome, never
	// instead of it.
	Landing string `json:"landing,omitempty"`

	Outcome  string `json:"outcome,omitempty"` // set when the loop has stopped
	ExitCode int    `json:"exit_code"`
	Summary  string `json:"summary,omitempty"`

	// The plan as the engine judged it: task ids and targets fixed when the
	// plan was accepted, passes set only by the engine's own judgement.
	Judged *Plan `json:"judged_plan,omitempty"`
	// TaskBase is each task's target content (sha256) before its first
	// attempt: a task passes when its target differs from it, so work a
	// killed run did is still creditable on the next, live, run.
	TaskBase map[string]string `json:"task_base,omitempty"`
	// TaskFails counts each task's failed tries per cycle (c<cycle>/<task>):
	// a build run, or a best-of's attempts together, that did not pass.
	// retry.best_of reads it (attemptsFor).
	TaskFails map[string]int `json:"task_fails,omitempty"`
	// Uncommitted, Outside and SnapshotErr: what rollback keeps between
	// runs (rollback.Marks).
	rollbacks.Marks
	// Touched are the files the agent runs changed over the loop (sorted,
	// at most maxTouched), for the audit.
	Touched []string `json:"touched,omitempty"`
	// TouchedLeftOut counts the changed file names Touched left out when
	// it was full (judge.KeepTouched keeps code, tests and configuration
	// first), for the audit to say so.
	TouchedLeftOut int `json:"touched_left_out,omitempty"`
	// Tells are the changes the judge refused for their tells (file: what),
	// the last 50, for the audit.
	Tells []string `json:"tells,omitempty"`
	// Flaky are the checks seen flaky (their result changed between two
	// runs on the same tree): the tests that flipped, by command. Status
	// and the report show them; flaky: quarantine leaves those tests out.
	Flaky map[string][]string `json:"flaky,omitempty"`
	// AuditRuns counts the audits; AuditWarned is set once the auditor
	// was found to be the builder's model.
	AuditRuns   int  `json:"audit_runs,omitempty"`
	AuditWarned bool `json:"audit_warned,omitempty"`
	// InFlight is the agent run under way, saved before it starts: a restart
	// that finds it judges whatever that run did before going on.
	InFlight *InFlight `json:"in_flight,omitempty"`
	// InFlightMore are the other build runs of a wave under way (parallel:
	// N; slot 0's is InFlight), each with its own process group and
	// cgroup: a restart ends and judges every one.
	InFlightMore []*InFlight `json:"in_flight_more,omitempty"`
	// AgentMS is the sum of the loop's agent run times, against its wall
	// time for what running builds at once saved (ParallelSaving).
	AgentMS int64 `json:"agent_ms,omitempty"`

	// The operator channel (operator/channel.go): the question the loop waits on,
	// the answer the next agent run's prompt carries, guidance shown to runs
	// that did not acknowledge it, and questions in a row nobody answered.
	Question     *Question      `json:"question,omitempty"`
	Answered     *Answered      `json:"answered,omitempty"`
	GuidanceTold map[string]int `json:"guidance_told,omitempty"`
	Unanswered   int            `json:"unanswered,omitempty"`
	// PlanWait is the first plan's wait for the operator's OK
	// (plan.approve; operator/plan_wait.go); PlanApproved once it came (or the
	// timeout let the plan run).
	PlanWait     *PlanWait `json:"plan_wait,omitempty"`
	PlanApproved bool      `json:"plan_approved,omitempty"`

	AgentPGID   int       `json:"agent_pgid,omitempty"`   // the running agent's process group
	AgentCgroup string    `json:"agent_cgroup,omitempty"` // the running agent's cgroup, where the machine gives one
	PID         int       `json:"pid"`
	Run         string    `json:"run"`
	Records     string    `json:"records,omitempty"` // current record file
	StartedAt   time.Time `json:"started_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// InFlight describes an agent run that has started and not yet been judged.
type InFlight struct {
	Phase string `json:"phase"`
	Task  string `json:"task,omitempty"`
	Seq   int    `json:"seq"` // agent run number
	Post  bool   `json:"post,omitempty"`

	Transcript string `json:"transcript"`
	PromptFile string `json:"prompt_file"`

	// A run of a wave (parallel: N): its id (the records' agent_run), its
	// slot (0-based; its layer is slotLayer's), its backend, when it
	// started, and its own process group and cgroup.
	Run     string    `json:"run,omitempty"`
	Slot    int       `json:"slot,omitempty"`
	Backend string    `json:"backend,omitempty"`
	Started time.Time `json:"started,omitempty"`
	PGID    int       `json:"pgid,omitempty"`
	Cgroup  string    `json:"cgroup,omitempty"`
	// Attempt is its number (from 1) when it is one of a task's attempts
	// run at once (best of N).
	Attempt int `json:"attempt,omitempty"`
	// Ended is when its process ended, once it did (the engine had not
	// judged it yet): a restart records that end, not its own time.
	Ended time.Time `json:"ended,omitzero"`
}

func freshState() *State {
	return &State{V: StateVersion, Cycle: 1, CycleGate: "pending", ObjectiveGate: "pending"}
}

// stateCodec is what statefile/, which keeps the state on disk, needs of
// its meaning.
var stateCodec = statefile.Codec[*State]{Decode: decodeState, Problems: (*State).problems, Fresh: freshState, Rebuild: rebuildState}

// LoadState reads a loop's state for display: the engine's own copy when
// there is one (its journal, else its state.json), else state.json; a loop
// that never ran has a fresh state.
func LoadState(dir string) (*State, error) { return statefile.Load(dir, stateCodec) }

// ReadState reads the engine's own copy of a loop's state: the newest save
// in its journal (which a run in flight is saved to before its agent
// starts), else the private state.json; an error satisfying os.IsNotExist
// when the engine has none.
func ReadState(dir string) (*State, error) { return statefile.Read(dir, stateCodec) }

func decodeState(data []byte) (*State, error) {
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	if st.Cycle == 0 {
		st.Cycle = 1
	}
	return &st, nil
}

// problems lists what makes a state impossible: negative counters, a
// cycle past no budget can explain.
func (st *State) problems() []string {
	var out []string
	for name, v := range map[string]int64{"cycle": int64(st.Cycle), "iterations": int64(st.Iterations), "agent_runs": int64(st.AgentRuns),
		"plan_runs": int64(st.PlanRuns), "tasks_passed": int64(st.TasksPassed), "wall_ms": st.WallMS, "same_count": int64(st.SameCount),
		"gate_same": int64(st.GateSame), "gap_same": int64(st.GapSame), "post_index": int64(st.PostIndex), "post_steps": int64(st.PostSteps)} {
		if v < 0 {
			out = append(out, fmt.Sprintf("%s is negative (%d)", name, v))
		}
	}
	if st.CostUSD < 0 || math.IsNaN(st.CostUSD) || math.IsInf(st.CostUSD, 0) {
		out = append(out, fmt.Sprintf("cost_usd is %v", st.CostUSD))
	}
	sort.Strings(out)
	return out
}

// loadTrusted is the engine's start: the state comes from the engine's own
// copy, never from the public file an agent could have written
// (statefile.LoadTrusted); what did not check out is rebuilt from the
// records.
func loadTrusted(dir string) (*State, []string, error) { return statefile.LoadTrusted(dir, stateCodec) }

// rebuildState is the state of a loop whose state cannot be trusted: the
// budgets' counters as the records show them (or as the untrusted state
// claims, whichever is higher: a forgery can only tighten them), and every
// judgement to be made again: setup, baseline, plan and gates.
func rebuildState(dir string, claimed *State) *State {
	st := freshState()
	evs, _ := loopdir.Dir(dir).ReadRecords()
	for _, ev := range evs {
		switch ev.Event {
		case record.AgentStart:
			st.AgentRuns++
			switch ev.Phase {
			case "build", "ralph":
				st.Iterations++
			case "plan", "replan":
				st.PlanRuns++
			}
		case record.AgentEnd, record.AgentRetry:
			if ev.CostUSD > 0 && !math.IsInf(ev.CostUSD, 0) {
				st.CostUSD += ev.CostUSD
			}
		case record.LoopStop:
			st.WallMS = max(st.WallMS, ev.DurationMS)
		}
		st.Cycle = max(st.Cycle, ev.Cycle)
		if st.StartedAt.IsZero() && !ev.TS.IsZero() {
			st.StartedAt = ev.TS
		}
	}
	if c := claimed; c != nil && len(c.problems()) == 0 {
		st.Iterations, st.AgentRuns, st.PlanRuns = max(st.Iterations, c.Iterations), max(st.AgentRuns, c.AgentRuns), max(st.PlanRuns, c.PlanRuns)
		st.Cycle, st.WallMS, st.CostUSD = max(st.Cycle, c.Cycle), max(st.WallMS, c.WallMS), max(st.CostUSD, c.CostUSD)
		st.Warned80 = c.Warned80
	}
	if _, err := os.Stat(loopdir.Dir(dir).Plan()); err == nil {
		st.PendingArchive, st.PendingReason = fmt.Sprintf("plan_untrusted_cycle_%d.json", st.Cycle), "the state could not be verified: the plan is made again"
	}
	return st
}

// Save writes the state when no engine runs (a fleet worker putting a step's
// state in place, tests): the engine's journal, synced, then the copies.
func (st *State) Save(dir string) error {
	data, err := st.encode()
	if err != nil {
		return err
	}
	return statefile.SaveAlone(dir, data)
}

// save writes the state to the journal j (durable: synced before save
// returns) and, withCopy, the public state.json, whose contents it
// returns: the state redacted by red, its members encoded again only where
// they changed since enc's last save.
func (st *State) save(dir string, j *statefile.Journal, enc *stateEncoder, red *redact.Redactor, durable, withCopy bool) ([]byte, error) {
	st.V, st.UpdatedAt = StateVersion, time.Now().UTC()
	if !stateFieldsOK {
		data, err := json.Marshal(redact.Value(red, st))
		if err != nil {
			return nil, err
		}
		return statefile.Save(dir, j, data, durable, withCopy)
	}
	fields, err := enc.encode(st, red)
	if err != nil {
		return nil, err
	}
	return statefile.SaveFields(dir, j, fields, durable, withCopy)
}

// encode is the state as saved, stamped with its version and time.
func (st *State) encode() ([]byte, error) {
	st.V = StateVersion
	st.UpdatedAt = time.Now().UTC()
	return json.Marshal(st)
}

// WriteFileAtomic replaces a file so that readers see the old or the new
// contents, never a part (guard.WriteFileAtomic).
func WriteFileAtomic(path string, data []byte) error {
	return guard.WriteFileAtomic(path, data)
}

// writeFile replaces path atomically with data and mode (guard.WriteFile).
func writeFile(path string, data []byte, mode os.FileMode, durable bool) error {
	return guard.WriteFile(path, data, mode, durable)
}

func (st *State) addNotVerified(s string) {
	for _, x := range st.NotVerified {
		if x == s {
			return
		}
	}
	st.NotVerified = append(st.NotVerified, s)
}

func (st *State) dropNotVerified(s string) {
	for i, x := range st.NotVerified {
		if x == s {
			st.NotVerified = append(st.NotVerified[:i:i], st.NotVerified[i+1:]...)
			return
		}
	}
}

// gateKey names the tree the gates judge: it changes with every agent run
// (and cycle), so the objective gate takes the cycle gate's results of a
// shared check only when no agent ran between them.
func (st *State) gateKey() string {
	return fmt.Sprintf("c%d-a%d-i%d", st.Cycle, st.AgentRuns, st.Iterations)
}

// touched adds what a run changed to the loop's list, for the audit: when
// the list is full, code, tests and configuration stay before data files,
// and what is left out is counted.
func (st *State) touched(changed []string) {
	var add []string
	for _, f := range changed {
		if first, _, _ := strings.Cut(f, "/"); first != loopdir.OutputDir && first != loopdir.RecordsDir {
			add = append(add, f)
		}
	}
	if len(add) == 0 {
		return
	}
	var dropped int
	st.Touched, dropped = judge.KeepTouched(st.Touched, add, maxTouched)
	st.TouchedLeftOut += dropped
}

// maxTouched bounds the files the audit is shown.
const maxTouched = judge.MaxAuditFiles
