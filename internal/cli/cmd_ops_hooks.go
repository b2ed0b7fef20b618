package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/internal/gitops"
	"github.com/looprinter/looprinter/internal/notify"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// Every run (foreground, background, scheduled) is registered so `list`
// and `status` know it, runs on its git branch or in its worktree, commits
// its work and sends its notifications.
func init() {
	prepareRun = prepareOps
	runHooks = opsHooks
}

// extraHooks are added to the next run's hooks (the scheduler's record of
// a firing).
var extraHooks []loop.Hook

func opsHooks(l *spec.Loop) []loop.Hook {
	var hooks []loop.Hook
	if c := gitops.NewCommitter(l); c != nil {
		hooks = append(hooks, c.Hook())
	}
	if n := notify.New(l); n != nil {
		hooks = append(hooks, n.Hook())
	}
	return append(hooks, extraHooks...)
}

// prepareOps registers the loop and readies its git branch or worktree.
// With git.worktree the loop runs in a worktree of its own under the state
// directory, on its branch; once the loop is DONE the worktree is removed
// (the branch keeps the work) and its records are archived.
func prepareOps(io *IO, l *spec.Loop) (*spec.Loop, func(*loop.Outcome), error) {
	key := ops.KeyFor(l.Name, l.Path)
	run := l
	var wt *gitops.Worktree
	from := "" // the branch checked out before git.branch switched
	switch {
	case l.Git.Worktree && !gitops.IsLinkedWorktree(l.Dir):
		w, err := gitops.PrepareWorktree(l, filepath.Join(ops.StateDir(), "worktrees", key))
		if err != nil {
			return nil, nil, &ExitError{Code: ExitBlocked, Err: err}
		}
		wt = w
		c := *l
		c.Path, c.Dir = w.RunFile, w.RunDir
		run = &c
		fmt.Fprintf(io.Err, "looprinter: %s runs in its worktree %s on branch %s\n", l.Name, w.Root, w.Branch)
	case l.Git.Branch != "" && !l.Git.Worktree:
		if gitops.TopLevel(l.Dir) == "" {
			return nil, nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("git.branch: %s is not in a git repository", l.Dir)}
		}
		from = gitops.CurrentBranch(l.Dir)
		if err := gitops.CheckoutBranch(l.Dir, l.Git.Branch); err != nil {
			return nil, nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("git.branch: %w", err)}
		}
	}
	def := ops.Entry{Key: key, Name: l.Name, LoopFile: l.Path, Dir: l.Dir}
	entry, err := ops.Update(def, func(e *ops.Entry) {
		e.Name, e.LoopFile, e.Dir = l.Name, l.Path, l.Dir
		e.RunDir, e.RunFile, e.Archived = run.Dir, run.Path, false
		e.Worktree, e.Branch = "", l.Git.Branch
		if from != "" && from != l.Git.Branch {
			e.Base = from // the branch the loop branched from (a resumed run is on its own already)
		}
		if wt != nil {
			e.Worktree, e.Branch = wt.Root, wt.Branch
		}
		if e.LauncherPID != 0 && e.LauncherPID != os.Getpid() && !ops.Alive(e.LauncherPID) {
			e.LauncherPID = 0
		}
	})
	if err != nil && os.Getenv("LOOPRINTER_DEBUG") != "" {
		fmt.Fprintf(io.Err, "looprinter: could not register the loop in %s: %v\n", ops.StateDir(), err)
	}
	after := func(out *loop.Outcome) {
		if out != nil && out.Reason == loop.ReasonDone && l.Git.Land != "" && (wt != nil || l.Git.Branch != "") {
			lc := *l
			if lc.Git.Base == "" && wt == nil {
				lc.Git.Base = entry.Base // read before the loop switched to its branch
			}
			if !landAfterRun(io, &lc, run, wt, out) {
				return // not landed: the worktree stays for a look
			}
		}
		if wt == nil || out == nil || out.Reason != loop.ReasonDone {
			return
		}
		archive := filepath.Join(ops.StateDir(), "archive", key)
		err := gitops.CleanupWorktree(wt, archive, func() {
			ops.Update(entry, func(e *ops.Entry) {
				e.RunDir, e.RunFile, e.Worktree, e.Archived = archive, filepath.Join(archive, filepath.Base(wt.RunFile)), "", true
			})
		})
		if err != nil {
			fmt.Fprintf(io.Err, "looprinter: the worktree was kept: %v\n", err)
			return
		}
		if out.Records != "" {
			out.Records = loopdir.Dir(archive).InRecords(filepath.Base(out.Records))
		}
		fmt.Fprintf(io.Err, "looprinter: %s is DONE; its worktree was removed, the work is on branch %s, the records are in %s\n", l.Name, wt.Branch, archive)
	}
	return run, after, nil
}

// landAfterRun lands a loop that just ended DONE (git.land); a landing that
// is blocked turns the outcome BLOCKED. It says whether the loop landed.
func landAfterRun(io *IO, l, run *spec.Loop, wt *gitops.Worktree, out *loop.Outcome) bool {
	branch := l.Git.Branch
	if wt != nil {
		branch = wt.Branch
	}
	res, err := landLoop(context.Background(), l, run.Dir, run.Dir, branch, out)
	if err == nil && res.Landed {
		printLand(io, l, res)
		return true
	}
	why := ""
	if err != nil {
		why = err.Error()
	} else {
		why = res.Reason
	}
	out.Reason, out.ExitCode = loop.ReasonBlocked, loop.ExitCodes[loop.ReasonBlocked]
	out.Summary = "DONE on its branch, but not landed: " + why
	out.Next = []string{"the base branch is untouched and the work is on " + branch + "; resolve it, then `looprinter land " + l.Name + "`"}
	return false
}
