package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Steps of the review shape, kept in ReviewState.Step.
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

// stepReview runs one step of the review shape: writer (optional) →
// reviewer (fresh context) → fixer, in rounds, then a fix-verification pass
// and the final checks. Each call does one thing and leaves the state ready
// for the next, so a review killed mid-round resumes where it was.
func (e *Engine) stepReview(ctx context.Context) error {
	rs := e.st.Review
	if rs == nil {
		rs = &ReviewState{Step: reviewStart}
		e.st.Review = rs
	}
	e.reviewAgents(rs)
	switch rs.Step {
	case reviewStart, "":
		return e.reviewBegin(ctx, rs)
	case reviewWriter:
		return e.reviewWrite(ctx, rs)
	case reviewReview:
		return e.reviewRound(ctx, rs)
	case reviewFix:
		return e.reviewFixRound(ctx, rs)
	case reviewFixCheck:
		return e.reviewFixCheck(ctx, rs)
	case reviewFinal:
		return e.reviewFinal(ctx, rs)
	}
	return e.stop(ReasonBlocked, fmt.Sprintf("state.json holds an unknown review step %q", rs.Step))
}

func (e *Engine) reviewObjective() string {
	if o := strings.TrimSpace(e.spec.Objective); o != "" {
		return o
	}
	return DefaultReviewObjective
}

func agentName(a spec.Agent) string {
	s := a.Backend
	if a.Model != "" {
		s += "/" + a.Model
	}
	if a.Backend == "command" && a.Command != "" {
		s += " (" + short(a.Command) + ")"
	}
	return s
}

// otherModel is the reviewer's default model when the loop file names no
// reviewer: another model family of the fixer's backend, where it declares
// them (agent.Backend.Families).
func otherModel(fixer spec.Agent) string {
	return agent.OtherModel(fixer.Backend, fixer.Model)
}

// otherModelFor gives role another model of of's backend, where it has
// one, when the loop file names no agent for role. It says whether it did.
func (e *Engine) otherModelFor(role string, of spec.Agent) bool {
	if _, ok := e.spec.Agents[role]; ok {
		return false
	}
	m := otherModel(of)
	if m == "" {
		return false
	}
	agents := map[string]spec.Agent{}
	for k, v := range e.spec.Agents {
		agents[k] = v
	}
	agents[role] = spec.Agent{Model: m}
	e.spec.Agents = agents
	return true
}

func sameAgent(a, b spec.Agent) bool {
	return a.Backend == b.Backend && a.Model == b.Model && (a.Backend != "command" || a.Command == b.Command)
}

// reviewAgents gives the reviewer a different model from the fixer when the
// loop file names no reviewer, and warns (once) when they are the same.
func (e *Engine) reviewAgents(rs *ReviewState) {
	fixer := e.spec.AgentFor("fixer", false)
	var notes []string
	if e.otherModelFor("reviewer", fixer) {
		notes = append(notes, fmt.Sprintf("no agents.reviewer in the loop file: the reviewer runs %s, a different model from the fixer's %s (set agents.reviewer to choose; another vendor's backend is better still)",
			agentName(e.spec.AgentFor("reviewer", false)), agentName(fixer)))
	}
	reviewer := e.spec.AgentFor("reviewer", false)
	if sameAgent(reviewer, fixer) {
		notes = append(notes, fmt.Sprintf("the reviewer and the fixer are the same model (%s): self-preference and shared blind spots weaken the review; set agents.reviewer to another backend or model", agentName(fixer)))
	}
	rs.Reviewer, rs.Fixer = agentName(reviewer), agentName(fixer)
	if e.spec.Review.Writer != "" {
		rs.Writer = agentName(e.spec.AgentFor("writer", false))
	}
	if !rs.Warned {
		rs.Warned = true
		for _, n := range notes {
			e.emit(record.Event{Event: record.Warning, Message: n})
		}
	}
}

