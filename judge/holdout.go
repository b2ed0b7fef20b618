package judge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Holdout checks. The files the loop file's holdout globs name are tests
// the agent never sees: in its copy-on-write layer each is a whiteout (it
// can be neither read nor listed, nor written: a change at its path is
// refused), the checks whose output reaches a prompt run in a view in
// which they are hidden too, and the holdout checks (holdout_verify) run
// only in the clean room, where they are part of the DONE verdict. What a
// failing one tells the next prompt is holdout_feedback's choice: by
// default how many fail, nothing of their text. Hiding needs the layered
// sandbox: under any other the loop stops BLOCKED.

// Holdouts are the holdout files found so far (by HoldoutReady), relative,
// with slashes, sorted.
func (j *Judge) Holdouts() []string { return j.holdouts }

// holdoutFiles lists the holdout files (relative, with slashes, sorted),
// resolved on first use.
func (j *Judge) holdoutFiles() ([]string, error) {
	l := j.spec()
	if len(l.Holdout) == 0 || j.holdouts != nil {
		return j.holdouts, nil
	}
	fsys := os.DirFS(j.Dir)
	seen := map[string]bool{}
	var out []string
	for _, g := range l.Holdout {
		m, err := doublestar.Glob(fsys, strings.TrimPrefix(g, "./"), doublestar.WithFilesOnly(), doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("holdout: %q: %w", g, err)
		}
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("holdout: %s match no file in the loop folder: name the holdout test files (globs relative to the loop folder)", strings.Join(l.Holdout, ", "))
	}
	sort.Strings(out)
	j.holdouts = out
	return out, nil
}

// HoldoutReady says why the holdout files cannot be kept from the agent
// (nil: they can): the sandbox in force must lay a copy-on-write layer.
// Holdout files git holds (tracked, or in the history) are kept from the
// agent with the whole repository: HiddenGit says what to hide. An
// untracked holdout file must be ignored by git (a commit would carry it).
func (j *Judge) HoldoutReady(layered bool) error {
	files, err := j.holdoutFiles()
	if err != nil || len(files) == 0 {
		return err
	}
	if !layered {
		return errors.New("holdout files can be hidden from the agent only by the layered sandbox (bubblewrap with copy-on-write layers), which is not in force here: use `sandbox: bwrap` on a machine where `looprinter doctor` shows copy-on-write layers, or remove holdout from the loop file")
	}
	if j.holdoutGitChecked {
		return nil
	}
	top := gitTop(j.Dir)
	tracked := HoldoutTracked(j.Dir, files)
	if len(tracked) > 0 {
		if j.spec().Shape == spec.ShapeReview {
			return fmt.Errorf("holdout file %s is tracked by git: a review's fixer commits to the repository, which would show it the holdout files; use holdout files git does not track, or another shape", tracked[0])
		}
		gh, err := gitHideFor(j.Dir, files)
		if err != nil {
			return err
		}
		j.gitHide = gh
	}
	if top != "" {
		for _, f := range files {
			if slices.Contains(tracked, f) {
				continue
			}
			abs := filepath.Join(j.Dir, filepath.FromSlash(f))
			if _, err := gitOut(top, "check-ignore", "-q", "--", abs); err != nil {
				return fmt.Errorf("holdout file %s is not ignored by git: a commit would carry it into the repository; add it to .gitignore (or .git/info/exclude)", f)
			}
		}
	}
	j.holdoutGitChecked = true
	return nil
}

// GitHide is what keeps a repository that holds holdout files from the
// agent and from the checks whose output reaches a prompt: git's objects,
// packs and history hold every version of a tracked file, so the agent
// sees no repository at all. Its `git` commands fail with GitHiddenNote's
// path in their message ("fatal: not a git repository: …").
type GitHide struct {
	// InTree are paths of the loop folder (relative, with slashes) that are
	// the repository's: ".git" (a folder, or a linked work tree's file)
	// first. The agent's layer puts GitHiddenNote at ".git" and removes
	// the others; a check's view removes them all.
	InTree []string
	// Dirs are the repository's folders outside the loop folder (a loop in
	// a sub-folder of the work tree, a linked work tree's repository), and
	// Files the copies of the holdout files in the repository's other work
	// trees: absolute; each is shown empty.
	Dirs  []string
	Files []string
}

// GitHiddenNote is what the agent finds at .git when the repository is
// hidden from it: a git file whose target names the reason, so that every
// git command says it.
const GitHiddenNote = "gitdir: /(looprinter hides this repository from the agent: git holds the holdout tests)\n"

// HiddenGit is what to hide of the repository (nil: nothing), once
// HoldoutReady has run.
func (j *Judge) HiddenGit() *GitHide { return j.gitHide }

