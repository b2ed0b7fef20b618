package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/spec"
)

// Worktree is where a loop runs in its own worktree.
type Worktree struct {
	Root    string // the worktree's root
	RunDir  string // the loop's directory inside it
	RunFile string // the loop file inside it
	Branch  string
	Created bool // made now (not reused)
}

// PrepareWorktree makes (or reuses) a worktree for a loop at root, on the
// loop's branch, and puts the loop file there. A loop file that is not
// committed, or differs from the committed one, is copied in, so the run
// uses what the user wrote.
func PrepareWorktree(l *spec.Loop, root string) (*Worktree, error) {
	top := TopLevel(l.Dir)
	if top == "" {
		return nil, fmt.Errorf("git.worktree: %s is not in a git repository", l.Dir)
	}
	if _, err := Git(top, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return nil, fmt.Errorf("git.worktree: the repository at %s has no commit yet; commit once first", top)
	}
	rel, err := filepath.Rel(realPath(top), realPath(l.Dir))
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("git.worktree: %s is outside its repository %s", l.Dir, top)
	}
	wt := &Worktree{Root: root, Branch: DefaultBranch(l)}
	wt.RunDir = filepath.Join(root, rel)
	wt.RunFile = filepath.Join(wt.RunDir, filepath.Base(l.Path))

	unlock, err := repoLock(top)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		os.MkdirAll(filepath.Dir(root), 0o755)
		Git(top, "worktree", "prune")
		args := []string{"worktree", "add"}
		if _, err := Git(top, "rev-parse", "--verify", "--quiet", "refs/heads/"+wt.Branch); err == nil {
			args = append(args, root, wt.Branch)
		} else {
			args = append(args, "-b", wt.Branch, root, "HEAD")
		}
		if _, err := Git(top, args...); err != nil {
			return nil, fmt.Errorf("git.worktree: %w", err)
		}
		wt.Created = true
	}
	if _, err := os.Stat(wt.RunFile); err != nil || wt.Created {
		data, err := spec.ReadFile(l.Path)
		if err != nil {
			return nil, err
		}
		if old, err := os.ReadFile(wt.RunFile); err != nil || !bytes.Equal(old, data) {
			os.MkdirAll(wt.RunDir, 0o755)
			if err := os.WriteFile(wt.RunFile, data, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return wt, nil
}

// repoLock serializes worktree changes of one repository between processes.
func repoLock(top string) (func(), error) {
	common, err := Git(top, "rev-parse", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(top, common)
	}
	f, err := os.OpenFile(filepath.Join(common, "looprinter.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := proc.Lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { proc.Unlock(f); f.Close() }, nil
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// CleanupWorktree removes a finished loop's worktree, keeping its branch
// (the work is committed there). The loop's records, outputs and loop file
// are first copied to archive (hard links where possible), then archived is
// called (to point readers at the archive), then the worktree goes. It
// refuses when the worktree has uncommitted changes.
func CleanupWorktree(wt *Worktree, archive string, archived func()) error {
	status, err := Git(wt.RunDir, "status", "--porcelain", "--", ".")
	if err != nil {
		return err
	}
	if status = dropRecords(status); status != "" {
		return fmt.Errorf("the worktree %s has uncommitted changes; it was kept:\n%s", wt.Root, status)
	}
	if err := os.MkdirAll(archive, 0o755); err != nil {
		return err
	}
	for _, d := range []string{loopdir.RecordsDir, loopdir.OutputDir, filepath.Base(wt.RunFile)} {
		src := filepath.Join(wt.RunDir, d)
		if _, err := os.Stat(src); err != nil {
			continue
		}
		dst := filepath.Join(archive, d)
		os.RemoveAll(dst)
		if err := exec.Command("cp", "-al", src, dst).Run(); err != nil {
			os.RemoveAll(dst)
			if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
				return fmt.Errorf("archive %s: %v %s", src, err, out)
			}
		}
	}
	if archived != nil {
		archived()
	}
	top := TopLevel(wt.Root)
	if top == "" {
		return errors.New("cannot find the worktree's repository")
	}
	unlock, err := repoLock(top)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := Git(top, "worktree", "remove", "--force", wt.Root); err != nil {
		return err
	}
	Git(top, "worktree", "prune")
	return nil
}
