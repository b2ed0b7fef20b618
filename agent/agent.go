// Package agent runs one headless agent process per request and turns its
// output into a normalized Result.
//
// The runner (Run) owns everything process-related: its own process group,
// the prompt on stdin then EOF, streaming the output to the transcript file,
// timeouts that stop the whole group, and a bounded wait. An Adapter owns
// everything CLI-specific: the command line and the parsing of its stream.
// A Backend (registry.go), declared in the backend's own file with its
// adapter, holds the rest: install, login, model families, its folders.
package agent

import (
	"time"

	"github.com/looprinter/looprinter/redact"
)

// Status is the normalized outcome of one agent run.
type Status string

const (
	// StatusOK: the agent finished its turn normally.
	StatusOK Status = "ok"
	// StatusCapped: the run hit max_turns or max_budget_usd; verified as usual.
	StatusCapped Status = "capped"
	// StatusFailed: a non-zero exit or an error result that nothing explains.
	StatusFailed Status = "failed"
	// StatusTimeout: killed by the per-run timeout.
	StatusTimeout Status = "timeout"
	// StatusIdle: killed because it produced no output for idle_timeout.
	StatusIdle Status = "idle_timeout"
	// StatusRateLimited: the API said to slow down; wait and retry, not an attempt.
	StatusRateLimited Status = "rate_limited"
	// StatusAPIError: a transient API error (5xx, overloaded); retry with backoff.
	StatusAPIError Status = "api_error"
	// StatusBlocked: the agent cannot run at all (not installed, not logged in,
	// bad flags, unknown model) or asked for a human. Retrying will not help.
	StatusBlocked Status = "blocked"
	// StatusInterrupted: the engine was interrupted and stopped the agent.
	StatusInterrupted Status = "interrupted"
)

// Request is everything one agent run needs. It is plain data so a run can be
// described, recorded and replayed.
type Request struct {
	Phase     string `json:"phase"`
	Cycle     int    `json:"cycle"`
	Iteration int    `json:"iteration"`
	Task      string `json:"task,omitempty"`
	// Attempt is the attempt's number (from 1) when the run is one of a
	// task's attempts run at once (best of N); 0 otherwise.
	Attempt int `json:"attempt,omitempty"`

	Dir        string   `json:"dir"`               // the loop's directory; the agent's working directory
	Prompt     string   `json:"-"`                 // full prompt text
	PromptFile string   `json:"prompt_file"`       // where the prompt was written
	Transcript string   `json:"transcript"`        // raw standard output goes here
	Signals    []string `json:"signals,omitempty"` // promise signals the phase waits for (informational)

	Backend     string            `json:"backend"`
	Model       string            `json:"model,omitempty"`
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Permissions []string          `json:"permissions,omitempty"`

	Timeout      time.Duration `json:"timeout"`
	IdleTimeout  time.Duration `json:"idle_timeout"`
	Grace        time.Duration `json:"grace"`
	MaxTurns     int           `json:"max_turns,omitempty"`
	MaxBudgetUSD float64       `json:"max_budget_usd,omitempty"`

	// OnStart, if set, is called with the process group id as soon as the
	// agent has started, so the engine can record it before waiting.
	OnStart func(pgid int) `json:"-"`

	// Wrap, if set, returns the program, arguments and extra environment
	// that run the agent's command confined (the engine's sandbox).
	Wrap func(path string, args []string) (string, []string, []string, error) `json:"-"`

	// CgroupFD, if above 0, is an open cgroup directory the agent's first
	// process is born in (Linux), so everything the run starts can be
	// found and ended by the kernel's list.
	CgroupFD int `json:"-"`

	// Redact, if set, is applied to the transcript and its .stderr file as
	// they are written (a secret split across two reads is still caught).
	Redact *redact.Redactor `json:"-"`

	// Prices overrides the price table used to estimate cost where the CLI
	// reports none, keyed by model name.
	Prices map[string]Price `json:"prices,omitempty"`
}

// Price is USD per million tokens.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write" yaml:"cache_write"`
}

// Result is the normalized outcome of one run, whatever the CLI.
type Result struct {
	Status        Status        `json:"status"`
	ExitCode      int           `json:"exit_code"`
	FinalMessage  string        `json:"final_message,omitempty"`
	Turns         int           `json:"turns"`
	InputTokens   int64         `json:"input_tokens"`
	OutputTokens  int64         `json:"output_tokens"`
	CachedTokens  int64         `json:"cached_tokens"`
	CostUSD       float64       `json:"cost_usd"`
	CostEstimated bool          `json:"cost_estimated,omitempty"`
	SessionID     string        `json:"session_id,omitempty"`
	Tools         []string      `json:"tools,omitempty"`
	Promise       string        `json:"promise,omitempty"` // the <promise> signal, if any
	Blocked       string        `json:"blocked,omitempty"` // the <blocked> reason, if any
	Error         string        `json:"error,omitempty"`   // why it failed, for people
	Fix           string        `json:"fix,omitempty"`     // how to fix a blocked run, for people
	RetryAfter    time.Duration `json:"retry_after,omitempty"`
	Duration      time.Duration `json:"duration"`
	// Ended is when the run's process ended (the runner sets it): a run
	// of a wave is recorded later, once the engine gets to it.
	Ended time.Time `json:"ended,omitzero"`
	// Signal names the signal that ended the process ("SIGKILL"), when
	// one did; ExitCode is then -1.
	Signal      string `json:"signal,omitempty"`
	OutputBytes int64  `json:"output_bytes"`
	Transcript  string `json:"transcript"`
}

// ToolEvent is one tool call seen live in the stream, for the console.
type ToolEvent struct {
	Tool    string `json:"tool"`
	Summary string `json:"summary,omitempty"`
}

// Invocation is the process an adapter wants started.
type Invocation struct {
	Path  string
	Args  []string
	Env   []string // full environment of the child
	Stdin string   // written to standard input, then EOF
}

// Exit describes how the process ended, for the parser's final verdict.
type Exit struct {
	Code       int    // exit code; -1 when killed by a signal
	Killed     Status // StatusTimeout, StatusIdle, StatusInterrupted or StatusCapped (past its cost cap) when the runner killed it; "" otherwise
	StderrTail string // the last few KiB of standard error
	StartErr   error  // the process could not be started at all
}

// Parser reads one run's output stream.
type Parser interface {
	// Line is called with each line of standard output as it arrives, without
	// its newline. Very long lines are cut to MaxLine bytes. It returns the
	// tool calls the line shows, for the console.
	Line(line []byte) []ToolEvent
	// Finish is called once the process has ended and returns the result.
	// The runner fills Duration, OutputBytes and Transcript afterwards.
	Finish(exit Exit) Result
}

// Adapter knows one CLI: how to start it and how to read its output.
type Adapter interface {
	Name() string
	Invocation(req Request) (Invocation, error)
	NewParser(req Request) Parser
}
