package review

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/textcut"
)

// Steps of the review shape, kept in State.Step.
const (
	reviewStart    = "start"
	reviewWriter   = "writer"
	reviewReview   = "review"
	reviewFix      = "fix"
	reviewFixCheck = "fixcheck"
	reviewFinal    = "final"
)

// ChecksFindingID is the finding looprinter adds itself when the checks fail.
const ChecksFindingID = "CHECKS"

// The reasons a review ends with: the engine's outcome reasons.
const (
	ReasonDone        = "done"
	ReasonBudget      = "budget_spent"
	ReasonNoProgress  = "no_progress"
	ReasonBlocked     = "blocked"
	ReasonInterrupted = "interrupted"
	ReasonNotVerified = "not_verified"
)

// Host is what the review shape needs from the engine that runs it: the
// loop file, the state's fields the review reads and writes, agent runs,
// records, the checks, and the stop. The engine implements it; the review
// package never imports the engine.
type Host interface {
	// Spec is the loop file as the engine holds it now (an agent run may
	// reload it).
	Spec() *spec.Loop
	// Redactor hides the loop's secrets in what the review writes.
	Redactor() *redact.Redactor
	// Review is the review's part of the state (nil before the first
	// step); SetReview stores it there, so it is saved with the state.
	Review() *State
	SetReview(*State)
	// SetIterations sets the state's iteration count (the round).
	SetIterations(n int)
	// SetEvidence replaces the state's evidence of the outcome.
	SetEvidence(lines []string)
	// CostUSD is what the loop has spent so far.
	CostUSD() float64
	// RunAgent runs a fresh agent for phase (writer, reviewer, fixer,
	// auditor) with the engine's budgets, protection and records around it.
	RunAgent(ctx context.Context, phase, task, prompt string) (AgentRun, error)
	// Emit records an event.
	Emit(record.Event)
	// Stop ends the loop with reason and summary; it returns the error
	// the step returns.
	Stop(reason, summary string) error
	// RunChecks runs the loop's gate checks on the current tree, with the
	// baseline applied.
	RunChecks(ctx context.Context, gate string) Checks
	// CleanRoom runs the gate checks in the clean room; the string is the
	// failure signal when it fails.
	CleanRoom(ctx context.Context, gate string) (*record.CleanRoom, string)
	// NotVerified records what the outcome could not verify.
	NotVerified(note string)
	// ProtectedFiles lists the protected files, each with its rule.
	ProtectedFiles() ([]ProtectedFile, error)
	// Render renders a loop-file prompt template for phase with the
	// objective given.
	Render(phase, objective, src string) (string, error)
	// Signature is the short signature of a failure signal.
	Signature(signal string) string
	// Strength runs the verify_strength pass (when the loop file turns it
	// on) over the lines changed since base: line is its evidence ("" when
	// off), hold false when it ends the review NOT VERIFIED (fewer mutants
	// caught than verify_strength.min, or none judged), with why.
	Strength(ctx context.Context, base string) (line string, hold bool, why string)
}

// AgentRun is what the review reads of one agent run.
type AgentRun struct {
	Result  agent.Result
	Changed []string // files the run changed, relative to the loop's folder
	// TamperNote says which protected files the agent touched (and the
	// engine restored), "" when none.
	TamperNote string
}

// Checks is one run of the gate checks.
type Checks struct {
	Commands     int            // how many checks the loop file lists
	Results      []record.Check // each check's command, exit code and output file
	Pass         bool           // every check passed (baseline failures aside)
	Signal       string         // the failure signal, "" when they pass
	FirstFailure string         // the first failing check, for a summary
	Evidence     []string       // the evidence lines of the outcome
}

// ProtectedFile is a protected file and the rule that protects it.
type ProtectedFile struct{ Path, Rule string }

// Shape runs the review shape: writer (optional) → reviewer (fresh
// context) → fixer, in rounds, then a fix-verification pass and the final
// checks, on top of the engine's runs of agents.
type Shape struct {
	h   Host
	dir string
}

// New is the review shape of the loop in dir, run by h.
func New(dir string, h Host) *Shape { return &Shape{h: h, dir: dir} }

