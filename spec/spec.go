// Package spec loads and validates loop.yaml, the one file that describes a
// loop. Every problem is reported with its line and column; unknown fields
// are errors, so a typo is never silently ignored.
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/looprinter/looprinter/testcount"
)

// Values of on_timeout.
const (
	OnTimeoutBlocked  = "blocked"
	OnTimeoutContinue = "continue"
)

// Shapes of loop.
const (
	ShapeCycle  = "cycle"
	ShapeRalph  = "ralph"
	ShapeReview = "review"
)

// Loop is the parsed loop file with defaults applied.
type Loop struct {
	Version         int              `yaml:"version"`
	Name            string           `yaml:"name"`
	Shape           string           `yaml:"shape"`
	Objective       string           `yaml:"objective"`
	Agent           Agent            `yaml:"agent"`
	Agents          map[string]Agent `yaml:"agents"` // per-phase overrides: plan, replan, build, post, <post phase name>, reviewer, writer, fixer
	Budget          Budget           `yaml:"budget"`
	Setup           []string         `yaml:"setup"`
	Verify          []string         `yaml:"verify"`
	ObjectiveVerify []string         `yaml:"objective_verify"`
	VerifyBaseline  string           `yaml:"verify_baseline"` // all | new-only
	// Flaky is what a check whose result changes between two runs on the
	// same tree counts as: fail (default: as failing), "rerun N" (a gate's
	// check passes only if all N runs pass), quarantine (the tests that
	// flipped are left out, and DONE is NOT VERIFIED for them).
	Flaky           string   `yaml:"flaky"`
	CheckTimeout    Duration `yaml:"check_timeout"`
	Protect         []string `yaml:"protect"`
	ProtectDefaults *bool    `yaml:"protect_defaults"`
	// ProtectExcept are globs the user allows the agent to edit although a
	// default rule protects them (a test file that is the deliverable).
	ProtectExcept []string `yaml:"protect_except"`
	// Sandbox confines every agent run: auto (default), bwrap, landlock
	// (Linux), seatbelt (macOS), off; the mode of `sandbox:`, whose
	// mapping form (SandboxOpts) also names paths to mask or let through.
	Sandbox     string      `yaml:"-"`
	SandboxOpts SandboxOpts `yaml:"sandbox"`
	// Network is what agents may reach (see Network).
	Network Network `yaml:"network"`
	// PrivateBudget is the size above which the agents' HOME and cache
	// layers in the engine's private folder are named by a warning in
	// `status` and the report: a size such as 1GiB (the default), 500MB,
	// 2G, or a number of bytes.
	PrivateBudget string `yaml:"private_budget"`
	// AllowPassing lets a loop start although every check already passes
	// (the "keep it green" use); otherwise that stops the loop at once.
	AllowPassing bool `yaml:"allow_passing"`
	// Parallel is how many build runs of the cycle shape may run at once,
	// over tasks whose depends_on have passed (parallel.go): 1 (the
	// default) runs one at a time.
	Parallel int `yaml:"parallel"`
	// Holdout are globs of test files the agent never sees (hidden in its
	// sandbox, never in a prompt); HoldoutVerify the commands that run
	// them, only in the clean room that decides DONE. HoldoutFeedback
	// says what a failing holdout check tells the next prompt: count
	// (default: how many fail), names (which commands) or full (their
	// failure lines).
	Holdout         []string `yaml:"holdout"`
	HoldoutVerify   []string `yaml:"holdout_verify"`
	HoldoutFeedback string   `yaml:"holdout_feedback"`
	// Audit, when on, runs a fresh reviewer (agents.auditor, by default
	// another model than the builder's) over the loop's changes once the
	// clean room passes, looking for test gaming: a finding at or above
	// its bar keeps the loop from DONE.
	Audit Audit `yaml:"audit"`
	// VerifyStrength, when on, mutates the lines the loop changed once the
	// clean room passes and runs the DONE gate's checks on each mutant
	// (strength.go).
	VerifyStrength VerifyStrength `yaml:"verify_strength"`
	// Retry runs a task that failed as several attempts at once, the best
	// passing one kept (retry.go).
	Retry Retry `yaml:"retry"`
	// Checks says how the judge's sandbox runs every check (verify,
	// objective_verify, holdout_verify, setup, the clean room).
	Checks Checks `yaml:"checks"`
	// TestSummaries teach the passing-count rule another runner's summary
	// line (the built-in runners need none).
	TestSummaries []testcount.Pattern `yaml:"test_summaries"`
	Prompts       Prompts             `yaml:"prompts"`
	PostPhases    []PostPhase         `yaml:"post_phases"`
	Prices        map[string]Price    `yaml:"prices"`
	Review        Review              `yaml:"review"`
	Git           Git                 `yaml:"git"`
	Notify        Notify              `yaml:"notify"`
	Schedule      Schedule            `yaml:"schedule"`
	Redact        Redact              `yaml:"redact"`
	// Forge is the code host where the loop's work lives (forge.go).
	Forge Forge `yaml:"forge"`
	// Source is where a plain `run` takes its work from (source.go).
	Source Source            `yaml:"source"`
	Vars   map[string]string `yaml:"vars"` // extra fields for prompt templates
	// AskTimeout is how long the loop waits for the operator's answer to an
	// agent's <ask>; OnTimeout says what happens then: blocked (stop
	// BLOCKED) or continue (the next run is told no answer came).
	AskTimeout Duration `yaml:"ask_timeout"`
	OnTimeout  string   `yaml:"on_timeout"`
	// Limits says what a usage limit does (stopping/limits.go): wait, stop, or wait
	// only when it resets within a window of hours.
	Limits Limits `yaml:"limits"`
	// Plan holds plan.approve: the first plan waits for the operator's OK
	// (operator/plan_wait.go).
	Plan PlanOpts `yaml:"plan"`

	// Path is the absolute path of the loop file; Dir its directory, where
	// the loop runs.
	Path string `yaml:"-"`
	Dir  string `yaml:"-"`
}

