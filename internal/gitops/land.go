package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Landing. A loop that ended DONE on its own branch is brought into its base
// branch only after every gate passed again on the merged tree, in a
// temporary worktree: base and branch merged (or the branch rebased onto the
// base), the checks of the user's loop file run there, and only then is the
// base moved (a fast-forward, or the merge commit) or a pull request opened.
// A conflict or a failing gate leaves the base untouched and the branch as
// it was. Loops landing on one repository go one at a time (a lock in the
// repository's git folder): each is merged onto the base as the previous
// one left it, and verified there.
//
// What lands is the engine's own last commit of the loop, read from its
// private folder: a branch an agent moved past it (a commit of its own, a
// reset) is not landed.

// NoConflictMarkers is a check that fails while a tracked file of the
// folder holds a conflict marker.
const NoConflictMarkers = "! git grep -n -I -e '^<<<<<<< ' -e '^>>>>>>> ' -- ."

// LandOptions say how to land.
type LandOptions struct {
	Mode   string // merge, rebase or pr
	Base   string // the branch to land on; "" → the repository's checked-out branch
	Branch string // the loop's branch
	// RunDir is where the loop ran (its engine folder names its last commit).
	RunDir string
	// Report is the body of the pull request (the final report).
	Report string
	// Emit writes a record (verify on the merged tree, land).
	Emit func(record.Event)
	// Records is the loop folder whose records the landing writes to: the
	// gates' outputs on the merged tree are kept in its checks folder, and
	// their records name them relative to it (the merge worktree is
	// removed after landing, a loop's worktree once it is DONE, but its
	// records are archived whole). "" → a temporary folder, removed.
	Records string
	// Fix, when set, is given one chance to resolve a conflict or a failing
	// gate in the merge worktree (git.land_fix); the gates then run again.
	Fix func(ctx context.Context, dir, problem string) error
}

// LandResult is how a landing ended.
type LandResult struct {
	Landed  bool
	Base    string // the base branch
	From    string // the base's commit before
	To      string // the base's commit after (or the merged commit a PR was checked on)
	Reason  string // why not, when not landed
	PR      string // the pull request's address (mode pr)
	Checks  []judge.CheckResult
	Blocked bool // a conflict or a failing gate: the loop ends BLOCKED
}