func (s *Shape) spec() *spec.Loop { return s.h.Spec() }

func (s *Shape) path(parts ...string) string {
	return filepath.Join(append([]string{s.dir}, parts...)...)
}

// Step runs one step of the review shape. Each call does one thing and
// leaves the state ready for the next, so a review killed mid-round
// resumes where it was. It returns the engine's stop when the review ends.
func (s *Shape) Step(ctx context.Context) error {
	rs := s.h.Review()
	if rs == nil {
		rs = &State{Step: reviewStart}
		s.h.SetReview(rs)
	}
	s.reviewAgents(rs)
	switch rs.Step {
	case reviewStart, "":
		return s.reviewBegin(ctx, rs)
	case reviewWriter:
		return s.reviewWrite(ctx, rs)
	case reviewReview:
		return s.reviewRound(ctx, rs)
	case reviewFix:
		return s.reviewFixRound(ctx, rs)
	case reviewFixCheck:
		return s.reviewFixCheck(ctx, rs)
	case reviewFinal:
		return s.reviewFinal(ctx, rs)
	}
	return s.h.Stop(ReasonBlocked, fmt.Sprintf("state.json holds an unknown review step %q", rs.Step))
}

func (s *Shape) reviewObjective() string {
	if o := strings.TrimSpace(s.spec().Objective); o != "" {
		return o
	}
	return DefaultObjective
}

func (s *Shape) reviewBegin(ctx context.Context, rs *State) error {
	if old := loopdir.Dir(s.dir).Review(); guard.IsDir(old) {
		os.Rename(old, old+"."+time.Now().UTC().Format("20060102T150405")+".old")
	}
	writer := strings.TrimSpace(s.spec().Review.Writer) != ""
	name, sha, err := resolveBase(ctx, s.dir, s.spec().Review.Base, writer)
	if err != nil {
		return s.h.Stop(ReasonBlocked, err.Error())
	}
	rs.Base, rs.BaseSHA = name, sha
	rs.Round = 1
	rs.Step = reviewReview
	if writer {
		rs.Step = reviewWriter
	}
	s.h.SetIterations(0)
	s.h.Emit(record.Event{Event: record.Review, Kind: "start", Message: fmt.Sprintf("review of git diff %s (%s): reviewer %s, fixer %s, bar %s, at most %d round(s)",
		name, textcut.SHA(sha), rs.Reviewer, rs.Fixer, s.spec().Review.Bar, s.spec().Review.MaxRounds)})
	return nil
}

// reviewWrite runs the optional draft step, then the checks.
func (s *Shape) reviewWrite(ctx context.Context, rs *State) error {
	prompt, err := s.writerPrompt(s.reviewObjective(), s.spec().Review.Writer, s.spec().Review.Requirements, s.spec().Review.Architecture)
	if err != nil {
		return s.h.Stop(ReasonBlocked, err.Error())
	}
	rs.EvidenceFresh = false
	if _, err := s.h.RunAgent(ctx, "writer", "draft", prompt); err != nil {
		return err
	}
	rs.WriterDone = true
	if err := s.reviewRunChecks(ctx, rs, "review-writer"); err != nil {
		return err
	}
	rs.Step, rs.Round = reviewReview, 1
	return nil
}

// reviewRunChecks runs the checks on the current tree and keeps their
// evidence for the next reviewer.
func (s *Shape) reviewRunChecks(ctx context.Context, rs *State, gate string) error {
	c := s.h.RunChecks(ctx, gate)
	if ctx.Err() != nil {
		return s.h.Stop(ReasonInterrupted, "interrupted during the checks")
	}
	results := c.Results
	pass := c.Pass
	signal := c.Signal
	if c.Commands > 0 {
		s.h.Emit(record.Event{Event: record.Verify, Gate: gate, Pass: record.Bool(pass), Checks: results,
			FailureSignal: signal, Signature: s.sigIf(!pass, signal)})
	}
	rs.Evidence = checkEvidence(results)
	rs.EvidenceFresh, rs.ChecksPass, rs.CheckSignal = true, pass, signal
	rs.FailedChecks = nil
	for _, r := range results {
		if !r.Pass {
			rs.FailedChecks = append(rs.FailedChecks, fmt.Sprintf("`%s` exit %d", r.Command, r.ExitCode))
		}
	}
	if c.Commands == 0 {
		s.h.NotVerified("no verify checks: the change was judged by the reviewer alone")
	}
	return nil
}