// Agent says which agent runs a phase and how.
type Agent struct {
	Backend      string            `yaml:"backend"`
	Model        string            `yaml:"model"`
	Command      string            `yaml:"command"`
	Args         []string          `yaml:"args"`
	Timeout      Duration          `yaml:"timeout"`
	IdleTimeout  Duration          `yaml:"idle_timeout"`
	Grace        Duration          `yaml:"grace"`
	MaxTurns     int               `yaml:"max_turns"`
	MaxBudgetUSD float64           `yaml:"max_budget_usd"`
	Env          map[string]string `yaml:"env"`
	Permissions  StringList        `yaml:"permissions"`
	// Fallback are the agents that take over, in order, while this one
	// reports a usage limit that resets later than FallbackAfter.
	Fallback      []Fallback `yaml:"fallback"`
	FallbackAfter Duration   `yaml:"fallback_after"`
	// Escalate are stronger agents a task's next run goes to after it
	// failed After times (or the same failure came back After times), in
	// order; the task's runs go back to this agent once it passes.
	Escalate []Escalation `yaml:"escalate"`
}

// Escalation is a stronger agent for a task that keeps failing: After
// failed tries of the task (or the same failure After times in a row), the
// next run uses Model (on Backend, when given; else the agent's backend).
type Escalation struct {
	After   int    `yaml:"after"`
	Backend string `yaml:"backend"`
	Model   string `yaml:"model"`
	Command string `yaml:"command"`
}

// Fallback is an agent that takes over when the one before it is limited.
type Fallback struct {
	Backend string `yaml:"backend"`
	Model   string `yaml:"model"`
	Command string `yaml:"command"`
}

// Budget holds the loop-wide stop conditions. All of them survive restarts.
type Budget struct {
	Iterations  int      `yaml:"iterations"`
	Cycles      int      `yaml:"cycles"`
	CostUSD     float64  `yaml:"cost_usd"`
	Wall        Duration `yaml:"wall"`
	SameFailure int      `yaml:"same_failure"`
	GapStall    int      `yaml:"gap_stall"` // objective gap unchanged this many cycles: stop
	APIRetries  int      `yaml:"api_retries"`
}

// Prompts are Go text/template sources; empty means the built-in prompt.
type Prompts struct {
	Plan   string `yaml:"plan"`
	Build  string `yaml:"build"`
	Replan string `yaml:"replan"`
	Ralph  string `yaml:"ralph"`
}

// PostPhase runs after both gates pass, until its done signal or max_steps.
type PostPhase struct {
	Name     string `yaml:"name"`
	Prompt   string `yaml:"prompt"`
	Done     string `yaml:"done"`
	MaxSteps int    `yaml:"max_steps"`
}

// Price is USD per million tokens.
type Price struct {
	Input      float64 `yaml:"input"`
	Output     float64 `yaml:"output"`
	CacheRead  float64 `yaml:"cache_read"`
	CacheWrite float64 `yaml:"cache_write"`
}

// Review configures the review shape.
type Review struct {
	Base         string   `yaml:"base"`
	Bar          string   `yaml:"bar"`
	MaxRounds    int      `yaml:"max_rounds"`
	Requirements []string `yaml:"requirements"`
	Architecture []string `yaml:"architecture"`
	Rules        string   `yaml:"rules"`
	Writer       string   `yaml:"writer"` // prompt of the optional draft step
}

// Values of checks.network.
const (
	ChecksNetworkNone  = "none"
	ChecksNetworkHost  = "host"
	ChecksNetworkAllow = "allow" // through the judge's own proxy, to checks.network.allow only
)