// Land lands loop l (as the user wrote it: its checks are the gates run on
// the merged tree).
func Land(ctx context.Context, l *spec.Loop, o LandOptions) (*LandResult, error) {
	emit := o.Emit
	if emit == nil {
		emit = func(record.Event) {}
	}
	mode := o.Mode
	if mode == "" {
		mode = "merge"
	}
	top := TopLevel(o.RunDir)
	if top == "" {
		// A worktree loop's worktree is removed once it is DONE: the
		// repository is the loop file's.
		top = TopLevel(l.Dir)
	}
	if top == "" {
		return nil, fmt.Errorf("land: %s is not in a git repository", o.RunDir)
	}
	unlock, err := landLock(top)
	if err != nil {
		return nil, err
	}
	defer unlock()

	res := &LandResult{Base: o.Base}
	block := func(why string) (*LandResult, error) {
		res.Reason, res.Blocked = why, true
		emit(record.Event{Event: record.Land, Kind: mode, Pass: record.Bool(false), From: o.Branch, To: res.Base, Message: why})
		return res, nil
	}
	if res.Base == "" {
		res.Base = baseBranch(top)
	}
	if res.Base == "" {
		return block("no base branch: set git.base")
	}
	if res.Base == o.Branch {
		return block(fmt.Sprintf("the loop ran on %s itself: nothing to land; name the branch to land on with --base BRANCH (or git.base in the loop file)", res.Base))
	}
	// The engine's last commit, and the branch still there.
	data, _ := os.ReadFile(loopdir.PrivateOf(o.RunDir).LastCommit())
	tip := strings.TrimSpace(string(data))
	if tip == "" {
		return block("the engine made no commit for this loop: nothing to land")
	}
	cur, err := Git(top, "rev-parse", "--verify", "-q", "refs/heads/"+o.Branch)
	if err != nil {
		return block(fmt.Sprintf("the loop's branch %s is gone", o.Branch))
	}
	if cur != tip {
		return block(fmt.Sprintf("the branch %s is at %.12s, not at the engine's last commit %.12s: it was moved outside the engine, so it is not the work the engine judged", o.Branch, cur, tip))
	}
	baseOld, err := Git(top, "rev-parse", "--verify", "-q", "refs/heads/"+res.Base)
	if err != nil {
		return block(fmt.Sprintf("the base branch %s does not exist", res.Base))
	}
	res.From = baseOld

	// The merged tree, in a worktree of its own.
	tmp, err := os.MkdirTemp(filepath.Join(gitCommonDir(top)), "looprinter-land-")
	if err != nil {
		return nil, err
	}
	os.Remove(tmp)
	start := baseOld
	if mode == "rebase" {
		start = tip
	}
	if _, err := Git(top, "worktree", "add", "-q", "--detach", tmp, start); err != nil {
		return nil, err
	}
	defer func() {
		Git(top, "worktree", "remove", "--force", tmp)
		Git(top, "worktree", "prune")
	}()
	ident := []string{"-c", "user.name=looprinter", "-c", "user.email=looprinter@localhost"}
	if out, _ := Git(top, "config", "user.email"); out != "" {
		ident = nil
	}
	merge := func() error {
		var err error
		switch mode {
		case "rebase":
			_, err = Git(tmp, append(ident, "rebase", "-q", baseOld)...)
			if err != nil {
				Git(tmp, "rebase", "--abort")
			}
		default:
			if _, e := Git(top, "merge-base", "--is-ancestor", baseOld, tip); e == nil {
				_, err = Git(tmp, "merge", "-q", "--ff-only", tip)
			} else {
				_, err = Git(tmp, append(ident, "merge", "-q", "--no-ff", "-m", fmt.Sprintf("looprinter %s: land %s into %s", l.Name, o.Branch, res.Base), tip)...)
			}
		}
		return err
	}
	rel, _ := filepath.Rel(realPath(top), realPath(l.Dir))
	if o.RunDir != "" && strings.HasPrefix(rel, "..") {
		rel, _ = filepath.Rel(realPath(top), realPath(o.RunDir))
	}
	// The paths the loop's branch changed since it left the base: only
	// runner files among them are the loop's to set aside; a test that
	// reached the base meanwhile is the user's, and runs.
	fromBranch := func(string) bool { return true }
	if mb, err := Git(top, "merge-base", baseOld, tip); err == nil {
		if out, err := gitIn(top, "", "diff", "--name-only", "-z", "--no-renames", mb, tip); err == nil {
			changed := map[string]bool{}
			for _, p := range strings.Split(out, "\x00") {
				if p == "" {
					continue
				}
				if r, ok := strings.CutPrefix(p, filepath.ToSlash(rel)+"/"); ok || rel == "." || rel == "" {
					if rel == "." || rel == "" {
						r = p
					}
					changed[r] = true
				}
			}
			fromBranch = func(p string) bool { return changed[p] }
		}
	}
	gateRuns := 0
	gateErr := "" // why the gates could not run as in the clean room
	gates := func() ([]judge.CheckResult, bool) {
		gateErr = ""
		c := *l
		c.Dir = filepath.Join(tmp, rel)
		c.Path = filepath.Join(c.Dir, filepath.Base(l.Path))
		var rs []judge.CheckResult
		if o.Records != "" {
			gateRuns++
			prefix := fmt.Sprintf("%s-land-%d", time.Now().UTC().Format("20060102T150405.000"), gateRuns)
			runDir := o.RunDir
			if runDir == "" {
				runDir = l.Dir
			}
			var aside []string
			var err error
			rs, aside, err = loop.LandChecksTo(ctx, &c, runDir, loopdir.Dir(o.Records).Checks(), prefix, fromBranch)
			if err != nil {
				gateErr = err.Error()
				emit(record.Event{Event: record.Verify, Gate: "land", Pass: record.Bool(false), Error: gateErr,
					Message: fmt.Sprintf("the gates on %s merged into %s (%s)", o.Branch, res.Base, mode)})
				return nil, false
			}
			if len(aside) > 0 {
				emit(record.Event{Event: record.Warning, Kind: "land_set_aside", Message: fmt.Sprintf("the gates on the merged tree ran as in the clean room: %d runner file(s) the loop did not start with were set aside (%s)", len(aside), strings.Join(aside[:min(len(aside), 5)], ", "))})
			}
			for i := range rs {
				if r, err := filepath.Rel(o.Records, rs[i].Output); err == nil {
					rs[i].Output = r
				}
			}
		} else {
			rs = loop.ProbeChecks(ctx, &c)
		}
		ok := len(rs) == len(c.GateChecks())
		var checks []record.Check
		for _, r := range rs {
			ok = ok && r.Pass
			checks = append(checks, r.Check)
		}
		emit(record.Event{Event: record.Verify, Gate: "land", Pass: record.Bool(ok), Checks: checks,
			Message: fmt.Sprintf("the gates on %s merged into %s (%s)", o.Branch, res.Base, mode)})
		return rs, ok
	}
	problem, conflict := "", false
	if err := merge(); err != nil {
		Git(tmp, "merge", "--abort")
		problem, conflict = fmt.Sprintf("merging %s into %s conflicts: %s", o.Branch, res.Base, strings.ReplaceAll(err.Error(), "\n", "; ")), true
	} else if rs, ok := gates(); !ok {
		res.Checks = rs
		problem = fmt.Sprintf("a gate fails on %s merged into %s: %s", o.Branch, res.Base, failing(rs))
		if gateErr != "" {
			problem = fmt.Sprintf("the gates on %s merged into %s did not run: %s", o.Branch, res.Base, gateErr)
		}
	} else {
		res.Checks = rs
	}
	if problem != "" && o.Fix != nil && !(conflict && mode == "rebase") {
		// One agent run to resolve it, in the merge worktree; then the gates
		// again. (A rebase that conflicts is not resolved by an agent: land
		// with merge for that.)
		if conflict {
			Git(tmp, append(ident, "merge", "-q", "--no-commit", "--no-ff", tip)...) // the conflict, for the agent to resolve
		}
		if err := o.Fix(ctx, filepath.Join(tmp, rel), problem); err != nil {
			problem += "; the fix run did not resolve it: " + err.Error()
		} else if out, _ := Git(tmp, "grep", "-l", "-I", "-e", "^<<<<<<< ", "-e", "^>>>>>>> ", "--", "."); out != "" {
			problem += "; conflict markers remain after the fix run in " + strings.ReplaceAll(out, "\n", ", ")
		} else {
			Git(tmp, "add", "-A", "--", ".")
			Git(tmp, "reset", "-q", "--", loopdir.Dir(rel).Records())
			Git(tmp, append(ident, "commit", "-q", "--no-edit", "-m", fmt.Sprintf("looprinter %s: land %s into %s (resolved by an agent run)", l.Name, o.Branch, res.Base))...)
			if st, _ := Git(tmp, "status", "--porcelain", "--untracked-files=no"); st == "" {
				if rs, ok := gates(); ok {
					res.Checks, problem = rs, ""
				} else {
					res.Checks = rs
					problem = fmt.Sprintf("after the fix run a gate still fails on the merged tree: %s", failing(rs))
					if gateErr != "" {
						problem = "after the fix run the gates on the merged tree did not run: " + gateErr
					}
				}
			}
		}
	}
	if problem != "" {
		return block(problem + fmt.Sprintf("; %s is untouched, the work stays on %s", res.Base, o.Branch))
	}
	merged, err := Git(tmp, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	res.To = merged
	if mode == "pr" {
		url, err := openPR(top, l, o, res.Base)
		if err != nil {
			return block(err.Error())
		}
		res.PR, res.Landed = url, true
		emit(record.Event{Event: record.Land, Kind: mode, Pass: record.Bool(true), From: o.Branch, To: res.Base, Message: "pull request opened: " + url})
		return res, nil
	}
	if err := moveBase(top, res.Base, baseOld, merged); err != nil {
		return block(err.Error())
	}
	res.Landed = true
	emit(record.Event{Event: record.Land, Kind: mode, Pass: record.Bool(true), From: o.Branch, To: res.Base,
		Message: fmt.Sprintf("%s landed on %s: %.12s → %.12s, after the gates passed on the merged tree", o.Branch, res.Base, baseOld, merged)})
	return res, nil
}

func failing(rs []judge.CheckResult) string {
	var out []string
	for _, r := range rs {
		if !r.Pass {
			out = append(out, fmt.Sprintf("`%s` exited %d", r.Command, r.ExitCode))
		}
	}
	if len(out) == 0 {
		return "a check could not run"
	}
	return strings.Join(out, ", ")
}

// moveBase moves the base branch from old to to: a fast-forward in the
// worktree that has it checked out (its files follow; local changes there
// that would be overwritten refuse it), else the ref alone, only if it is
// still at old.
func moveBase(top, base, old, to string) error {
	if wt := checkedOutAt(top, base); wt != "" {
		if cur, _ := Git(wt, "rev-parse", "HEAD"); cur != old {
			return fmt.Errorf("%s moved while landing (%.12s, not %.12s); land again", base, cur, old)
		}
		if _, err := Git(wt, "merge", "-q", "--ff-only", to); err != nil {
			return fmt.Errorf("cannot move %s in %s: %v", base, wt, err)
		}
		return nil
	}
	_, err := Git(top, "update-ref", "-m", "looprinter land", "refs/heads/"+base, to, old)
	return err
}

// checkedOutAt is the worktree that has branch checked out, or "".
func checkedOutAt(top, branch string) string {
	out, err := Git(top, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	var wt string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			wt = p
		}
		if line == "branch refs/heads/"+branch {
			return wt
		}
	}
	return ""
}

