package judge

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func canonT(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A holdout file git tracks is no longer refused: the repository is to be
// hidden from the agent. What is hidden depends on where the repository is:
// at the loop folder's top (.git only), above it (the loop in a sub-folder:
// the repository folder outside the loop folder too), or a linked work
// tree (its repository, and the main work tree's copy of the holdout file).
func TestHoldoutTrackedHidesTheRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The loop folder is the repository's top.
	j, _ := newJudge(t, &spec.Loop{Holdout: []string{"hidden_test.go"}})
	write(filepath.Join(j.Dir, "hidden_test.go"), "package a\n")
	gitT(t, j.Dir, "init", "-q")
	gitT(t, j.Dir, "add", "-A")
	gitT(t, j.Dir, "commit", "-qm", "init")
	if j.HiddenGit() != nil {
		t.Fatal("HiddenGit before HoldoutReady")
	}
	if err := j.HoldoutReady(true); err != nil {
		t.Fatalf("a tracked holdout file is refused: %v", err)
	}
	gh := j.HiddenGit()
	if gh == nil || !slices.Equal(gh.InTree, []string{".git"}) || len(gh.Dirs) != 0 || len(gh.Files) != 0 {
		t.Fatalf("repository at the top: %+v", gh)
	}

	// A file in the history only (removed since) is hidden the same way.
	h, _ := newJudge(t, &spec.Loop{Holdout: []string{"old_test.go"}})
	write(filepath.Join(h.Dir, "old_test.go"), "package a\n")
	gitT(t, h.Dir, "init", "-q")
	gitT(t, h.Dir, "add", "-A")
	gitT(t, h.Dir, "commit", "-qm", "init")
	gitT(t, h.Dir, "rm", "-q", "--cached", "old_test.go")
	gitT(t, h.Dir, "commit", "-qm", "untrack")
	write(filepath.Join(h.Dir, ".gitignore"), "old_test.go\n")
	if err := h.HoldoutReady(true); err != nil || h.HiddenGit() == nil {
		t.Fatalf("a holdout file in the history: %v, %+v", err, h.HiddenGit())
	}

	// The loop in a sub-folder of the work tree.
	top := canonT(t, t.TempDir())
	write(filepath.Join(top, "sub", "hidden_test.go"), "package a\n")
	gitT(t, top, "init", "-q")
	gitT(t, top, "add", "-A")
	gitT(t, top, "commit", "-qm", "init")
	s, _ := newJudge(t, &spec.Loop{Holdout: []string{"hidden_test.go"}})
	s.Dir = filepath.Join(top, "sub")
	s.spec().Dir = s.Dir
	if err := s.HoldoutReady(true); err != nil {
		t.Fatal(err)
	}
	if gh := s.HiddenGit(); gh == nil || gh.InTree[0] != ".git" || !slices.Equal(gh.Dirs, []string{filepath.Join(top, ".git")}) {
		t.Fatalf("loop in a sub-folder: %+v", gh)
	}

	// A linked work tree of that repository: its repository folder and the
	// main work tree's copy of the holdout file are hidden.
	wt := filepath.Join(canonT(t, t.TempDir()), "wt")
	gitT(t, top, "worktree", "add", "-q", wt)
	w, _ := newJudge(t, &spec.Loop{Holdout: []string{"sub/hidden_test.go"}})
	w.Dir = wt
	w.spec().Dir = wt
	if err := w.HoldoutReady(true); err != nil {
		t.Fatal(err)
	}
	gh = w.HiddenGit()
	if gh == nil || !slices.Equal(gh.Dirs, []string{filepath.Join(top, ".git")}) || !slices.Equal(gh.Files, []string{filepath.Join(top, "sub", "hidden_test.go")}) {
		t.Fatalf("linked work tree: %+v", gh)
	}
	for _, d := range gh.Dirs {
		if !strings.HasPrefix(d, filepath.Join(top, ".git")) {
			t.Errorf("hides %s, outside the repository folder", d)
		}
	}

	// An untracked holdout file git does not ignore is still refused: a
	// commit would carry it.
	u, _ := newJudge(t, &spec.Loop{Holdout: []string{"new_test.go"}})
	write(filepath.Join(u.Dir, "a.go"), "package a\n")
	gitT(t, u.Dir, "init", "-q")
	gitT(t, u.Dir, "add", "-A")
	gitT(t, u.Dir, "commit", "-qm", "init")
	write(filepath.Join(u.Dir, "new_test.go"), "package a\n")
	if err := u.HoldoutReady(true); err == nil || !strings.Contains(err.Error(), "not ignored by git") {
		t.Errorf("untracked, not ignored: %v", err)
	}
	if u.HiddenGit() != nil {
		t.Error("an untracked holdout file hides the repository")
	}
}
