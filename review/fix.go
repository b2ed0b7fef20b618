package review

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/textcut"
)

// reviewFixRound gives the fixer the findings at or above the bar, then runs
// the checks.
func (s *Shape) reviewFixRound(ctx context.Context, rs *State) error {
	bar := s.spec().Review.Bar
	s.h.SetIterations(rs.Round)
	r := rs.current()
	fix := AtOrAbove(r.Findings, bar)
	var below []Finding
	for _, f := range r.Findings {
		if sevRank(f.Severity) < sevRank(bar) {
			below = append(below, f)
		}
	}
	if r.TreeBefore == "" {
		tree, err := safegit.SnapshotTree(ctx, s.dir)
		if err != nil {
			return s.h.Stop(ReasonBlocked, "cannot read the change: "+err.Error())
		}
		r.TreeBefore, r.HeadBefore = tree, safegit.Head(ctx, s.dir)
	}
	byID := map[string]Finding{}
	for _, f := range r.Findings {
		byID[f.ID] = f
	}
	files, err := s.h.ProtectedFiles()
	if err != nil {
		return s.h.Stop(ReasonBlocked, "cannot list the protected files: "+err.Error())
	}
	prompt := s.fixerPrompt(fixerInput{Objective: s.reviewObjective(), Round: r.N, Bar: bar, Fix: fix, Below: below,
		Recurring: r.Recurring, ByID: byID, Requirements: s.spec().Review.Requirements, Evidence: rs.Evidence, ChecksPass: rs.ChecksPass,
		Protected: protectedNamed(files, r.Findings)})
	r.Sent = findingIDs(fix)
	rs.EvidenceFresh = false
	run, err := s.h.RunAgent(ctx, "fixer", fmt.Sprintf("round-%d", r.N), prompt)
	if err != nil {
		return err
	}
	r.Changed = run.Changed
	r.HeadAfter = safegit.Head(ctx, s.dir)
	if tree, err := safegit.SnapshotTree(ctx, s.dir); err == nil {
		r.TreeAfter = tree
	}
	r.Commits = commitSubjects(ctx, s.dir, r.HeadBefore, r.HeadAfter)
	if err := s.reviewRunChecks(ctx, rs, "review-fix"); err != nil {
		return err
	}
	if run.TamperNote != "" {
		rs.Evidence = run.TamperNote + "\n" + rs.Evidence
	}
	r.ChecksPass = record.Bool(rs.ChecksPass)
	r.Status = "fixed"
	s.h.Emit(record.Event{Event: record.Review, Kind: "fixed", FilesChanged: r.Changed,
		Message: fmt.Sprintf("round %d fixed %s: %s; checks %s", r.N, strings.Join(r.Sent, ", "), whatChanged(*r), passWord(rs.ChecksPass))})
	if rs.Round < s.spec().Review.MaxRounds {
		rs.Round++
		rs.Step = reviewReview
	} else {
		rs.Step = reviewFixCheck
	}
	s.writeReviewReport(rs, "")
	return nil
}