// gitHideFor finds the repository holding dir: its git folders (the work
// tree's and the common one) and its other work trees' copies of files.
func gitHideFor(dir string, files []string) (*GitHide, error) {
	gh := &GitHide{InTree: []string{".git"}}
	canon := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	cdir := canon(dir)
	for _, what := range []string{"--git-dir", "--git-common-dir"} {
		out, err := gitOut(dir, "rev-parse", what)
		if err != nil || out == "" {
			return nil, fmt.Errorf("holdout: cannot find the repository that holds the holdout files (git rev-parse %s): %v", what, err)
		}
		g := canon(out)
		rel, err := filepath.Rel(cdir, g)
		switch {
		case err == nil && rel == ".git":
		case err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "..":
			if r := filepath.ToSlash(rel); !slices.Contains(gh.InTree, r) {
				gh.InTree = append(gh.InTree, r)
			}
		case rel == ".":
			return nil, errors.New("holdout: the loop folder is itself a repository folder (a bare repository): holdout files cannot be hidden there")
		default:
			if !slices.Contains(gh.Dirs, g) {
				gh.Dirs = append(gh.Dirs, g)
			}
		}
	}
	// A folder inside another hidden one is hidden with it (a linked work
	// tree's folder is inside the common one).
	var dirs []string
	for _, d := range gh.Dirs {
		inside := false
		for _, o := range gh.Dirs {
			if o != d && strings.HasPrefix(d, o+string(filepath.Separator)) {
				inside = true
			}
		}
		if !inside {
			dirs = append(dirs, d)
		}
	}
	gh.Dirs = dirs
	top := canon(gitTop(dir))
	out, _ := gitOut(dir, "worktree", "list", "--porcelain")
	for _, line := range strings.Split(out, "\n") {
		wt, ok := strings.CutPrefix(line, "worktree ")
		if !ok || canon(wt) == top {
			continue
		}
		for _, f := range files {
			rel, err := filepath.Rel(top, filepath.Join(cdir, filepath.FromSlash(f)))
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			if p := filepath.Join(canon(wt), rel); fileExists(p) {
				gh.Files = append(gh.Files, p)
			}
		}
	}
	return gh, nil
}

func fileExists(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

// HoldoutTracked lists those of files (relative to dir) that git tracks,
// has staged or has in its history: a holdout file must never be in git,
// which the agent reads.
func HoldoutTracked(dir string, files []string) []string {
	top := gitTop(dir)
	if top == "" {
		return nil
	}
	var out []string
	for _, f := range files {
		abs := filepath.Join(dir, filepath.FromSlash(f))
		if o, _ := gitOut(top, "ls-files", "--", abs); o != "" {
			out = append(out, f)
			continue
		}
		if o, _ := gitOut(top, "rev-list", "--all", "-1", "--", abs); o != "" {
			out = append(out, f)
		}
	}
	return out
}

// gitTop is the top of the git work tree holding dir, "" when none.
func gitTop(dir string) string {
	out, err := gitOut(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	return out
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", safegit.Args(args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// HoldoutPath says whether a path of the agent's layer touches a holdout
// file: the file itself, or a folder on its way removed, replaced or made
// a link (a plain folder the layer merely holds is not).
func (j *Judge) HoldoutPath(upper, rel string) bool {
	for _, h := range j.holdouts {
		if h == rel {
			return true
		}
		if strings.HasPrefix(h, rel+"/") {
			fi, err := os.Lstat(filepath.Join(upper, filepath.FromSlash(rel)))
			return err != nil || !fi.IsDir() || sandbox.Opaque(filepath.Join(upper, filepath.FromSlash(rel)))
		}
	}
	return false
}

// runVisibleChecks runs checks whose output the agent will see: in a view
// without the holdout files when there are any.
func (j *Judge) runVisibleChecks(ctx context.Context, cmds []string, logPath func(int) string) []CheckResult {
	if len(j.holdouts) == 0 {
		l := j.spec()
		return Check(ctx, CheckRequest{Loop: l, Cmds: cmds, Env: j.checkEnv(), Redactor: j.redactor(l), LogPath: logPath, Note: j.noteConfinement})
	}
	out, err := j.inViewGate(ctx, j.holdouts, cmds, logPath)
	if err != nil {
		// Fails closed: a check that could not run without the holdout
		// files in sight does not pass.
		for _, c := range cmds[len(out):] {
			r := CheckResult{}
			r.Command, r.Check.Command, r.ExitCode = c, c, 126
			r.Lines = []string{"the check cannot run without the holdout files in sight: " + err.Error()}
			r.Signal = r.Lines[0]
			out = append(out, r)
		}
	}
	return out
}

// TouchesHoldout says whether a discarded path of a refused folder is a
// holdout file or holds one.
func (j *Judge) TouchesHoldout(rel string) bool {
	for _, h := range j.holdouts {
		if h == rel || strings.HasPrefix(h, rel+"/") || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}

// BaselineHoldout runs the holdout checks before any agent run, when every
// visible check already passes: the objective is met only if they pass
// too (a holdout file may hold the only test that fails). It returns how
// many of them (tests where their runners say, else commands) pass and
// fail, their results (kept in the engine's private folder: the agent
// never reads them) and an error when they could not run.
func (j *Judge) BaselineHoldout(ctx context.Context) (passed, failed int, results []CheckResult, err error) {
	l := j.spec()
	if len(l.HoldoutVerify) == 0 {
		return 0, 0, nil, nil
	}
	held := loopdir.Private(j.Priv).HoldoutChecks()
	if err := os.MkdirAll(held, 0o700); err != nil {
		return 0, 0, nil, err
	}
	stamp := time.Now().UTC().Format("20060102T150405.000")
	results, err = j.inView(ctx, nil, l.HoldoutVerify, func(i int) string {
		return filepath.Join(held, fmt.Sprintf("%s-baseline-holdout-%d.log", stamp, i+1))
	})
	if err != nil {
		return 0, 0, results, err
	}
	passed, failed, _ = holdoutCounts(results)
	return passed, failed, results, nil
}
