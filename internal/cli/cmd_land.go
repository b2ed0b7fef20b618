package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/gitops"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/rollback"
	"github.com/looprinter/looprinter/spec"
)

func init() { register(newLandCmd) }

func newLandCmd(io *IO) *cobra.Command {
	var file, mode, base string
	cmd := &cobra.Command{
		Use:   "land [NAME]",
		Short: "Bring a DONE loop's branch into its base branch after the gates pass on the merged tree",
		Long: `Land a loop that ended DONE on its own branch (git.branch or git.worktree):
merge the base branch and the loop's branch in a temporary worktree (or
rebase the branch onto the base), run every check of the loop file there,
and only when they all pass move the base branch (a fast-forward or a merge
commit), or open a pull request with the GitHub CLI (mode pr; the body is
the loop's final report).

A conflict or a failing check leaves the base branch untouched and the
branch as it was; land exits 4 (BLOCKED). Loops landing on one repository
go one at a time, each verified on top of the one before. Mode and base
come from git.land and git.base unless given here.`,
		Example: `  looprinter land fix-tests
  looprinter land fix-tests --mode pr --base main`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := resolveLoop(args, file)
			if err != nil {
				return err
			}
			l, err := loadLoop(e.LoopFile)
			if err != nil {
				return err
			}
			if mode != "" {
				l.Git.Land = mode
			}
			if base != "" {
				l.Git.Base = base
			}
			if l.Git.Base == "" && e.Worktree == "" && !e.Archived {
				l.Git.Base = e.Base // the branch the loop branched from
			}
			switch l.Git.Land {
			case "":
				l.Git.Land = "merge"
			case "merge", "rebase", "pr":
			default:
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--mode %q: want merge, rebase or pr", l.Git.Land)}
			}
			dir, branch := landSource(e, l)
			st, err := loop.LoadState(engineDirOf(e, l))
			if err != nil || st.Outcome != loop.ReasonDone && st.Phase != loop.PhaseDone {
				return &ExitError{Code: ExitBlocked, Err: fmt.Errorf("%s has not ended DONE: only a loop whose gates passed lands", l.Name)}
			}
			res, err := landLoop(cmd.Context(), l, engineDirOf(e, l), dir, branch, nil)
			if err != nil {
				return &ExitError{Code: ExitBlocked, Err: err}
			}
			printLand(io, l, res)
			if !res.Landed {
				return &ExitError{Code: ExitBlocked}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	cmd.Flags().StringVar(&mode, "mode", "", "merge, rebase or pr (default: git.land, else merge)")
	cmd.Flags().StringVar(&base, "base", "", "the branch to land on (default: git.base, else the branch checked out in the repository)")
	return cmd
}

// landSource is where a registered loop's records go and its branch.
func landSource(e ops.Entry, l *spec.Loop) (dir, branch string) {
	dir = runDir(e)
	branch = e.Branch
	if branch == "" {
		branch = gitops.CurrentBranch(engineDirOf(e, l))
	}
	return dir, branch
}

// engineDirOf is the folder the loop ran in (its engine folder is keyed on
// it): the worktree's, even once the worktree was removed.
func engineDirOf(e ops.Entry, l *spec.Loop) string {
	if e.Archived || e.Worktree != "" {
		return gitops.WorktreeRunDir(l, filepath.Join(ops.StateDir(), "worktrees", e.Key))
	}
	return runDir(e)
}

// landLoop lands a DONE loop: records go to recDir; engineDir names the
// engine's last commit. A landing that is blocked marks the loop BLOCKED.
func landLoop(ctx context.Context, l *spec.Loop, engineDir, recDir, branch string, out *loop.Outcome) (*gitops.LandResult, error) {
	start := time.Now()
	rec, err := loopdir.Dir(recDir).CreateRecords(fmt.Sprintf("%s-land-%d", start.UTC().Format("20060102T150405"), os.Getpid()), "land", start)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	// Check output and the report quote agents: secrets never leave.
	red := loop.Redactor(l)
	rec.SetRedactor(red)
	report := red.String(landReport(l, out, recDir))
	o := gitops.LandOptions{Mode: l.Git.Land, Base: l.Git.Base, Branch: branch, RunDir: engineDir, Report: report, Emit: func(ev record.Event) { rec.Write(ev) },
		Records: recDir}
	if l.Git.LandFix {
		o.Fix = func(ctx context.Context, dir, problem string) error { return landFix(ctx, l, dir, problem) }
	}
	if branch == "" {
		return nil, errors.New("the loop ran on no branch of its own (detached HEAD): nothing to land")
	}
	res, err := gitops.Land(ctx, l, o)
	if err != nil {
		return nil, err
	}
	// The landing is its own line beside the outcome: a `land` that moved
	// nothing never rewrites a DONE. (A landing the loop file asked for,
	// git.land, is part of the run: its run ends BLOCKED when it fails.)
	if st, err := loop.LoadState(engineDir); err == nil {
		switch {
		case res.Landed && res.PR != "":
			st.Landing = fmt.Sprintf("pull request %s opened on %s", res.PR, res.Base)
		case res.Landed:
			st.Landing = fmt.Sprintf("landed on %s (%.12s → %.12s)", res.Base, res.From, res.To)
		default:
			st.Landing = fmt.Sprintf("not landed on %s: %s", orDashStr(res.Base), res.Reason)
		}
		if res.Blocked && out != nil {
			st.Outcome, st.ExitCode = loop.ReasonBlocked, loop.ExitCodes[loop.ReasonBlocked]
			st.Summary = "DONE on its branch, but not landed: " + res.Reason
		}
		st.Save(engineDir)
		if recDir != engineDir {
			st.Save(recDir) // a finished worktree loop's archive, where status reads it
		}
	}
	return res, nil
}

func orDashStr(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// landReport is the pull request's body: the final report with its evidence.
func landReport(l *spec.Loop, out *loop.Outcome, dir string) string {
	if out == nil {
		st, err := loop.LoadState(dir)
		if err != nil {
			return "looprinter " + l.Name + ": " + l.Objective
		}
		out = &loop.Outcome{Reason: st.Outcome, ExitCode: st.ExitCode, Summary: st.Summary, Evidence: st.Evidence, NotVerified: st.NotVerified, State: st}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## looprinter %s: %s (exit %d)\n\n", l.Name, loop.Title(out.Reason), out.ExitCode)
	fmt.Fprintf(&b, "**Objective:** %s\n\n**Why:** %s\n\n", strings.TrimSpace(l.Objective), out.Summary)
	if out.State != nil {
		fmt.Fprintf(&b, "Cycle gate: %s, objective gate: %s; %s passed, %s, $%.2f.\n\n",
			out.State.CycleGate, out.State.ObjectiveGate, count(out.State.TasksPassed, "task"), count(out.State.Iterations, "build run"), out.State.CostUSD)
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "### %s\n\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
		b.WriteString("\n")
	}
	list("Evidence", out.Evidence)
	list("NOT VERIFIED", out.NotVerified)
	list("Kept off the branch", rollback.KeptLines(out.Kept))
	b.WriteString("The gates were run again on the branch merged into its base before this pull request was opened.\n")
	return b.String()
}

// landFix gives one agent run, in the merge worktree, to resolve what keeps
// a loop from landing: a one-attempt ralph loop whose verify checks are the
// loop's gates, confined like every agent run.
func landFix(ctx context.Context, l *spec.Loop, dir, problem string) error {
	c := *l
	c.Shape = spec.ShapeRalph
	// The fix loop's own file lives outside the merge worktree (it is not work).
	fdir, err := os.MkdirTemp("", "looprinter-land-fix-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(fdir)
	c.Dir, c.Path = dir, filepath.Join(fdir, "loop.yaml")
	if err := os.WriteFile(c.Path, []byte("# the land fix run of "+l.Name+"\n"), 0o600); err != nil {
		return err
	}
	c.Name = l.Name + "-land-fix"
	c.Objective = "Make this branch land on its base: " + problem + ". Resolve every conflict marker, keep both sides' behaviour, and make the checks pass."
	// No conflict marker may stay behind, whatever the checks say.
	c.Verify = append([]string{gitops.NoConflictMarkers}, l.GateChecks()...)
	c.ObjectiveVerify = nil
	c.Budget.Iterations, c.PostPhases, c.AllowPassing = 1, nil, false
	f := false
	c.Git.Commit = &f
	out, err := loop.Run(ctx, &c, loop.Options{Fresh: true})
	if err != nil {
		return err
	}
	if out.Reason != loop.ReasonDone {
		return fmt.Errorf("the fix run ended %s: %s", loop.Title(out.Reason), out.Summary)
	}
	return nil
}

func printLand(io *IO, l *spec.Loop, res *gitops.LandResult) {
	if res.Landed && res.PR != "" {
		fmt.Fprintf(io.Out, "%s: pull request opened: %s (the gates passed on the merged tree)\n", l.Name, res.PR)
		return
	}
	if res.Landed {
		fmt.Fprintf(io.Out, "%s: landed on %s (%.12s → %.12s); the gates passed on the merged tree\n", l.Name, res.Base, res.From, res.To)
		return
	}
	fmt.Fprintf(io.Out, "%s: not landed: %s\n", l.Name, res.Reason)
}