// baseBranch is the branch checked out in the repository's main worktree.
func baseBranch(top string) string {
	out, err := Git(top, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		if b, ok := strings.CutPrefix(line, "branch refs/heads/"); ok {
			return b // the first worktree listed is the main one
		}
		if line == "" {
			break
		}
	}
	return ""
}

func gitCommonDir(top string) string {
	common, err := Git(top, "rev-parse", "--git-common-dir")
	if err != nil {
		return os.TempDir()
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(top, common)
	}
	return common
}

// landLock is the merge queue: one landing at a time per repository.
func landLock(top string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(gitCommonDir(top), "looprinter-land.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := proc.Lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { proc.Unlock(f); f.Close() }, nil
}

// openPR pushes the branch when there is a remote, then opens a pull
// request with the GitHub CLI, the final report as its body.
func openPR(top string, l *spec.Loop, o LandOptions, base string) (string, error) {
	if _, err := exec.LookPath("gh"); err != nil {
		return "", errors.New("git.land: pr needs the GitHub CLI (gh) on PATH")
	}
	remote := l.Git.Remote
	if remote == "" {
		remote = "origin"
	}
	if _, err := Git(top, "remote", "get-url", remote); err == nil {
		if _, err := Git(top, "push", "-q", PushTarget(top, remote), "refs/heads/"+o.Branch+":refs/heads/"+o.Branch); err != nil {
			return "", err
		}
	}
	body, err := os.CreateTemp("", "looprinter-pr-*.md")
	if err != nil {
		return "", err
	}
	defer os.Remove(body.Name())
	body.WriteString(o.Report)
	body.Close()
	title := fmt.Sprintf("looprinter %s: %s", l.Name, firstLineOf(l.Objective))
	cmd := exec.Command("gh", "pr", "create", "--base", base, "--head", o.Branch, "--title", title, "--body-file", body.Name())
	cmd.Dir = top
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("gh pr create: %v: %s", err, strings.TrimSpace(string(out)))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 72 {
		s = s[:72]
	}
	return s
}

// WorktreeRunDir is where a worktree loop of l ran (whether or not the
// worktree still exists): its engine folder is keyed on it.
func WorktreeRunDir(l *spec.Loop, root string) string {
	top := TopLevel(l.Dir)
	rel, err := filepath.Rel(realPath(top), realPath(l.Dir))
	if err != nil {
		return root
	}
	return filepath.Join(root, rel)
}
