// Package record is the JSONL event schema of working-records/: one JSON
// object per line, written by one run invocation to its own file, read back
// by status, logs, watch and cost. docs/records.md documents every field.
package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Version of the record schema, in every line as "v".
const Version = 1

// Event names.
const (
	LoopStart     = "loop_start"
	LoopStop      = "loop_stop"
	Setup         = "setup"
	AgentStart    = "agent_start"
	AgentEnd      = "agent_end"
	AgentRetry    = "agent_retry"
	ToolCall      = "tool_call"
	Verify        = "verify"
	Baseline      = "baseline"
	PlanArchived  = "plan_archived"
	PlanInvalid   = "plan_invalid"
	TaskPassed    = "task_passed"
	Violation     = "violation"
	Gate          = "gate"
	SameFailure   = "same_failure"
	PostPhaseEnd  = "post_phase_end"
	SpecChanged   = "spec_changed"
	Warning       = "warning"
	Commit        = "commit"
	Notify        = "notify"
	BudgetWarning = "budget_warning"
	Paused        = "paused"
	Resumed       = "resumed"
	Review        = "review"
	Supervisor    = "supervisor"
	ScheduleFire  = "schedule_fire"
	// The operator channel: an agent's question, the operator's answer, a
	// question nobody answered in time, guidance delivered and acknowledged.
	Question        = "question"
	Answer          = "answer"
	QuestionTimeout = "question_timeout"
	Guidance        = "guidance"
	GuidanceAck     = "guidance_ack"
	// PlanApproval: the first plan waits for the operator's OK (kind
	// asked), got it (approved, By who), or none came in time (timeout).
	PlanApproval = "plan_approval"
	// Rollback: the engine moved the loop's branch back to a checkpoint
	// (kind task: a build run broke a check; kind stop: the best state at
	// a stop without DONE); what it undid is kept on Ref.
	Rollback = "rollback"
	// AgentFailover: the next agent run goes to another backend because
	// the current one reported a usage limit (From → To).
	AgentFailover = "agent_failover"
	// TaskConflict: a build run of a wave (parallel: N) changed a file a
	// run applied before it in the same wave also changed, and the two
	// changes could not be merged: the run was not applied and its task
	// runs again on the new tree.
	TaskConflict = "task_conflict"
	// Land: a loop's branch brought into its base branch (or a pull
	// request opened) after the gates passed on the merged tree.
	Land = "land"
	// Flaky: a check's result changed between two runs on the same tree
	// (Kind: clean_room, rerun); Flipped names the tests that flipped.
	Flaky = "flaky"
	// NetAllowed and NetRefused: one connection an agent made through the
	// loop's network proxy, allowed (BytesUp, BytesDown, DurationMS) or
	// refused (Reason); To is host:port, Kind the protocol (connect, http,
	// socks5).
	NetAllowed = "net_allowed"
	NetRefused = "net_refused"
	// VerifyStrength: the DONE gate's checks run on mutants of the lines
	// the loop changed (Strength).
	VerifyStrength = "verify_strength"
	// Escalated: the next agent run of a task goes to a stronger agent
	// (From → To) after repeated failures (Reason), or back (Kind: back).
	Escalated = "escalated"
	// AttemptJudged: one attempt of a best-of (several build runs of the
	// same task at once, each on a layer of its own) judged on its layer:
	// Task, Attempt (from 1), Backend and Model, Pass, Kind (kept: the
	// attempt applied; passed: passing, not kept; failed), BestOf (of how
	// many, its change's size), Ref (where its layer was committed),
	// Message (the line the report shows).
	AttemptJudged = "attempt_judged"
	// BestOfChosen: who chose a best-of's kept attempt: By rule (the
	// strength pass, then the smallest change) or review (a reviewer
	// agent, retry.choose: review), Task, Attempt (from 1), Reason, and
	// Message (the line the console and the report show).
	BestOfChosen = "best_of_chosen"
)

// BestOf is an attempt's place in its best-of and the size of its change.
type BestOf struct {
	Of    int `json:"of"`
	Lines int `json:"lines"`
	Files int `json:"files"`
}

