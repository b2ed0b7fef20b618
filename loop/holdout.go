package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
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

// holdoutFiles lists the holdout files (relative, with slashes, sorted),
// resolved on first use.
func (e *Engine) holdoutFiles() ([]string, error) {
	if len(e.spec.Holdout) == 0 || e.holdouts != nil {
		return e.holdouts, nil
	}
	fsys := os.DirFS(e.dir)
	seen := map[string]bool{}
	var out []string
	for _, g := range e.spec.Holdout {
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
		return nil, fmt.Errorf("holdout: %s match no file in the loop folder: name the holdout test files (globs relative to the loop folder)", strings.Join(e.spec.Holdout, ", "))
	}
	sort.Strings(out)
	e.holdouts = out
	return out, nil
}

// holdoutReady says why the holdout files cannot be kept from the agent
// (nil: they can): the sandbox in force must lay a copy-on-write layer,
// and git must never carry them, since the agent reads the repository.
func (e *Engine) holdoutReady(layered bool) error {
	files, err := e.holdoutFiles()
	if err != nil || len(files) == 0 {
		return err
	}
	if !layered {
		return errors.New("holdout files can be hidden from the agent only by the layered sandbox (bubblewrap with copy-on-write layers), which is not in force here: use `sandbox: bwrap` on a machine where `looprinter doctor` shows copy-on-write layers, or remove holdout from the loop file")
	}
	if e.holdoutGitChecked {
		return nil
	}
	if tracked := HoldoutTracked(e.dir, files); len(tracked) > 0 {
		return fmt.Errorf("holdout file %s is tracked by git or in the repository's history, which the agent can read: keep holdout files out of git (remove them from the index and the history, or keep them in a folder git does not track) and list them in .gitignore", tracked[0])
	}
	if top := gitTop(e.dir); top != "" {
		for _, f := range files {
			abs := filepath.Join(e.dir, filepath.FromSlash(f))
			if _, err := gitOut(top, "check-ignore", "-q", "--", abs); err != nil {
				return fmt.Errorf("holdout file %s is not ignored by git: a commit would carry it where the agent can read it; add it to .gitignore (or .git/info/exclude)", f)
			}
		}
	}
	e.holdoutGitChecked = true
	return nil
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

// holdoutPath says whether a path of the agent's layer touches a holdout
// file: the file itself, or a folder on its way removed, replaced or made
// a link (a plain folder the layer merely holds is not).
func (e *Engine) holdoutPath(upper, rel string) bool {
	for _, h := range e.holdouts {
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
func (e *Engine) runVisibleChecks(ctx context.Context, cmds []string, logPath func(int) string) []CheckResult {
	if len(e.holdouts) == 0 {
		return runCheckList(ctx, e.spec, cmds, e.checkEnv(), logPath)
	}
	out, err := e.inView(ctx, e.holdouts, cmds, logPath)
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

// holdoutStart finds the holdout files before any check runs and says why
// they cannot be kept from the agent here, if they cannot.
func (e *Engine) holdoutStart() error {
	if len(e.spec.Holdout) == 0 {
		return nil
	}
	p, err := policyFor(e.spec, nil)
	if err != nil {
		return err
	}
	return e.holdoutReady(p.Kind == sandbox.Bwrap && sandbox.LayerProbe() == nil)
}

// touchesHoldout says whether a discarded path of a refused folder is a
// holdout file or holds one.
func (e *Engine) touchesHoldout(rel string) bool {
	for _, h := range e.holdouts {
		if h == rel || strings.HasPrefix(h, rel+"/") || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}