// protectedNamed are the protected files a fixer may reach for: those the
// findings name and the programs the checks run.
func protectedNamed(files []ProtectedFile, findings []Finding) []ProtectedFile {
	named := map[string]bool{}
	for _, f := range findings {
		named[normFile(f.File)] = true
	}
	var out []ProtectedFile
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
func whatChanged(r Round) string {
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
func (s *Shape) reviewFixCheck(ctx context.Context, rs *State) error {
	s.h.SetIterations(rs.Round)
	r := rs.current()
	fixed := AtOrAbove(r.Findings, s.spec().Review.Bar)
	fc := &FixCheck{Findings: fixed}
	var files []string
	for _, f := range fixed {
		if f.File != "" && f.File != "-" && !hasString(files, normFile(f.File)) {
			files = append(files, normFile(f.File))
		}
	}
	var diff string
	if r.TreeBefore != "" && r.TreeAfter != "" {
		d, err := gitDiff(ctx, s.dir, r.TreeBefore, r.TreeAfter, files)
		if err != nil && len(files) > 0 { // a path the reviewer named may not exist
			d, err = gitDiff(ctx, s.dir, r.TreeBefore, r.TreeAfter, nil)
		}
		if err == nil {
			diff = d
		}
	}
	outRel := filepath.Join(s.roundDir("fixcheck"), "verdicts.json")
	prompt := s.fixCheckPrompt(fixCheckInput{Objective: s.reviewObjective(), Findings: fixed, FixDiff: diff, Evidence: rs.Evidence, OutputFile: AgentOutput(outRel)})
	var verdicts []Verdict
	ok, invalid, err := s.askReviewer(ctx, "fixcheck", prompt, outRel, func(b []byte) []string {
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
	s.h.Emit(record.Event{Event: record.Review, Kind: "fixcheck", Message: msg, Data: data})
	rs.EndedBy = "fixcheck"
	rs.Step = reviewFinal
	return nil
}

// reviewOpen is what is still open at the end of the review.
func (s *Shape) reviewOpen(rs *State) []Finding {
	bar := s.spec().Review.Bar
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
		return AtOrAbove(prev.Findings, bar)
	}
	return []Finding{{ID: "NO-REVIEW", Severity: "critical", File: "-", Kind: "no-review", Title: "no round produced a valid review"}}
}

// reviewFinal runs the final checks and ends the review with its exit code.
func (s *Shape) reviewFinal(ctx context.Context, rs *State) error {
	c := s.h.RunChecks(ctx, "review-final")
	if ctx.Err() != nil {
		return s.h.Stop(ReasonInterrupted, "interrupted during the final checks")
	}
	results := c.Results
	pass := c.Pass
	signal := c.Signal
	rs.Open = s.reviewOpen(rs)
	var room *record.CleanRoom
	if pass && len(results) > 0 && len(rs.Open) == 0 {
		// DONE is decided in the clean room.
		var crs string
		if room, crs = s.h.CleanRoom(ctx, "review-final"); ctx.Err() != nil {
			return s.h.Stop(ReasonInterrupted, "interrupted during the final checks' clean room")
		}
		if !room.Pass {
			pass, signal = false, crs
		}
	}
	var strengthLine, weak string
	if pass && room != nil && room.Pass {
		// The fixer's lines, mutated: do the final checks catch them?
		var hold bool
		strengthLine, hold, weak = s.h.Strength(ctx, rs.BaseSHA)
		if ctx.Err() != nil {
			return s.h.Stop(ReasonInterrupted, "interrupted during the verify_strength pass")
		}
		if hold {
			weak = ""
		}
	}
	if len(results) > 0 {
		s.h.Emit(record.Event{Event: record.Verify, Gate: "review-final", Pass: record.Bool(pass), Checks: results,
			FailureSignal: signal, Signature: s.sigIf(!pass, signal), CleanRoom: room})
	} else {
		s.h.NotVerified("no verify checks: the change was judged by the reviewer alone")
	}
	rs.FinalChecks = c.Evidence
	if strengthLine != "" {
		rs.FinalChecks = append(append([]string{}, c.Evidence...), strengthLine)
	}
	rs.Open = s.reviewOpen(rs)
	ev := append([]string{}, rs.FinalChecks...)
	rounds := len(rs.Rounds)
	var reason, summary string
	switch {
	case len(rs.Open) == 0 && pass && weak != "":
		reason = ReasonNotVerified
		summary = fmt.Sprintf("no finding at or above the bar (%s) is open after %d round(s) and the checks pass, but %s", s.spec().Review.Bar, rounds, weak)
	case len(rs.Open) == 0 && pass:
		reason = ReasonDone
		how := fmt.Sprintf("round %d's review found none", rounds)
		if rs.EndedBy == "fixcheck" {
			how = "the fix check confirmed every fixed finding closed"
		}
		summary = fmt.Sprintf("no finding at or above the bar (%s) is open after %d round(s): %s; the checks pass", s.spec().Review.Bar, rounds, how)
	case len(rs.Open) == 0 && room != nil && !room.Pass:
		reason = ReasonBudget
		summary = "no finding at or above the bar is open and the final checks pass, but not in the clean room: " + textcut.LastLine(strings.SplitN(signal, "\n", 2)[0])
	case len(rs.Open) == 0:
		reason = ReasonBudget
		summary = fmt.Sprintf("no finding at or above the bar is open, but the final checks fail: %s", c.FirstFailure)
	case len(rs.Open) == 1 && rs.Open[0].ID == "NO-REVIEW":
		reason = ReasonBudget
		summary = fmt.Sprintf("%d round(s) ran out without a valid review: the reviewer's output was invalid every time", rounds)
	default:
		reason = ReasonBudget
		summary = fmt.Sprintf("%d round(s) ran out with %d finding(s) at or above the bar (%s) open: %s",
			rounds, len(rs.Open), s.spec().Review.Bar, strings.Join(findingIDs(rs.Open), ", "))
		if !pass {
			summary += "; the final checks fail too"
		}
	}
	s.h.SetEvidence(append(ev, "review: "+summary, "report: "+filepath.Join(loopdir.RecordsDir, loopdir.ReviewReportFile)))
	s.h.Emit(record.Event{Event: record.Review, Kind: "end", Reason: reason, Message: summary})
	s.writeReviewReport(rs, reason+": "+summary)
	return s.h.Stop(reason, summary)
}