// Strength is a verify_strength pass: the mutants of the changed lines,
// how many the checks caught, and the survivors.
type Strength struct {
	Mutants     int `json:"mutants"`
	Caught      int `json:"caught"`
	NotCompiled int `json:"not_compiled,omitempty"` // the mutant did not build: neither caught nor survived
	NotRun      int `json:"not_run,omitempty"`      // left when the budget ran out
	// Score is Caught over the mutants judged (caught and survived).
	Score     float64    `json:"score"`
	Min       float64    `json:"min,omitempty"`
	Pass      bool       `json:"pass"`
	Survivors []Survivor `json:"survivors,omitempty"`
	// Files and Lines are the changed files and lines mutated.
	Files      int    `json:"files,omitempty"`
	Lines      int    `json:"lines,omitempty"`
	Mode       string `json:"mode,omitempty"` // view | copy: how each mutant's tree was made
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"` // the pass could not be made
	// CPUMS is the CPU the pass's checks used (the control's run and every
	// mutant's), CPUFrom where it came from (as a Check's, the sources
	// joined by "+" when they differ).
	CPUMS   int64  `json:"cpu_ms,omitempty"`
	CPUFrom string `json:"cpu_from,omitempty"`
}

// Survivor is a mutant the checks did not catch.
type Survivor struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column,omitempty"`
	Op       string `json:"op"`
	Mutation string `json:"mutation"`
}

// Check is one verify command's result.
type Check struct {
	Command    string `json:"command"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	Pass       bool   `json:"pass"`
	Signal     string `json:"signal,omitempty"`   // failure signal of this check
	Output     string `json:"output,omitempty"`   // where the full output was saved
	Baseline   bool   `json:"baseline,omitempty"` // failed before the loop started too
	// Shared: the command is in both verify and objective_verify, and this
	// one run stands for both (at the baseline; at the objective gate, the
	// cycle gate's run on the same tree).
	Shared   bool `json:"shared,omitempty"`
	TimedOut bool `json:"timed_out,omitempty"`
	// Tests are the test results the output showed (a runner the engine
	// can read): the passing count may never drop below the baseline's.
	Tests *TestCounts `json:"tests,omitempty"`
	// CPUMS is the CPU (user and system) the check's processes used, every
	// one it started where it ran in a cgroup; CPUFrom says where the
	// figure came from: cgroup (its own), box (its gate box's, across the
	// check) or rusage (its process tree as the engine reaped it: no
	// cgroup here, a process that left the tree is missed).
	CPUMS   int64  `json:"cpu_ms,omitempty"`
	CPUFrom string `json:"cpu_from,omitempty"`
}

// CleanRoom is the clean room's verdict: the gate's checks run again on
// the final tree with the test files and runner configuration the agent
// added set aside, and the holdout checks beside them. Holdout checks are
// counted, never quoted: the records are readable by the agent.
type CleanRoom struct {
	Pass     bool     `json:"pass"`
	Mode     string   `json:"mode,omitempty"`      // view (a copy-on-write view at the folder's path) | copy
	SetAside []string `json:"set_aside,omitempty"` // files the agent added that a test runner loads
	// Pristine are paths under dependency folders and caches the agent
	// changed, seen in the clean room as at the loop's start (at most 100).
	Pristine       []string `json:"pristine,omitempty"`
	Checks         []Check  `json:"checks,omitempty"`
	HoldoutPassed  int      `json:"holdout_passed,omitempty"`
	HoldoutFailed  int      `json:"holdout_failed,omitempty"`
	HoldoutOfTests bool     `json:"holdout_of_tests,omitempty"` // the holdout figures count tests, not commands
	DurationMS     int64    `json:"duration_ms"`
	Error          string   `json:"error,omitempty"` // the clean room could not be made
}

// TestCounts are a check's test results.
type TestCounts struct {
	Runner  string `json:"runner"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
}

