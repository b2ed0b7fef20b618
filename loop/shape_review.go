package loop

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/spec"
)

// The review shape lives in review/ (review.Shape); the engine runs it
// through reviewHost, its side of review.Host.

// reviewShape is the loop's review shape, made at its first step.
func (e *Engine) reviewShape() *review.Shape {
	if e.review == nil {
		e.review = review.New(e.dir, reviewHost{e})
	}
	return e.review
}

// reviewHost is the engine as the review shape sees it.
type reviewHost struct{ e *Engine }

var _ review.Host = reviewHost{}

func (h reviewHost) Spec() *spec.Loop               { return h.e.spec }
func (h reviewHost) Redactor() *redact.Redactor     { return h.e.red }
func (h reviewHost) Review() *review.State          { return h.e.st.Review }
func (h reviewHost) SetReview(rs *review.State)     { h.e.st.Review = rs }
func (h reviewHost) SetIterations(n int)            { h.e.st.Iterations = n }
func (h reviewHost) SetEvidence(lines []string)     { h.e.st.Evidence = lines }
func (h reviewHost) CostUSD() float64               { return h.e.st.CostUSD }
func (h reviewHost) Emit(ev record.Event)           { h.e.emit(ev) }
func (h reviewHost) Stop(reason, sum string) error  { return h.e.stop(reason, sum) }
func (h reviewHost) NotVerified(note string)        { h.e.addNotVerified(note) }
func (h reviewHost) Signature(signal string) string { return Signature(signal) }

func (h reviewHost) RunAgent(ctx context.Context, phase, task, prompt string) (review.AgentRun, error) {
	run, err := h.e.run.runAgent(ctx, phase, false, task, prompt)
	if err != nil || run == nil {
		return review.AgentRun{}, err
	}
	out := review.AgentRun{Result: run.Result, Changed: run.Changed}
	if len(run.Tamper) > 0 {
		out.TamperNote = tamperNote(run.Tamper)
	}
	return out, nil
}

// RunChecks runs the gate checks; an interrupted run returns what ran,
// before the baseline. Evidence is labelled with the gate's name without
// its "review-" prefix (review-final: final).
func (h reviewHost) RunChecks(ctx context.Context, gate string) review.Checks {
	e := h.e
	cmds := e.spec.GateChecks()
	results := e.runChecks(ctx, gate, cmds)
	if ctx.Err() != nil {
		return review.Checks{Commands: len(cmds), Results: checksOf(results)}
	}
	e.applyBaseline(results)
	return review.Checks{
		Commands:     len(cmds),
		Results:      checksOf(results),
		Pass:         allPass(results),
		Signal:       failureSignal(nil, results),
		FirstFailure: firstFailure(results),
		Evidence:     evidence(strings.TrimPrefix(gate, "review-"), results, nil),
	}
}

func (h reviewHost) CleanRoom(ctx context.Context, gate string) (*record.CleanRoom, string) {
	return h.e.judgeCleanRoom(ctx, gate, h.e.spec.GateChecks())
}

func (h reviewHost) ProtectedFiles() ([]review.ProtectedFile, error) {
	files, _, err := h.e.protectedFiles()
	if err != nil {
		return nil, err
	}
	out := make([]review.ProtectedFile, 0, len(files))
	for _, f := range files {
		out = append(out, review.ProtectedFile{Path: f.Path, Rule: f.Rule})
	}
	return out, nil
}

func (h reviewHost) Render(phase, objective, src string) (string, error) {
	d := h.e.promptData(phase)
	d.Objective = objective
	return Render(src, d)
}

// protectRules are the loop's protection rules for the next run. In the
// review shape the files under review (the diff from the base to the
// working tree) are the deliverable: a check that runs one of them does not
// make it a gate program, and the fixer may edit it.
func (e *Engine) protectRules() (*ProtectRules, error) {
	rules, err := NewProtectRules(e.dir, e.spec)
	if err != nil || e.spec.Shape != spec.ShapeReview || e.st.Review == nil || e.st.Review.BaseSHA == "" {
		return rules, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	paths, err := review.UnderReview(ctx, e.dir, e.st.Review.BaseSHA)
	if err != nil {
		return nil, fmt.Errorf("cannot list the files under review: %w", err)
	}
	rules.FreeDeliverables(paths)
	return rules, nil
}

// What the rest of loop/ used from the review files (the audit's agent
// and findings, rollback's git, gates' list) until it moves too.

// FindingsSchema is the contract of a reviewer's (and the auditor's) findings.
const FindingsSchema = review.FindingsSchema

// ParseFindings decodes and validates findings (review.ParseFindings).
func ParseFindings(data []byte) ([]review.Finding, []string) { return review.ParseFindings(data) }

func atOrAbove(fs []review.Finding, bar string) []review.Finding { return review.AtOrAbove(fs, bar) }
func agentName(a spec.Agent) string                              { return review.AgentName(a) }
func sameAgent(a, b spec.Agent) bool                             { return review.SameAgent(a, b) }
func agentOutput(keepRel string) string                          { return review.AgentOutput(keepRel) }
func (e *Engine) roundDir(name string) string                    { return review.RecordPath(name) }
func (e *Engine) otherModelFor(role string, of spec.Agent) bool {
	return review.OtherModelFor(e.spec, role, of)
}

// askAgentJSON runs a fresh agent of phase for a JSON answer, and asks
// once more when the answer is invalid (review.Shape.AskJSON).
func (e *Engine) askAgentJSON(ctx context.Context, phase, task, prompt, keepRel string, parse func([]byte) []string) (ok bool, invalid []string, err error) {
	return e.reviewShape().AskJSON(ctx, phase, task, prompt, keepRel, parse)
}

const excludeRecords = review.ExcludeRecords

func gitRun(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return review.GitRun(ctx, dir, env, args...)
}

func gitLine(ctx context.Context, dir string, args ...string) (string, error) {
	return review.GitLine(ctx, dir, args...)
}

func gitHead(ctx context.Context, dir string) string { return review.GitHead(ctx, dir) }

func snapshotTree(ctx context.Context, dir string) (string, error) {
	return review.SnapshotTree(ctx, dir)
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
