package review

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/textcut"
)

// Row is one line of the review table.
type Row struct {
	Round     string
	C, M, N   int
	Changed   string
	Recurring string
	Open      string
}

// Rows is the table of a review: one row per round, and the fix check.
func Rows(rs *State, bar string) []Row {
	if rs == nil {
		return nil
	}
	var rows []Row
	for i, r := range rs.Rounds {
		row := Row{Round: fmt.Sprint(r.N), Changed: whatChanged(r)}
		row.C, row.M, row.N = sevCounts(r.Findings)
		var rec []string
		for _, x := range r.Recurring {
			rec = append(rec, fmt.Sprintf("%s (← r%d %s)", x.ID, x.Round, x.Of))
		}
		row.Recurring = strings.Join(rec, ", ")
		row.Open = stillOpen(rs, i, bar)
		if r.Status == "failed" {
			row.Changed = "review failed: invalid output twice"
		}
		rows = append(rows, row)
	}
	if fc := rs.FixCheck; fc != nil {
		row := Row{Round: "fix check"}
		row.C, row.M, row.N = sevCounts(fc.Findings)
		var closed []string
		for _, v := range fc.Verdicts {
			if v.Status == "closed" {
				closed = append(closed, v.ID)
			}
		}
		if len(closed) > 0 {
			row.Changed = "confirmed closed: " + strings.Join(closed, ", ")
		}
		row.Open = stillOpen(rs, len(rs.Rounds), bar)
		rows = append(rows, row)
	}
	return rows
}

// stillOpen says which findings of round i (or, with i == len(Rounds), of
// the fix check) were still open afterwards.
func stillOpen(rs *State, i int, bar string) string {
	list := func(fs []string) string {
		if len(fs) == 0 {
			return "none"
		}
		return strings.Join(fs, ", ")
	}
	if i == len(rs.Rounds) {
		fc := rs.FixCheck
		if fc.Failed {
			return list(findingIDs(fc.Findings)) + " (fix check invalid)"
		}
		var open []string
		for _, v := range fc.Verdicts {
			if v.Status != "closed" {
				open = append(open, v.ID)
			}
		}
		return list(open)
	}
	r := rs.Rounds[i]
	switch r.Status {
	case "failed":
		return "not reviewed"
	case "clean":
		return "none"
	case "same_set":
		return list(findingIDs(AtOrAbove(r.Findings, bar)))
	case "reviewing", "reviewed":
		return list(findingIDs(AtOrAbove(r.Findings, bar))) + " (to fix)"
	}
	// fixed: the next valid review says what came back.
	for j := i + 1; j < len(rs.Rounds); j++ {
		next := rs.Rounds[j]
		if next.Status == "failed" || next.Status == "reviewing" {
			continue
		}
		var open []string
		for _, f := range AtOrAbove(r.Findings, bar) {
			for _, g := range AtOrAbove(next.Findings, bar) {
				if recurs(f, g) || findingKey(f) == findingKey(g) {
					open = append(open, f.ID)
					break
				}
			}
		}
		return list(open)
	}
	if i == len(rs.Rounds)-1 && rs.FixCheck != nil {
		return "see fix check"
	}
	return "pending"
}

// Table renders the table for a terminal.
func Table(rs *State, bar string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tC\tM\tm\tWHAT CHANGED\tRECURRING\tSTILL OPEN")
	for _, r := range Rows(rs, bar) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Round, r.C, r.M, r.N, dash(textcut.Cut(r.Changed, 70)), dash(r.Recurring), dash(r.Open))
	}
	tw.Flush()
	return b.String()
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "–"
	}
	return s
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(dash(s), "|", `\|`), "\n", " ")
}