// Event is one line of a record file. Fields that do not apply are omitted.
type Event struct {
	V         int       `json:"v"`
	TS        time.Time `json:"ts"`
	Run       string    `json:"run"`
	Event     string    `json:"event"`
	Cycle     int       `json:"cycle,omitempty"`
	Iteration int       `json:"iteration,omitempty"`

	Loop     string `json:"loop,omitempty"`
	Shape    string `json:"shape,omitempty"`
	LoopFile string `json:"loop_file,omitempty"`
	Dir      string `json:"dir,omitempty"`
	PID      int    `json:"pid,omitempty"`
	Resumed  bool   `json:"resumed,omitempty"`

	Phase         string   `json:"phase,omitempty"`
	Task          string   `json:"task,omitempty"`
	Backend       string   `json:"backend,omitempty"`
	Model         string   `json:"model,omitempty"`
	Status        string   `json:"status,omitempty"`
	ExitCode      *int     `json:"exit_code,omitempty"`
	Turns         int      `json:"turns,omitempty"`
	InputTokens   int64    `json:"input_tokens,omitempty"`
	OutputTokens  int64    `json:"output_tokens,omitempty"`
	CachedTokens  int64    `json:"cached_tokens,omitempty"`
	CostUSD       float64  `json:"cost_usd,omitempty"`
	CostEstimated bool     `json:"cost_estimated,omitempty"`
	DurationMS    int64    `json:"duration_ms,omitempty"`
	Transcript    string   `json:"transcript,omitempty"`
	PromptFile    string   `json:"prompt_file,omitempty"`
	FilesChanged  []string `json:"files_changed,omitempty"`
	SessionID     string   `json:"session_id,omitempty"`
	Tools         []string `json:"tools,omitempty"`
	Tool          string   `json:"tool,omitempty"`
	Promise       string   `json:"promise,omitempty"`
	Blocked       string   `json:"blocked,omitempty"`
	Error         string   `json:"error,omitempty"`
	Attempt       int      `json:"attempt,omitempty"`
	WaitMS        int64    `json:"wait_ms,omitempty"`
	BytesUp       int64    `json:"bytes_up,omitempty"`
	BytesDown     int64    `json:"bytes_down,omitempty"`

	// Ended is when an agent run's process ended, on its agent_end (ts is
	// when the record was written: for a run of a wave, once the engine
	// got to it); Signal the signal that ended it ("SIGKILL"), instead of
	// an exit code (agent_end.go).
	Ended  time.Time `json:"ended,omitzero"`
	Signal string    `json:"signal,omitempty"`
	// AgentRun is the id of one agent run of a wave (parallel: N), on its
	// agent_start, agent_retry, tool_call and agent_end records; Slot its
	// slot (1 is the first). Runs one at a time carry neither.
	AgentRun string `json:"agent_run,omitempty"`
	Slot     int    `json:"slot,omitempty"`

	Gate          string   `json:"gate,omitempty"`
	Pass          *bool    `json:"pass,omitempty"`
	Checks        []Check  `json:"checks,omitempty"`
	Errors        []string `json:"errors,omitempty"`
	FailureSignal string   `json:"failure_signal,omitempty"`
	Signature     string   `json:"signature,omitempty"`
	Repeats       int      `json:"repeats,omitempty"`

	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	File string `json:"file,omitempty"`
	Kind string `json:"kind,omitempty"`
	ID   string `json:"id,omitempty"` // a question's or a guidance's id
	By   string `json:"by,omitempty"` // who answered or guided
	Ref  string `json:"ref,omitempty"`

	Reason      string   `json:"reason,omitempty"`
	Summary     string   `json:"summary,omitempty"`
	Message     string   `json:"message,omitempty"`
	NotVerified []string `json:"not_verified,omitempty"`
	Evidence    []string `json:"evidence,omitempty"`
	Changes     []string `json:"changes,omitempty"`
	// Flipped are the tests whose result changed between two runs of a
	// flaky check on the same tree.
	Flipped []string `json:"flipped,omitempty"`

	// CleanRoom is the verdict of the clean room beside a gate that
	// would end the loop DONE.
	CleanRoom *CleanRoom `json:"clean_room,omitempty"`
	// Strength is a verify_strength pass.
	Strength *Strength `json:"strength,omitempty"`
	// BestOf is an attempt_judged record's best-of.
	BestOf *BestOf `json:"best_of,omitempty"`

	// Data carries shape-specific payloads (review findings, supervisor diffs).
	Data json.RawMessage `json:"data,omitempty"`
}

// Int returns a pointer to n, for optional numeric fields.
func Int(n int) *int { return &n }

// Bool returns a pointer to b, for optional boolean fields.
func Bool(b bool) *bool { return &b }

// A Lister names the record files of a records folder, oldest first.
// package loopdir lists a loop's files from the engine's private index, so
// a file an agent drops into the folder is never taken for the loop's own.
type Lister func() ([]string, error)

// Glob lists every *.jsonl file of dir, oldest first.
func Glob(dir string) Lister {
	return func() ([]string, error) {
		matches, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			return nil, err
		}
		sort.Strings(matches)
		return matches, nil
	}
}

// Files lists every record file of a records folder, oldest first.
func Files(dir string) ([]string, error) { return Glob(dir)() }

// ReadDir reads every event of every record file in dir, oldest file first.
// Lines that do not parse (a torn last line after a crash) are skipped.
func ReadDir(dir string) ([]Event, error) { return ReadAll(Glob(dir)) }

