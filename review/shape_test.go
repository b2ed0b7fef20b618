package review

// The review shape run without an engine: a fake Host scripts the agents
// and the checks, and the shape's steps run on a real git repository.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// fakeHost is the engine's side of the shape in tests.
type fakeHost struct {
	dir     string
	spec    *spec.Loop
	rs      *State
	iter    int
	ev      []string
	events  []record.Event
	runs    []string          // phase:task of each agent run
	answers map[string]string // reviewer task: what it writes to its output file
	fix     func(dir string) []string
	checks  Checks
	reason  string
	summary string
	// weak, when set, is what the strength pass says to end NOT VERIFIED.
	weak      string
	strengths []string // the bases the strength pass was asked about
}

var outputFile = regexp.MustCompile(`Output file: (\S+)`)

func (h *fakeHost) Spec() *spec.Loop           { return h.spec }
func (h *fakeHost) Redactor() *redact.Redactor { return redact.New(nil, nil, nil) }
func (h *fakeHost) Review() *State             { return h.rs }
func (h *fakeHost) SetReview(rs *State)        { h.rs = rs }
func (h *fakeHost) SetIterations(n int)        { h.iter = n }
func (h *fakeHost) SetEvidence(l []string)     { h.ev = l }
func (h *fakeHost) CostUSD() float64           { return 0 }
func (h *fakeHost) Emit(ev record.Event)       { h.events = append(h.events, ev) }
func (h *fakeHost) NotVerified(string)         {}
func (h *fakeHost) Signature(s string) string  { return "sig" }
func (h *fakeHost) RunChecks(ctx context.Context, gate string) Checks {
	return h.checks
}
func (h *fakeHost) CleanRoom(ctx context.Context, gate string) (*record.CleanRoom, string) {
	return &record.CleanRoom{Pass: true}, ""
}
func (h *fakeHost) Strength(ctx context.Context, base string) (string, bool, string) {
	h.strengths = append(h.strengths, base)
	if h.weak != "" {
		return "verify_strength: the checks caught 1 of 4 mutants", false, h.weak
	}
	return "", true, ""
}
func (h *fakeHost) ProtectedFiles() ([]ProtectedFile, error) { return nil, nil }
func (h *fakeHost) Render(phase, objective, src string) (string, error) {
	return src, nil
}
func (h *fakeHost) Stop(reason, summary string) error {
	h.reason, h.summary = reason, summary
	return errors.New("stopped: " + reason)
}

func (h *fakeHost) RunAgent(ctx context.Context, phase, task, prompt string) (AgentRun, error) {
	h.runs = append(h.runs, phase+":"+task)
	switch phase {
	case "reviewer":
		m := outputFile.FindStringSubmatch(prompt)
		if m == nil {
			return AgentRun{}, errors.New("the reviewer's prompt names no output file")
		}
		if a, ok := h.answers[task]; ok {
			os.MkdirAll(filepath.Dir(filepath.Join(h.dir, m[1])), 0o755)
			os.WriteFile(filepath.Join(h.dir, m[1]), []byte(a), 0o644)
			return AgentRun{Changed: []string{filepath.ToSlash(m[1])}}, nil
		}
		return AgentRun{}, nil
	case "fixer":
		return AgentRun{Changed: h.fix(h.dir)}, nil
	}
	return AgentRun{}, errors.New("unexpected agent " + phase)
}

// reviewRepo is a git repository with one commit and a change to review.
func reviewRepo(t *testing.T) string {
	t.Helper()
	testkit.Need(t, "git")
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q")
	testkit.Git(t, dir, "config", "user.email", "t@example.com")
	testkit.Git(t, dir, "config", "user.name", "T")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644)
	testkit.Git(t, dir, "add", "a.go")
	testkit.Git(t, dir, "commit", "-qm", "start")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc F() int { return 1 }\n"), 0o644)
	return dir
}