// checkEvidence is what the reviewer reads about the checks: each command,
// its exit code, and the tail of its output.
func checkEvidence(results []record.Check) string {
	if len(results) == 0 {
		return "(no checks are configured: there is no build or test evidence)"
	}
	var b strings.Builder
	for _, r := range results {
		mark := "pass"
		if !r.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "$ %s   # exit %d, %s, %dms\n", r.Command, r.ExitCode, mark, r.DurationMS)
		out := tailFile(r.Output, 40)
		if strings.TrimSpace(out) == "" {
			out = "(no output)"
		}
		b.WriteString(fenceBlock("text", out) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[… %d earlier lines]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	out := strings.Join(lines, "\n")
	if len(out) > 16<<10 {
		out = "[…]" + out[len(out)-16<<10:]
	}
	return out
}

func (rs *State) current() *Round {
	for len(rs.Rounds) < rs.Round {
		rs.Rounds = append(rs.Rounds, Round{N: len(rs.Rounds) + 1})
	}
	return &rs.Rounds[rs.Round-1]
}

// lastValid is the latest round before n whose review produced findings.
func (rs *State) lastValid(n int) *Round {
	for i := n - 2; i >= 0 && i < len(rs.Rounds); i-- {
		if rs.Rounds[i].Status != "failed" {
			return &rs.Rounds[i]
		}
	}
	return nil
}

func (s *Shape) roundDir(name string) string { return RecordPath(name) }

// RecordPath is where the review (and the audit) keep name among the
// engine's records, relative to the loop's folder.
func RecordPath(name string) string {
	return filepath.Join(loopdir.RecordsDir, loopdir.ReviewDir, name)
}

// UnderReview lists the files under review: those that differ from the
// review's base to the working tree (both sides of a rename), relative to
// the loop's folder in dir. They are the deliverable: the fixer may edit
// them.
func UnderReview(ctx context.Context, dir, baseSHA string) ([]string, error) {
	tree, err := safegit.SnapshotTree(ctx, dir)
	if err != nil {
		return nil, err
	}
	return ChangedPaths(ctx, dir, baseSHA, tree)
}

// reviewRound runs one round's review: the checks (when the tree changed),
// the diff, a fresh reviewer, the findings validated and stored.
func (s *Shape) reviewRound(ctx context.Context, rs *State) error {
	bar := s.spec().Review.Bar
	s.h.SetIterations(rs.Round)
	r := rs.current()
	r.Status = "reviewing"
	if !rs.EvidenceFresh {
		if err := s.reviewRunChecks(ctx, rs, "review"); err != nil {
			return err
		}
	}
	tree, err := safegit.SnapshotTree(ctx, s.dir)
	if err != nil {
		return s.h.Stop(ReasonBlocked, "cannot read the change: "+err.Error())
	}
	diff, err := gitDiff(ctx, s.dir, rs.BaseSHA, tree, nil)
	if err != nil {
		return s.h.Stop(ReasonBlocked, "cannot read the change: "+err.Error())
	}
	outRel := filepath.Join(s.roundDir(fmt.Sprintf("round-%d", r.N)), "findings.json")
	rules := s.spec().Review.Rules
	if strings.TrimSpace(rules) == "" {
		rules = DefaultRules
	}
	prompt := s.reviewerPrompt(reviewerInput{
		Objective: s.reviewObjective(), Round: r.N, Requirements: s.spec().Review.Requirements, Architecture: s.spec().Review.Architecture,
		Rules: rules, Evidence: rs.Evidence, Base: rs.Base, Diff: diff, OutputFile: AgentOutput(outRel),
	})
	var findings []Finding
	ok, invalid, err := s.askReviewer(ctx, fmt.Sprintf("round-%d", r.N), prompt, outRel, func(b []byte) []string {
		fs, errs := ParseFindings(b)
		findings = fs
		return errs
	})
	if err != nil {
		return err
	}
	if !ok {
		r.Status, r.Invalid = "failed", invalid
		s.h.Emit(record.Event{Event: record.Review, Kind: "round_failed", Errors: invalid,
			Message: fmt.Sprintf("round %d failed: the reviewer's output was invalid twice", r.N)})
		s.writeReviewReport(rs, "")
		return s.reviewNext(rs)
	}
	if !rs.ChecksPass {
		findings = append(findings, Finding{ID: ChecksFindingID, Severity: "critical", File: "-", Kind: "failing-check",
			Title:  fmt.Sprintf("the checks fail: %s (signature %s)", strings.Join(rs.FailedChecks, ", "), s.h.Signature(rs.CheckSignal)),
			Detail: "looprinter's checks fail on this change:\n" + rs.CheckSignal})
	}
	r.Findings = findings
	r.Recurring = findRecurrences(rs.Rounds[:r.N-1], findings, bar)
	data, _ := json.Marshal(struct {
		Round     int          `json:"round"`
		Findings  []Finding    `json:"findings"`
		Recurring []Recurrence `json:"recurring,omitempty"`
	}{r.N, findings, r.Recurring})
	guard.WriteFileAtomic(s.path(s.roundDir(fmt.Sprintf("round-%d", r.N)), "round.json"), s.h.Redactor().Bytes(append(data, '\n')))
	c, m, n := sevCounts(findings)
	open := AtOrAbove(findings, bar)
	msg := fmt.Sprintf("round %d: %d critical, %d major, %d minor; %d at or above the bar (%s)", r.N, c, m, n, len(open), bar)
	if len(r.Recurring) > 0 {
		var rec []string
		for _, x := range r.Recurring {
			rec = append(rec, fmt.Sprintf("%s (round %d %s)", x.ID, x.Round, x.Of))
		}
		msg += "; RECURRING: " + strings.Join(rec, ", ")
	}
	s.h.Emit(record.Event{Event: record.Review, Kind: "findings", Message: msg, Data: data, File: outRel})
	for _, x := range r.Recurring {
		s.h.Emit(record.Event{Event: record.Review, Kind: "recurring", Task: x.ID,
			Message: fmt.Sprintf("%s came back: same kind and place as round %d's %s; the next fixer is told to change the approach", x.ID, x.Round, x.Of)})
	}
	if len(open) == 0 {
		r.Status = "clean"
		rs.EndedBy = "clean"
		rs.Step = reviewFinal
		s.writeReviewReport(rs, "")
		return nil
	}
	if prev := rs.lastValid(r.N); prev != nil && prev.N == r.N-1 && sameSet(AtOrAbove(prev.Findings, bar), open) {
		r.Status = "same_set"
		rs.EndedBy = "same_set"
		rs.Open = open
		summary := fmt.Sprintf("the same set of findings came back in rounds %d and %d (%s): the fixes did not take; change the approach or fix by hand",
			prev.N, r.N, strings.Join(findingIDs(open), ", "))
		s.h.Emit(record.Event{Event: record.Review, Kind: "same_set", Message: summary})
		ev := []string{fmt.Sprintf("review: round %d repeated round %d's findings", r.N, prev.N)}
		s.h.SetEvidence(ev)
		s.writeReviewReport(rs, ReasonNoProgress+": "+summary)
		s.h.SetEvidence(append(ev, "report: "+filepath.Join(loopdir.RecordsDir, loopdir.ReviewReportFile)))
		return s.h.Stop(ReasonNoProgress, summary)
	}
	r.Status = "reviewed"
	rs.Step = reviewFix
	s.writeReviewReport(rs, "")
	return nil
}

// reviewNext moves on after a failed round: the next round, or the end.
func (s *Shape) reviewNext(rs *State) error {
	if rs.Round < s.spec().Review.MaxRounds {
		rs.Round++
		rs.Step = reviewReview
		return nil
	}
	rs.EndedBy = "rounds"
	rs.Step = reviewFinal
	return nil
}

// sigIf is the signal's signature when ok, else "".
func (s *Shape) sigIf(ok bool, signal string) string {
	if !ok {
		return ""
	}
	return s.h.Signature(signal)
}