// ReadAll reads every event of the files list names, oldest file first.
func ReadAll(list Lister) ([]Event, error) {
	files, err := list()
	if err != nil {
		return nil, err
	}
	var all []Event
	for _, f := range files {
		evs, err := ReadFile(f)
		if err != nil {
			return all, err
		}
		all = append(all, evs...)
	}
	return all, nil
}

// ReadFile reads the events of one record file, skipping torn lines.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var evs []Event
	err = Scan(countingReader{f}, func(e Event) { evs = append(evs, e) })
	return evs, err
}

// Scan calls fn for each well-formed event in r.
func Scan(r io.Reader, fn func(Event)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, _, err := readLine(br) // a line past MaxLine is skipped
		var e Event                  // a blank or torn line does not unmarshal
		if line != nil && json.Unmarshal(line, &e) == nil && e.Event != "" {
			fn(e)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Follower tails a records folder: new files and new complete lines.
type Follower struct {
	list    Lister
	offsets map[string]int64
}

// NewFollower starts following dir; fromStart replays what is already there.
func NewFollower(dir string, fromStart bool) *Follower { return Follow(Glob(dir), fromStart) }

// Follow starts following the files list names; fromStart replays what is
// already there.
func Follow(list Lister, fromStart bool) *Follower {
	fl := &Follower{list: list, offsets: map[string]int64{}}
	if !fromStart {
		files, _ := list()
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				fl.offsets[f] = st.Size()
			}
		}
	}
	return fl
}

// Poll returns the events completed since the last poll. A line still being
// written (no newline yet) is left for the next poll.
func (fl *Follower) Poll() []Event {
	files, _ := fl.list()
	var out []Event
	for _, path := range files {
		off := fl.offsets[path]
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			continue
		}
		br := bufio.NewReaderSize(countingReader{f}, 64<<10)
		for {
			line, k, err := readLine(br) // a line past MaxLine is skipped
			if err != nil {
				break // incomplete line: keep it for later
			}
			off += k
			var e Event
			if line != nil && json.Unmarshal(line, &e) == nil && e.Event != "" {
				out = append(out, e)
			}
		}
		f.Close()
		fl.offsets[path] = off
	}
	return out
}

// Summarize renders an event as one readable line.
func Summarize(e Event) string {
	var b strings.Builder
	b.WriteString(e.TS.Local().Format("15:04:05"))
	b.WriteString(" ")
	if e.Cycle > 0 {
		fmt.Fprintf(&b, "[c%d", e.Cycle)
		if e.Iteration > 0 {
			fmt.Fprintf(&b, " i%d", e.Iteration)
		}
		if e.Slot > 0 {
			// One of the runs of a wave: its slot.
			fmt.Fprintf(&b, " s%d", e.Slot)
		}
		b.WriteString("] ")
	}
	b.WriteString(Describe(e))
	return b.String()
}