func reviewLoop(rounds int) *spec.Loop {
	return &spec.Loop{Name: "t", Shape: spec.ShapeReview, Agent: spec.Agent{Backend: "command", Command: "x"},
		Review: spec.Review{Bar: "major", MaxRounds: rounds}}
}

func passing() Checks {
	return Checks{Commands: 1, Results: []record.Check{{Command: "true", Pass: true}}, Pass: true,
		Evidence: []string{"final gate: `true` exit 0 pass (0ms)"}}
}

// runSteps runs the shape's steps until it stops (at most n).
func runSteps(t *testing.T, s *Shape, h *fakeHost, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := s.Step(context.Background()); err != nil {
			if h.reason == "" {
				t.Fatalf("step %d: %v", i+1, err)
			}
			return
		}
	}
	t.Fatalf("no stop after %d steps; at step %q", n, h.rs.Step)
}

// A major finding is fixed, the fix check says closed: the review ends
// DONE, with the rounds, the verdict, the evidence and the report kept.
func TestShapeFindingFixedThenClosed(t *testing.T) {
	dir := reviewRepo(t)
	h := &fakeHost{dir: dir, spec: reviewLoop(1), checks: passing(), answers: map[string]string{
		"round-1":  `{"findings":[{"id":"F-1","severity":"major","file":"a.go","line":3,"title":"F returns a constant","detail":"d","kind":"logic"}]}`,
		"fixcheck": `{"verdicts":[{"id":"F-1","status":"closed","detail":"gone"}]}`,
	}, fix: func(dir string) []string {
		os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc F(x int) int { return x }\n"), 0o644)
		return []string{"a.go"}
	}}
	s := New(dir, h)
	runSteps(t, s, h, 10)
	if h.reason != ReasonDone {
		t.Fatalf("stopped %s (%s), want done", h.reason, h.summary)
	}
	if got := strings.Join(h.runs, " "); got != "reviewer:round-1 fixer:round-1 reviewer:fixcheck" {
		t.Errorf("agent runs %q", got)
	}
	rs := h.rs
	if len(rs.Rounds) != 1 || strings.Join(rs.Rounds[0].Sent, ",") != "F-1" || rs.Rounds[0].Status != "fixed" || rs.Rounds[0].TreeBefore == rs.Rounds[0].TreeAfter {
		t.Errorf("rounds %+v", rs.Rounds)
	}
	if rs.FixCheck == nil || len(rs.FixCheck.Verdicts) != 1 || rs.FixCheck.Verdicts[0].Status != "closed" || rs.EndedBy != "fixcheck" || len(rs.Open) != 0 {
		t.Errorf("fix check %+v, ended by %q, open %v", rs.FixCheck, rs.EndedBy, rs.Open)
	}
	if h.iter != 1 || len(h.ev) < 2 || h.ev[0] != "final gate: `true` exit 0 pass (0ms)" || !strings.HasPrefix(h.ev[len(h.ev)-2], "review: ") {
		t.Errorf("iterations %d, evidence %q", h.iter, h.ev)
	}
	rep, err := os.ReadFile(loopdir.Dir(dir).ReviewReport())
	if err != nil || !strings.Contains(string(rep), "| fix check | 0 | 1 | 0 | confirmed closed: F-1 | – | none |") {
		t.Errorf("report (%v):\n%s", err, rep)
	}
	if _, err := os.Stat(filepath.Join(dir, RecordPath("round-1/findings.json"))); err != nil {
		t.Errorf("the valid findings are not kept in the records: %v", err)
	}
}