// writeReviewReport writes working-records/review-report.md; outcome is
// empty while the review goes on.
func (s *Shape) writeReviewReport(rs *State, outcome string) {
	bar := s.spec().Review.Bar
	var b strings.Builder
	fmt.Fprintf(&b, "# Review report: %s\n\n", s.spec().Name)
	fmt.Fprintf(&b, "- Key objective: %s\n", s.reviewObjective())
	fmt.Fprintf(&b, "- Change: `git diff %s` (%s) in %s\n", rs.Base, textcut.SHA(rs.BaseSHA), s.dir)
	roles := fmt.Sprintf("reviewer %s · fixer %s", rs.Reviewer, rs.Fixer)
	if rs.Writer != "" {
		roles = "writer " + rs.Writer + " · " + roles
	}
	fmt.Fprintf(&b, "- Roles: %s\n", roles)
	fmt.Fprintf(&b, "- Bar: %s · rounds: %d of %d · cost so far: $%.2f\n", bar, len(rs.Rounds), s.spec().Review.MaxRounds, s.h.CostUSD())
	if outcome == "" {
		outcome = "in progress (step " + rs.Step + ")"
	}
	fmt.Fprintf(&b, "- Outcome: %s\n- Updated: %s\n\n", outcome, time.Now().UTC().Format(time.RFC3339))
	b.WriteString("| Round | C | M | m | What changed | Recurring | Still open |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range Rows(rs, bar) {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %s |\n", r.Round, r.C, r.M, r.N, mdCell(r.Changed), mdCell(r.Recurring), mdCell(r.Open))
	}
	b.WriteString("\nC = critical, M = major, m = minor: the findings of that round's review (CHECKS is looprinter's own finding when the checks fail). " +
		"What changed: the subjects of the commits the fixer made in that round (or the files it changed without committing). " +
		"Recurring: findings of the same kind in the same place as a finding an earlier round fixed; the next fixer was told to change its approach. " +
		"Still open: that round's findings at or above the bar that the next review found again, or that the fix check found open.\n")
	for _, r := range rs.Rounds {
		fmt.Fprintf(&b, "\n## Round %d (%s)\n\n", r.N, r.Status)
		if r.Status == "failed" {
			b.WriteString("The reviewer's output was invalid twice; the round failed:\n")
			for _, er := range r.Invalid {
				fmt.Fprintf(&b, "- %s\n", er)
			}
			continue
		}
		fmt.Fprintf(&b, "Findings: `%s`\n\n", filepath.Join(s.roundDir(fmt.Sprintf("round-%d", r.N)), "findings.json"))
		if len(r.Findings) == 0 {
			b.WriteString("No findings.\n")
		}
		for _, f := range r.Findings {
			mark := ""
			if sevRank(f.Severity) < sevRank(bar) {
				mark = " (below the bar)"
			}
			for _, x := range r.Recurring {
				if x.ID == f.ID {
					mark += fmt.Sprintf(" **RECURRING** (round %d %s)", x.Round, x.Of)
				}
			}
			fmt.Fprintf(&b, "- **%s** %s · `%s` · %s: %s%s\n", f.ID, f.Severity, f.Place(), f.Kind, f.Title, mark)
		}
		if r.Status == "fixed" {
			fmt.Fprintf(&b, "\nFixed: %s. What changed: %s. Checks after the fix: %s.\n", strings.Join(r.Sent, ", "), dash(whatChanged(r)), passWord(r.ChecksPass != nil && *r.ChecksPass))
		}
	}
	if fc := rs.FixCheck; fc != nil {
		b.WriteString("\n## Fix check\n\n")
		if fc.Failed {
			b.WriteString("The reviewer's output was invalid twice; every fixed finding stays open:\n")
			for _, er := range fc.Invalid {
				fmt.Fprintf(&b, "- %s\n", er)
			}
		}
		for _, v := range fc.Verdicts {
			fmt.Fprintf(&b, "- %s: **%s** — %s\n", v.ID, v.Status, v.Detail)
		}
	}
	if rs.Step == reviewFinal || rs.EndedBy != "" {
		b.WriteString("\n## Still open\n\n")
		if len(rs.Open) == 0 {
			b.WriteString("None at or above the bar.\n")
		}
		for _, f := range rs.Open {
			fmt.Fprintf(&b, "- **%s** %s · `%s` · %s: %s\n", f.ID, f.Severity, f.Place(), f.Kind, f.Title)
		}
	}
	if len(rs.FinalChecks) > 0 {
		b.WriteString("\n## Final checks\n\n")
		for _, c := range rs.FinalChecks {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	guard.WriteFileAtomic(loopdir.Dir(s.dir).ReviewReport(), []byte(s.h.Redactor().String(b.String())))
}