func (e *Engine) reviewBegin(ctx context.Context, rs *ReviewState) error {
	if old := loopdir.Dir(e.dir).Review(); dirExists(old) {
		os.Rename(old, old+"."+time.Now().UTC().Format("20060102T150405")+".old")
	}
	writer := strings.TrimSpace(e.spec.Review.Writer) != ""
	name, sha, err := resolveBase(ctx, e.dir, e.spec.Review.Base, writer)
	if err != nil {
		return e.stop(ReasonBlocked, err.Error())
	}
	rs.Base, rs.BaseSHA = name, sha
	rs.Round = 1
	rs.Step = reviewReview
	if writer {
		rs.Step = reviewWriter
	}
	e.st.Iterations = 0
	e.emit(record.Event{Event: record.Review, Kind: "start", Message: fmt.Sprintf("review of git diff %s (%s): reviewer %s, fixer %s, bar %s, at most %d round(s)",
		name, shortSHA(sha), rs.Reviewer, rs.Fixer, e.spec.Review.Bar, e.spec.Review.MaxRounds)})
	return nil
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
	tree, err := snapshotTree(ctx, e.dir)
	if err != nil {
		return nil, fmt.Errorf("cannot list the files under review: %w", err)
	}
	paths, err := changedPaths(ctx, e.dir, e.st.Review.BaseSHA, tree)
	if err != nil {
		return nil, fmt.Errorf("cannot list the files under review: %w", err)
	}
	rules.FreeDeliverables(paths)
	return rules, nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// reviewWrite runs the optional draft step, then the checks.
func (e *Engine) reviewWrite(ctx context.Context, rs *ReviewState) error {
	prompt, err := e.writerPrompt(e.reviewObjective(), e.spec.Review.Writer, e.spec.Review.Requirements, e.spec.Review.Architecture)
	if err != nil {
		return e.stop(ReasonBlocked, err.Error())
	}
	rs.EvidenceFresh = false
	if _, err := e.runAgent(ctx, "writer", false, "draft", prompt); err != nil {
		return err
	}
	rs.WriterDone = true
	if err := e.reviewRunChecks(ctx, rs, "review-writer"); err != nil {
		return err
	}
	rs.Step, rs.Round = reviewReview, 1
	return nil
}

// reviewRunChecks runs the checks on the current tree and keeps their
// evidence for the next reviewer.
func (e *Engine) reviewRunChecks(ctx context.Context, rs *ReviewState, gate string) error {
	cmds := e.spec.GateChecks()
	results := e.runChecks(ctx, gate, cmds)
	if ctx.Err() != nil {
		return e.stop(ReasonInterrupted, "interrupted during the checks")
	}
	e.applyBaseline(results)
	pass := allPass(results)
	signal := failureSignal(nil, results)
	if len(cmds) > 0 {
		e.emit(record.Event{Event: record.Verify, Gate: gate, Pass: record.Bool(pass), Checks: checksOf(results),
			FailureSignal: signal, Signature: sigIf(!pass, signal)})
	}
	rs.Evidence = checkEvidence(e.dir, results)
	rs.EvidenceFresh, rs.ChecksPass, rs.CheckSignal = true, pass, signal
	rs.FailedChecks = nil
	for _, r := range results {
		if !r.Pass {
			rs.FailedChecks = append(rs.FailedChecks, fmt.Sprintf("`%s` exit %d", r.Command, r.ExitCode))
		}
	}
	if len(cmds) == 0 {
		e.addNotVerified("no verify checks: the change was judged by the reviewer alone")
	}
	return nil
}

// checkEvidence is what the reviewer reads about the checks: each command,
// its exit code, and the tail of its output.
func checkEvidence(dir string, results []CheckResult) string {
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

func (rs *ReviewState) current() *ReviewRound {
	for len(rs.Rounds) < rs.Round {
		rs.Rounds = append(rs.Rounds, ReviewRound{N: len(rs.Rounds) + 1})
	}
	return &rs.Rounds[rs.Round-1]
}

// lastValid is the latest round before n whose review produced findings.
func (rs *ReviewState) lastValid(n int) *ReviewRound {
	for i := n - 2; i >= 0 && i < len(rs.Rounds); i-- {
		if rs.Rounds[i].Status != "failed" {
			return &rs.Rounds[i]
		}
	}
	return nil
}

func (e *Engine) roundDir(name string) string {
	return filepath.Join(loopdir.RecordsDir, loopdir.ReviewDir, name)
}

// askReviewer runs a reviewer (a fresh process) for a JSON answer, and asks
// once more when the answer is invalid. parse validates the JSON.
func (e *Engine) askReviewer(ctx context.Context, task, prompt, keepRel string, parse func([]byte) []string) (ok bool, invalid []string, err error) {
	return e.askAgentJSON(ctx, "reviewer", task, prompt, keepRel, parse)
}

// askAgentJSON runs a fresh agent of phase (a reviewer, the auditor) for a
// JSON answer, and asks once more when the answer is invalid.
func (e *Engine) askAgentJSON(ctx context.Context, phase, task, prompt, keepRel string, parse func([]byte) []string) (ok bool, invalid []string, err error) {
	// The reviewer writes where agents may write (output/review/); a valid
	// answer is kept in the engine's records, where they may not.
	outRel := agentOutput(keepRel)
	out := e.path(outRel)
	os.MkdirAll(filepath.Dir(out), 0o755)
	os.MkdirAll(filepath.Dir(e.path(keepRel)), 0o700)
	for attempt := 1; attempt <= 2; attempt++ {
		if _, err := os.Stat(out); err == nil {
			os.Rename(out, uniquePath(strings.TrimSuffix(out, ".json")+".stale.json"))
		}
		p, t := prompt, task
		if attempt == 2 {
			p += retryNote(invalid, outRel)
			t += "-again"
		}
		run, err := e.runAgent(ctx, phase, false, t, p)
		if err != nil {
			return false, invalid, err
		}
		var changed []string
		tmp, _ := relInside(e.dir, sandbox.TempDir(e.dir))
		for _, f := range run.Changed {
			if f != filepath.ToSlash(outRel) && (tmp == "" || f != tmp+"/" && !strings.HasPrefix(f, tmp+"/")) {
				changed = append(changed, f) // its answer is the one file it writes; its temporary folder is its own
			}
		}
		if len(changed) > 0 {
			e.emit(record.Event{Event: record.Warning, Phase: phase, Task: t, FilesChanged: changed,
				Message: "the " + phase + " changed files it should only read: " + strings.Join(changed, ", ")})
		}
		data, _ := os.ReadFile(out)
		source := outRel
		if len(strings.TrimSpace(string(data))) == 0 {
			data = extractJSON(reviewerText(run.Result))
			source = "the final message"
		}
		errs := parse(data)
		if len(errs) == 0 {
			WriteFileAtomic(e.path(keepRel), e.red.Bytes(append(bytes.TrimRight(data, "\n"), '\n')))
			return true, nil, nil
		}
		invalid = errs
		if len(data) > 0 {
			os.WriteFile(uniquePath(strings.TrimSuffix(e.path(keepRel), ".json")+fmt.Sprintf(".invalid-%d.txt", attempt)), e.red.Bytes(data), 0o600)
			os.Remove(out)
		}
		e.emit(record.Event{Event: record.Review, Kind: "invalid", Phase: phase, Task: t, Attempt: attempt, Errors: errs,
			Message: fmt.Sprintf("the %s's output (from %s) is not valid: %s; %s", phase, source, truncate(strings.Join(errs, "; "), 300),
				map[bool]string{true: "asking again", false: "giving up on this review"}[attempt == 1])})
	}
	return false, invalid, nil
}

// agentOutput is where a reviewer writes the answer the engine keeps at
// keepRel (under working-records/, which agents cannot write).
func agentOutput(keepRel string) string {
	name := strings.TrimPrefix(filepath.ToSlash(keepRel), loopdir.RecordsDir+"/"+loopdir.ReviewDir+"/")
	return filepath.Join(loopdir.OutputDir, "review", strings.ReplaceAll(name, "/", "-"))
}

func reviewerText(r agent.Result) string { return r.FinalMessage }

// reviewRound runs one round's review: the checks (when the tree changed),
// the diff, a fresh reviewer, the findings validated and stored.
func (e *Engine) reviewRound(ctx context.Context, rs *ReviewState) error {
	bar := e.spec.Review.Bar
	e.st.Iterations = rs.Round
	r := rs.current()
	r.Status = "reviewing"
	if !rs.EvidenceFresh {
		if err := e.reviewRunChecks(ctx, rs, "review"); err != nil {
			return err
		}
	}
	tree, err := snapshotTree(ctx, e.dir)
	if err != nil {
		return e.stop(ReasonBlocked, "cannot read the change: "+err.Error())
	}
	diff, err := gitDiff(ctx, e.dir, rs.BaseSHA, tree, nil)
	if err != nil {
		return e.stop(ReasonBlocked, "cannot read the change: "+err.Error())
	}
	outRel := filepath.Join(e.roundDir(fmt.Sprintf("round-%d", r.N)), "findings.json")
	rules := e.spec.Review.Rules
	if strings.TrimSpace(rules) == "" {
		rules = DefaultReviewRules
	}
	prompt := e.reviewerPrompt(reviewerInput{
		Objective: e.reviewObjective(), Round: r.N, Requirements: e.spec.Review.Requirements, Architecture: e.spec.Review.Architecture,
		Rules: rules, Evidence: rs.Evidence, Base: rs.Base, Diff: diff, OutputFile: agentOutput(outRel),
	})
	var findings []Finding
	ok, invalid, err := e.askReviewer(ctx, fmt.Sprintf("round-%d", r.N), prompt, outRel, func(b []byte) []string {
		fs, errs := ParseFindings(b)
		findings = fs
		return errs
	})
	if err != nil {
		return err
	}
	if !ok {
		r.Status, r.Invalid = "failed", invalid
		e.emit(record.Event{Event: record.Review, Kind: "round_failed", Errors: invalid,
			Message: fmt.Sprintf("round %d failed: the reviewer's output was invalid twice", r.N)})
		e.writeReviewReport(rs, "")
		return e.reviewNext(rs)
	}
	if !rs.ChecksPass {
		findings = append(findings, Finding{ID: ChecksFindingID, Severity: "critical", File: "-", Kind: "failing-check",
			Title:  fmt.Sprintf("the checks fail: %s (signature %s)", strings.Join(rs.FailedChecks, ", "), Signature(rs.CheckSignal)),
			Detail: "looprinter's checks fail on this change:\n" + rs.CheckSignal})
	}
	r.Findings = findings
	r.Recurring = findRecurrences(rs.Rounds[:r.N-1], findings, bar)
	data, _ := json.Marshal(struct {
		Round     int          `json:"round"`
		Findings  []Finding    `json:"findings"`
		Recurring []Recurrence `json:"recurring,omitempty"`
	}{r.N, findings, r.Recurring})
	WriteFileAtomic(e.path(e.roundDir(fmt.Sprintf("round-%d", r.N)), "round.json"), e.red.Bytes(append(data, '\n')))
	c, m, n := sevCounts(findings)
	open := atOrAbove(findings, bar)
	msg := fmt.Sprintf("round %d: %d critical, %d major, %d minor; %d at or above the bar (%s)", r.N, c, m, n, len(open), bar)
	if len(r.Recurring) > 0 {
		var rec []string
		for _, x := range r.Recurring {
			rec = append(rec, fmt.Sprintf("%s (round %d %s)", x.ID, x.Round, x.Of))
		}
		msg += "; RECURRING: " + strings.Join(rec, ", ")
	}
	e.emit(record.Event{Event: record.Review, Kind: "findings", Message: msg, Data: data, File: outRel})
	for _, x := range r.Recurring {
		e.emit(record.Event{Event: record.Review, Kind: "recurring", Task: x.ID,
			Message: fmt.Sprintf("%s came back: same kind and place as round %d's %s; the next fixer is told to change the approach", x.ID, x.Round, x.Of)})
	}
	if len(open) == 0 {
		r.Status = "clean"
		rs.EndedBy = "clean"
		rs.Step = reviewFinal
		e.writeReviewReport(rs, "")
		return nil
	}
	if prev := rs.lastValid(r.N); prev != nil && prev.N == r.N-1 && sameSet(atOrAbove(prev.Findings, bar), open) {
		r.Status = "same_set"
		rs.EndedBy = "same_set"
		rs.Open = open
		summary := fmt.Sprintf("the same set of findings came back in rounds %d and %d (%s): the fixes did not take; change the approach or fix by hand",
			prev.N, r.N, strings.Join(findingIDs(open), ", "))
		e.emit(record.Event{Event: record.Review, Kind: "same_set", Message: summary})
		e.st.Evidence = []string{fmt.Sprintf("review: round %d repeated round %d's findings", r.N, prev.N)}
		e.writeReviewReport(rs, ReasonNoProgress+": "+summary)
		e.st.Evidence = append(e.st.Evidence, "report: "+filepath.Join(loopdir.RecordsDir, loopdir.ReviewReportFile))
		return e.stop(ReasonNoProgress, summary)
	}
	r.Status = "reviewed"
	rs.Step = reviewFix
	e.writeReviewReport(rs, "")
	return nil
}

// reviewNext moves on after a failed round: the next round, or the end.
func (e *Engine) reviewNext(rs *ReviewState) error {
	if rs.Round < e.spec.Review.MaxRounds {
		rs.Round++
		rs.Step = reviewReview
		return nil
	}
	rs.EndedBy = "rounds"
	rs.Step = reviewFinal
	return nil
}

// reviewFixRound gives the fixer the findings at or above the bar, then runs
// the checks.
func (e *Engine) reviewFixRound(ctx context.Context, rs *ReviewState) error {
	bar := e.spec.Review.Bar
	e.st.Iterations = rs.Round
	r := rs.current()
	fix := atOrAbove(r.Findings, bar)
	var below []Finding
	for _, f := range r.Findings {
		if sevRank(f.Severity) < sevRank(bar) {
			below = append(below, f)
		}
	}
	if r.TreeBefore == "" {
		tree, err := snapshotTree(ctx, e.dir)
		if err != nil {
			return e.stop(ReasonBlocked, "cannot read the change: "+err.Error())
		}
		r.TreeBefore, r.HeadBefore = tree, gitHead(ctx, e.dir)
	}
	byID := map[string]Finding{}
	for _, f := range r.Findings {
		byID[f.ID] = f
	}
	files, _, err := e.protectedFiles()
	if err != nil {
		return e.stop(ReasonBlocked, "cannot list the protected files: "+err.Error())
	}
	prompt := e.fixerPrompt(fixerInput{Objective: e.reviewObjective(), Round: r.N, Bar: bar, Fix: fix, Below: below,
		Recurring: r.Recurring, ByID: byID, Requirements: e.spec.Review.Requirements, Evidence: rs.Evidence, ChecksPass: rs.ChecksPass,
		Protected: protectedNamed(files, r.Findings)})
	r.Sent = findingIDs(fix)
	rs.EvidenceFresh = false
	run, err := e.runAgent(ctx, "fixer", false, fmt.Sprintf("round-%d", r.N), prompt)
	if err != nil {
		return err
	}
	r.Changed = run.Changed
	r.HeadAfter = gitHead(ctx, e.dir)
	if tree, err := snapshotTree(ctx, e.dir); err == nil {
		r.TreeAfter = tree
	}
	r.Commits = commitSubjects(ctx, e.dir, r.HeadBefore, r.HeadAfter)
	if err := e.reviewRunChecks(ctx, rs, "review-fix"); err != nil {
		return err
	}
	if len(run.Tamper) > 0 {
		rs.Evidence = tamperNote(run.Tamper) + "\n" + rs.Evidence
	}
	r.ChecksPass = record.Bool(rs.ChecksPass)
	r.Status = "fixed"
	e.emit(record.Event{Event: record.Review, Kind: "fixed", FilesChanged: r.Changed,
		Message: fmt.Sprintf("round %d fixed %s: %s; checks %s", r.N, strings.Join(r.Sent, ", "), whatChanged(*r), passWord(rs.ChecksPass))})
	if rs.Round < e.spec.Review.MaxRounds {
		rs.Round++
		rs.Step = reviewReview
	} else {
		rs.Step = reviewFixCheck
	}
	e.writeReviewReport(rs, "")
	return nil
}

// protectedNamed are the protected files a fixer may reach for: those the
// findings name and the programs the checks run.
func protectedNamed(files []protFile, findings []Finding) []protFile {
	named := map[string]bool{}
	for _, f := range findings {
		named[normFile(f.File)] = true
	}
	var out []protFile
	for _, p := range files {
		if named[p.Path] || strings.HasPrefix(p.Rule, "gate program:") {
			out = append(out, p)
		}
	}
	return out
}

func parenList(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return " (" + strings.Join(l, ", ") + ")"
}

func passWord(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// whatChanged is a round's "what changed": its commit subjects, else the
// files the fixer changed.
func whatChanged(r ReviewRound) string {
	switch {
	case len(r.Commits) > 0:
		return strings.Join(r.Commits, "; ")
	case len(r.Changed) > 0:
		return "uncommitted: " + strings.Join(r.Changed, ", ")
	case r.Status == "fixed":
		return "nothing"
	}
	return ""
}

// reviewFixCheck is the fix-verification pass after the last round: a fresh
// reviewer re-reads only what was fixed and says closed or open for each.
func (e *Engine) reviewFixCheck(ctx context.Context, rs *ReviewState) error {
	e.st.Iterations = rs.Round
	r := rs.current()
	fixed := atOrAbove(r.Findings, e.spec.Review.Bar)
	fc := &FixCheck{Findings: fixed}
	var files []string
	for _, f := range fixed {
		if f.File != "" && f.File != "-" && !hasString(files, normFile(f.File)) {
			files = append(files, normFile(f.File))
		}
	}
	var diff string
	if r.TreeBefore != "" && r.TreeAfter != "" {
		d, err := gitDiff(ctx, e.dir, r.TreeBefore, r.TreeAfter, files)
		if err != nil && len(files) > 0 { // a path the reviewer named may not exist
			d, err = gitDiff(ctx, e.dir, r.TreeBefore, r.TreeAfter, nil)
		}
		if err == nil {
			diff = d
		}
	}
	outRel := filepath.Join(e.roundDir("fixcheck"), "verdicts.json")
	prompt := e.fixCheckPrompt(fixCheckInput{Objective: e.reviewObjective(), Findings: fixed, FixDiff: diff, Evidence: rs.Evidence, OutputFile: agentOutput(outRel)})
	var verdicts []Verdict
	ok, invalid, err := e.askReviewer(ctx, "fixcheck", prompt, outRel, func(b []byte) []string {
		v, errs := ParseVerdicts(b, fixed)
		verdicts = v
		return errs
	})
	if err != nil {
		return err
	}
	fc.Verdicts = verdicts
	if !ok {
		fc.Failed, fc.Invalid = true, invalid
	}
	rs.FixCheck = fc
	var closed, open []string
	for _, v := range verdicts {
		if v.Status == "closed" {
			closed = append(closed, v.ID)
		} else {
			open = append(open, v.ID)
		}
	}
	data, _ := json.Marshal(fc)
	msg := fmt.Sprintf("fix check: %d closed%s, %d open%s", len(closed), parenList(closed), len(open), parenList(open))
	if fc.Failed {
		msg = "fix check failed: the reviewer's output was invalid twice; every fixed finding stays open"
	}
	e.emit(record.Event{Event: record.Review, Kind: "fixcheck", Message: msg, Data: data})
	rs.EndedBy = "fixcheck"
	rs.Step = reviewFinal
	return nil
}

// reviewOpen is what is still open at the end of the review.
func (e *Engine) reviewOpen(rs *ReviewState) []Finding {
	bar := e.spec.Review.Bar
	switch rs.EndedBy {
	case "clean":
		return nil
	case "fixcheck":
		if rs.FixCheck == nil {
			return nil
		}
		if rs.FixCheck.Failed {
			return rs.FixCheck.Findings
		}
		var open []Finding
		for _, f := range rs.FixCheck.Findings {
			for _, v := range rs.FixCheck.Verdicts {
				if v.ID == f.ID && v.Status != "closed" {
					open = append(open, f)
				}
			}
		}
		return open
	}
	// The rounds ran out on a failed review: the last valid round's
	// findings were never verified as fixed.
	if prev := rs.lastValid(len(rs.Rounds) + 1); prev != nil {
		return atOrAbove(prev.Findings, bar)
	}
	return []Finding{{ID: "NO-REVIEW", Severity: "critical", File: "-", Kind: "no-review", Title: "no round produced a valid review"}}
}

// reviewFinal runs the final checks and ends the review with its exit code.
func (e *Engine) reviewFinal(ctx context.Context, rs *ReviewState) error {
	results := e.runChecks(ctx, "review-final", e.spec.GateChecks())
	if ctx.Err() != nil {
		return e.stop(ReasonInterrupted, "interrupted during the final checks")
	}
	e.applyBaseline(results)
	pass := allPass(results)
	signal := failureSignal(nil, results)
	rs.Open = e.reviewOpen(rs)
	var room *record.CleanRoom
	if pass && len(results) > 0 && len(rs.Open) == 0 {
		// DONE is decided in the clean room.
		var crs string
		if room, crs = e.judgeCleanRoom(ctx, "review-final", e.spec.GateChecks()); ctx.Err() != nil {
			return e.stop(ReasonInterrupted, "interrupted during the final checks' clean room")
		}
		if !room.Pass {
			pass, signal = false, crs
		}
	}
	if len(results) > 0 {
		e.emit(record.Event{Event: record.Verify, Gate: "review-final", Pass: record.Bool(pass), Checks: checksOf(results),
			FailureSignal: signal, Signature: sigIf(!pass, signal), CleanRoom: room})
	} else {
		e.addNotVerified("no verify checks: the change was judged by the reviewer alone")
	}
	rs.FinalChecks = evidence("final", results, nil)
	rs.Open = e.reviewOpen(rs)
	e.st.Evidence = append([]string{}, rs.FinalChecks...)
	rounds := len(rs.Rounds)
	var reason, summary string
	switch {
	case len(rs.Open) == 0 && pass:
		reason = ReasonDone
		how := fmt.Sprintf("round %d's review found none", rounds)
		if rs.EndedBy == "fixcheck" {
			how = "the fix check confirmed every fixed finding closed"
		}
		summary = fmt.Sprintf("no finding at or above the bar (%s) is open after %d round(s): %s; the checks pass", e.spec.Review.Bar, rounds, how)
	case len(rs.Open) == 0 && room != nil && !room.Pass:
		reason = ReasonBudget
		summary = "no finding at or above the bar is open and the final checks pass, but not in the clean room: " + oneLine(strings.SplitN(signal, "\n", 2)[0])
	case len(rs.Open) == 0:
		reason = ReasonBudget
		summary = fmt.Sprintf("no finding at or above the bar is open, but the final checks fail: %s", firstFailure(results))
	case len(rs.Open) == 1 && rs.Open[0].ID == "NO-REVIEW":
		reason = ReasonBudget
		summary = fmt.Sprintf("%d round(s) ran out without a valid review: the reviewer's output was invalid every time", rounds)
	default:
		reason = ReasonBudget
		summary = fmt.Sprintf("%d round(s) ran out with %d finding(s) at or above the bar (%s) open: %s",
			rounds, len(rs.Open), e.spec.Review.Bar, strings.Join(findingIDs(rs.Open), ", "))
		if !pass {
			summary += "; the final checks fail too"
		}
	}
	e.st.Evidence = append(e.st.Evidence, "review: "+summary, "report: "+filepath.Join(loopdir.RecordsDir, loopdir.ReviewReportFile))
	e.emit(record.Event{Event: record.Review, Kind: "end", Reason: reason, Message: summary})
	e.writeReviewReport(rs, reason+": "+summary)
	return e.stop(reason, summary)
}