// Describe says what an event means, without the timestamp.
func Describe(e Event) string {
	pass := func() string {
		if e.Pass != nil && *e.Pass {
			return "PASS"
		}
		return "FAIL"
	}
	switch e.Event {
	case LoopStart:
		s := fmt.Sprintf("loop %s started (%s shape, pid %d)", e.Loop, e.Shape, e.PID)
		if e.Resumed {
			s += ", resuming"
		}
		return s
	case LoopStop:
		return fmt.Sprintf("loop stopped: %s (exit %d) %s", strings.ToUpper(e.Reason), deref(e.ExitCode), e.Summary)
	case AgentStart:
		s := fmt.Sprintf("agent %s/%s started: %s", e.Backend, orDash(e.Model), e.Phase)
		if e.Task != "" {
			s += " " + e.Task
		}
		return s
	case AgentEnd:
		return agentEndLine(e)
	case AgentRetry:
		return fmt.Sprintf("agent %s: %s, retrying in %.0fs (attempt %d)", e.Phase, e.Status, float64(e.WaitMS)/1000, e.Attempt)
	case ToolCall:
		return fmt.Sprintf("  tool %s %s", e.Tool, e.Message)
	case Verify, Baseline:
		var parts []string
		for _, c := range e.Checks {
			mark := "ok"
			if !c.Pass {
				mark = fmt.Sprintf("exit %d", c.ExitCode)
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", c.Command, mark))
		}
		parts = append(parts, e.Errors...)
		if len(parts) == 0 && e.Message != "" {
			parts = append(parts, e.Message)
		}
		label := e.Gate + " gate"
		if e.Event == Baseline {
			label = "baseline"
		}
		if cr := e.CleanRoom; cr != nil {
			room := "clean room pass"
			if !cr.Pass {
				room = "clean room FAIL"
			}
			if len(cr.SetAside) > 0 {
				room += " (set aside: " + strings.Join(cr.SetAside, ", ") + ")"
			}
			if n := cr.HoldoutPassed + cr.HoldoutFailed; n > 0 {
				room += fmt.Sprintf(" holdout %d/%d", cr.HoldoutPassed, n)
			}
			parts = append(parts, room)
		}
		return fmt.Sprintf("%s %s: %s", label, pass(), strings.Join(parts, "; "))
	case PlanArchived:
		return fmt.Sprintf("plan archived to %s (%s)", e.To, e.Reason)
	case PlanInvalid:
		return fmt.Sprintf("plan invalid: %s", strings.Join(e.Errors, "; "))
	case TaskPassed:
		return fmt.Sprintf("task %s passed", e.Task)
	case Violation:
		return fmt.Sprintf("VIOLATION %s: %s", e.Kind, e.Message)
	case Flaky:
		return "FLAKY: " + e.Message
	case VerifyStrength:
		return StrengthLine(e.Strength)
	case Escalated:
		return "escalated: " + e.Message
	case AttemptJudged, BestOfChosen:
		return "best of: " + e.Message
	case NetAllowed:
		return fmt.Sprintf("  network %s allowed (%s, %d bytes up, %d down, %.1fs)", e.To, e.Kind, e.BytesUp, e.BytesDown, float64(e.DurationMS)/1000)
	case NetRefused:
		return fmt.Sprintf("network %s REFUSED (%s): %s", e.To, e.Kind, e.Reason)
	case Warning:
		if e.Kind == "sandbox" {
			return e.Message // information: which sandbox is in force
		}
		if e.Message == "" {
			return "warning"
		}
		return "warning: " + e.Message
	case SameFailure:
		return fmt.Sprintf("same failure %d times in a row (%s)", e.Repeats, e.Signature)
	case Setup:
		return fmt.Sprintf("setup %s", pass())
	case Gate:
		return fmt.Sprintf("%s gate %s %s", e.Gate, pass(), e.Message)
	case Question:
		return fmt.Sprintf("QUESTION %s from the %s run: %s", e.ID, e.Phase, e.Message)
	case Answer:
		return fmt.Sprintf("answer to %s (%s): %s", e.ID, orDash(e.By), e.Message)
	case QuestionTimeout:
		return fmt.Sprintf("question %s timed out (%s): %s", e.ID, e.Kind, e.Message)
	case Guidance:
		return fmt.Sprintf("guidance %s delivered (%s): %s", e.ID, orDash(e.By), e.Message)
	case GuidanceAck:
		return fmt.Sprintf("guidance %s acknowledged", e.ID)
	case PlanApproval:
		return fmt.Sprintf("plan approval %s: %s", e.Kind, e.Message)
	default:
		s := e.Event
		if e.Message != "" {
			s += ": " + e.Message
		}
		return s
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// StrengthLine says a verify_strength pass in one line: "verifier strength:
// the checks caught K of M mutants of the changed lines (S%)".
func StrengthLine(s *Strength) string {
	if s == nil {
		return "verifier strength: not measured"
	}
	if s.Error != "" {
		return "verifier strength: not measured: " + s.Error
	}
	line := fmt.Sprintf("verifier strength: the checks caught %d of %d mutants of the changed lines (%.0f%%)", s.Caught, s.Caught+len(s.Survivors), s.Score*100)
	var more []string
	if s.NotCompiled > 0 {
		more = append(more, fmt.Sprintf("%d did not compile", s.NotCompiled))
	}
	if s.NotRun > 0 {
		more = append(more, fmt.Sprintf("%d not run: budget spent", s.NotRun))
	}
	if len(more) > 0 {
		line += "; " + strings.Join(more, ", ")
	}
	if s.Min > 0 {
		if s.Pass {
			line += fmt.Sprintf("; at least the minimum %.0f%%", s.Min*100)
		} else {
			line += fmt.Sprintf("; BELOW the minimum %.0f%%", s.Min*100)
		}
	}
	return line
}

// String is "file:line:col: mutation".
func (s Survivor) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", s.File, s.Line, s.Column, s.Mutation)
}