// A reviewer whose answer is invalid is asked once more; invalid twice,
// the round fails, and with no round left the review ends with NO-REVIEW
// open: never DONE on a review that did not happen.
func TestShapeInvalidReviewNeverDone(t *testing.T) {
	dir := reviewRepo(t)
	h := &fakeHost{dir: dir, spec: reviewLoop(1), checks: passing(), answers: map[string]string{
		"round-1":       `{"findings":[{"id":"F-1","severity":"huge"}]}`,
		"round-1-again": `not json`,
	}}
	s := New(dir, h)
	runSteps(t, s, h, 10)
	if h.reason != ReasonBudget || !strings.Contains(h.summary, "without a valid review") {
		t.Fatalf("stopped %s (%s), want budget_spent without a valid review", h.reason, h.summary)
	}
	if got := strings.Join(h.runs, " "); got != "reviewer:round-1 reviewer:round-1-again" {
		t.Errorf("agent runs %q", got)
	}
	if len(h.rs.Open) != 1 || h.rs.Open[0].ID != "NO-REVIEW" || h.rs.Rounds[0].Status != "failed" {
		t.Errorf("open %+v, rounds %+v", h.rs.Open, h.rs.Rounds)
	}
	invalid := 0
	for _, ev := range h.events {
		if ev.Kind == "invalid" {
			invalid++
		}
	}
	if invalid != 2 {
		t.Errorf("%d invalid-answer records, want 2", invalid)
	}
}

// Failing checks are a critical finding of looprinter's own, even when
// the reviewer finds nothing: the review does not end clean.
func TestShapeFailingChecksAreAFinding(t *testing.T) {
	dir := reviewRepo(t)
	failing := Checks{Commands: 1, Results: []record.Check{{Command: "false", ExitCode: 1}}, Signal: "$ false   # exit 1",
		FirstFailure: "`false` exited 1"}
	h := &fakeHost{dir: dir, spec: reviewLoop(1), checks: failing, answers: map[string]string{
		"round-1": `{"findings":[]}`,
	}, fix: func(string) []string { return nil }}
	s := New(dir, h)
	if err := s.Step(context.Background()); err != nil { // start
		t.Fatal(err)
	}
	if err := s.Step(context.Background()); err != nil { // round 1
		t.Fatal(err)
	}
	r := h.rs.Rounds[0]
	if len(r.Findings) != 1 || r.Findings[0].ID != ChecksFindingID || r.Findings[0].Severity != "critical" || h.rs.Step != "fix" {
		t.Fatalf("findings %+v, next step %q; want the CHECKS finding sent to the fixer", r.Findings, h.rs.Step)
	}
}

// The final checks get a verify_strength pass over the lines changed since
// the review's base: a weak one ends the review NOT VERIFIED, never DONE,
// with the pass's line in the evidence.
func TestShapeWeakFinalChecksNotVerified(t *testing.T) {
	dir := reviewRepo(t)
	h := &fakeHost{dir: dir, spec: reviewLoop(1), checks: passing(), weak: "the checks caught 1 of 4 mutants, under verify_strength.min 0.6",
		answers: map[string]string{"round-1": `{"findings":[]}`}}
	s := New(dir, h)
	runSteps(t, s, h, 10)
	if h.reason != ReasonNotVerified || !strings.Contains(h.summary, "caught 1 of 4") {
		t.Fatalf("stopped %s (%s), want not_verified naming the pass", h.reason, h.summary)
	}
	if len(h.strengths) != 1 || h.strengths[0] == "" || h.strengths[0] != h.rs.BaseSHA {
		t.Errorf("strength asked about %q, want the review's base %q once", h.strengths, h.rs.BaseSHA)
	}
	if !strings.Contains(strings.Join(h.ev, "\n"), "verify_strength: the checks caught 1 of 4 mutants") {
		t.Errorf("evidence %q lacks the strength line", h.ev)
	}
	// Strong enough: DONE as before.
	dir = reviewRepo(t)
	h = &fakeHost{dir: dir, spec: reviewLoop(1), checks: passing(), answers: map[string]string{"round-1": `{"findings":[]}`}}
	runSteps(t, New(dir, h), h, 10)
	if h.reason != ReasonDone || len(h.strengths) != 1 {
		t.Fatalf("stopped %s (%s) after %d strength passes, want done after 1", h.reason, h.summary, len(h.strengths))
	}
}