// Checks configures the checks' own sandbox.
type Checks struct {
	// Network: none (default: loopback of the check's own only), host
	// (the host's network and its loopback services), or a mapping
	// {allow: [host:port, …]}: only those, through the judge's own proxy
	// (see ChecksNetwork): the mode here, the list in NetworkAllow.
	Network ChecksNetworkMode `yaml:"network"`
	// NetworkAllow is checks.network's allowlist (`network: {allow:
	// [...]}`); the loop file spells it only inside checks.network.
	NetworkAllow []string `yaml:"network_allow"`
	// AllowTells are globs of source files whose tells (code that asks
	// whether it runs under a test, prints a runner's framing or exits
	// early) are known and honest: a change to them is not refused.
	AllowTells []string `yaml:"allow_tells"`
}

// Audit configures the audit before DONE.
type Audit struct {
	On     bool   `yaml:"on"`
	Bar    string `yaml:"bar"`    // critical | major (default) | minor
	Prompt string `yaml:"prompt"` // more for the auditor to look at
}

// Git configures commits of the loop's work.
type Git struct {
	Commit   *bool  `yaml:"commit"`
	Branch   string `yaml:"branch"`
	Worktree bool   `yaml:"worktree"`
	Push     bool   `yaml:"push"`
	Remote   string `yaml:"remote"`
	// Rollback: "task" undoes at once a build run that makes a check fail
	// that passed before (default "": only the stop goes back to the best
	// state).
	Rollback string `yaml:"rollback"`
	// GateCommits: a commit after every gate, empty when nothing changed,
	// so the history shows every verdict (default: a gate commits only
	// work not committed yet; its verdict is in the records).
	GateCommits bool `yaml:"gate_commits"`
	// Land: "merge", "rebase" or "pr" brings a DONE loop's branch into
	// Base after the gates passed again on the merged tree ("" never).
	Land string `yaml:"land"`
	// Base is the branch a loop lands on (default: the branch checked out
	// where the loop was started).
	Base string `yaml:"base"`
	// LandFix gives one agent run to resolve a conflict or a gate that
	// fails on the merged tree, then the gates run again.
	LandFix bool `yaml:"land_fix"`
}

// Notify says whom to tell when a loop stops or nears a budget.
type Notify struct {
	Command string     `yaml:"command"`
	Webhook string     `yaml:"webhook"`
	On      StringList `yaml:"on"`
	// Digest is a cron expression: when to send the report of every loop
	// on this machine over the last day through the channels above.
	Digest string `yaml:"digest"`
}

// Redact adds to what is redacted from everything the engine writes or
// sends (docs/operating.md, "Secrets"). `redact: off` turns redaction off.
type Redact struct {
	// Off is set by `redact: off` (or off: true); the reports then list the
	// loop as NOT VERIFIED.
	Off bool `yaml:"off"`
	// Names are more environment variables whose values are secret.
	Names []string `yaml:"names"`
	// Patterns are more regular expressions (Go syntax) of secrets: the
	// whole match is redacted, or its first group when it has one.
	Patterns []string `yaml:"patterns"`
}

// Compiled are the extra patterns, compiled (validation has checked them;
// one that does not compile is left out).
func (r Redact) Compiled() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range r.Patterns {
		if re, err := regexp.Compile(p); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// UnmarshalYAML reads `redact: off`, `redact: on` or the mapping.
func (r *Redact) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(n.Value) {
		case "off", "false":
			*r = Redact{Off: true}
		case "on", "true", "":
			*r = Redact{}
		default:
			return fmt.Errorf("line %d: redact: %q is not known: write off, or a mapping with names and patterns", n.Line, n.Value)
		}
		return nil
	}
	type plain Redact
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*r = Redact(p)
	return nil
}

// Schedule fires a loop repeatedly.
type Schedule struct {
	Every Duration `yaml:"every"`
	Cron  string   `yaml:"cron"`
}

// Duration is a time.Duration written like 20m or 4h.
type Duration time.Duration

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalYAML writes the duration in its readable form.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// StringList accepts a single string or a list of strings.
type StringList []string

// Problem is one thing wrong with a loop file.
type Problem struct {
	Line, Column int
	Msg          string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Msg)
	}
	return p.Msg
}

// Error is the list of problems of one loop file.
type Error struct {
	Path     string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is invalid (%d problem", e.Path, len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, p := range e.Problems {
		if p.Line > 0 {
			fmt.Fprintf(&b, "\n  %s:%s", e.Path, p)
		} else {
			fmt.Fprintf(&b, "\n  %s: %s", e.Path, p)
		}
	}
	return b.String()
}

// MaxFileSize bounds every read of a loop file: a loop file is a few KB of
// YAML, and a read that is not bounded (a device, a pipe, a huge file)
// never ends or fills the memory.
const MaxFileSize = 1 << 20

// ReadFile reads a loop file, bounded by MaxFileSize, without blocking on
// what is not a regular file: a device, a pipe or a folder is refused
// before a byte is read. Those refusals, and a file over the bound, are an
// *Error naming the file; the file system's own errors are returned as
// they are.
func ReadFile(path string) ([]byte, error) {
	refuse := func(format string, args ...any) error {
		return &Error{Path: path, Problems: []Problem{{Msg: fmt.Sprintf(format, args...)}}}
	}
	// O_NONBLOCK: opening a pipe with no writer must not wait for one.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, refuse("not a regular file (%s): a loop file is a YAML file", fileKind(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, refuse("larger than %d bytes (1 MiB): a loop file is a few KB of YAML", MaxFileSize)
	}
	return data, nil
}

// fileKind names what a path that is not a regular file is. (Ifs, not a
// switch: gremlins counts a case expression as never covered.)
func fileKind(m os.FileMode) string {
	if m.IsDir() {
		return "a folder"
	}
	if m&os.ModeNamedPipe != 0 {
		return "a named pipe"
	}
	if m&os.ModeSocket != 0 {
		return "a socket"
	}
	if m&os.ModeCharDevice != 0 {
		return "a character device"
	}
	if m&os.ModeDevice != 0 {
		return "a device"
	}
	return "not a file"
}

// Load reads, checks and completes a loop file.
func Load(path string) (*Loop, error) {
	abs, err := filepath.Abs(expandHome(path))
	if err != nil {
		return nil, err
	}
	data, err := ReadFile(abs)
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("read loop file: %w", err)
	}
	l, err := Parse(data, abs)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Parse checks and completes a loop file's contents. path is used in messages
// and to locate the loop's directory.
func Parse(data []byte, path string) (*Loop, error) {
	var root yaml.Node
	if err := safeUnmarshal(data, &root); err != nil {
		return nil, &Error{Path: path, Problems: []Problem{syntaxProblem(data, err)}}
	}
	if len(root.Content) == 0 {
		return nil, &Error{Path: path, Problems: []Problem{{Line: 1, Column: 1, Msg: "the loop file is empty; it needs at least an objective"}}}
	}
	doc := root.Content[0]
	c := &checker{}
	c.walk(doc, typeOfLoop, "")
	if p, ok := secondDocument(data, doc); ok {
		c.problems = append(c.problems, p)
	}
	var l Loop
	if err := safeDecode(doc, &l); err != nil && len(c.problems) == 0 {
		return nil, &Error{Path: path, Problems: []Problem{decodeProblem(err)}}
	}
	l.Path = path
	l.Dir = filepath.Dir(path)
	l.applyDefaults()
	// Report the meaning problems too, except where the structure was
	// already wrong: one message per problem.
	problems := c.problems
	reported := map[int]bool{}
	for _, p := range problems {
		reported[p.Line] = true
	}
	for _, p := range l.validate(c.nodes) {
		if !reported[p.Line] || p.Line == 0 {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
		return nil, &Error{Path: path, Problems: problems}
	}
	return &l, nil
}

var docMarker = regexp.MustCompile(`^(---|\.\.\.)([ \t]|$)`)

// secondDocument finds a second YAML document after the first: yaml.v3
// reads only the first, so whatever follows a "---" would be ignored
// without a word. An empty one (a trailing "---") is harmless.
func secondDocument(data []byte, first *yaml.Node) (p Problem, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	d := yaml.NewDecoder(bytes.NewReader(data))
	var a, b yaml.Node
	if d.Decode(&a) != nil {
		return Problem{}, false
	}
	err := d.Decode(&b)
	if errors.Is(err, io.EOF) || (err == nil && (len(b.Content) == 0 || b.Content[0].Tag == "!!null")) {
		return Problem{}, false
	}
	p = Problem{Line: b.Line, Column: 1, Msg: "a second YAML document starts here, and only the first is read: a loop file is one document; remove this line and join what follows to the document above"}
	if err != nil || p.Line < 1 {
		// It does not even parse: point at its marker.
		p.Line = 0
		for i, start := range lineStarts(data) {
			if i+1 > first.Line && docMarker.Match(data[start:]) && !bytes.HasPrefix(data[start:], []byte("...")) {
				p.Line = i + 1
				break
			}
		}
		if p.Line == 0 {
			return Problem{}, false
		}
		p.Msg = "a second YAML document starts here; it does not parse, and a loop file is one document anyway: remove this line and join what follows to the document above"
	}
	return p, true
}

// safeDecode is Node.Decode that turns a panic into an error.
func safeDecode(n *yaml.Node, l *Loop) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("line %d: cannot read the loop file: %v", n.Line, r)
		}
	}()
	return n.Decode(l)
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// ExpandHome expands a leading ~ in a path.
func ExpandHome(p string) string { return expandHome(p) }
