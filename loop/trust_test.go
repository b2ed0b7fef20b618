package loop

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// guardFixture is a loop folder with one protected executable check and a
// file outside the folder that an attack might aim at.
func guardFixture(t *testing.T) (dir, priv, outside string, g *guard) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "loop")
	priv = filepath.Join(root, "priv")
	outside = filepath.Join(root, "outside.txt")
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "check.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	os.WriteFile(outside, []byte("outside\n"), 0o644)
	var err error
	g, err = snapshotGuard(dir, priv, []protFile{{Path: "tests/check.sh", Rule: "a rule"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, priv, outside, g
}

func checkRestored(t *testing.T, dir string, ts []Tamper, what string) {
	t.Helper()
	if len(ts) != 1 || ts[0].File != "tests/check.sh" || !strings.Contains(ts[0].What, what) || ts[0].Rule != "a rule" {
		t.Fatalf("tamper = %+v, want one %q of tests/check.sh by a rule", ts, what)
	}
	p := filepath.Join(dir, "tests", "check.sh")
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 {
		t.Fatalf("after restore: %v %v, want a regular 0755 file", fi, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Fatalf("content %q", b)
	}
}

// A protected file replaced by a link to a file outside the loop folder is
// put back as a file: the write never goes through the link.
func TestGuardSymlinkSwapNeverWritesThrough(t *testing.T) {
	dir, priv, outside, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.Remove(p)
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	ts, err := g.check(dir, priv, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRestored(t, dir, ts, "replaced")
	if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
		t.Fatalf("the file outside was written through the link: %q", b)
	}
}

// A parent folder swapped for a link out of the loop folder is no way out.
func TestGuardParentLinkSwap(t *testing.T) {
	dir, priv, outside, g := guardFixture(t)
	os.RemoveAll(filepath.Join(dir, "tests"))
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "tests"))
	ts, err := g.check(dir, priv, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRestored(t, dir, ts, "")
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "check.sh")); err == nil {
		t.Fatal("the check was written into the folder the link pointed at")
	}
}

func TestGuardDeletedAndChmodded(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.Remove(p)
	ts, _ := g.check(dir, priv, nil, nil, nil, nil)
	checkRestored(t, dir, ts, "deleted")

	os.Chmod(p, 0o644)
	ts, _ = g.check(dir, priv, nil, nil, nil, nil)
	checkRestored(t, dir, ts, "mode")
}

// An edit that keeps size and mtime (touch -r) is still seen: ctime moves.
func TestGuardSameSizeSameMtime(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	fi, _ := os.Stat(p)
	os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	ts, _ := g.check(dir, priv, nil, nil, nil, nil)
	checkRestored(t, dir, ts, "modified")
}

// A fifo at a protected path is removed and the file put back, without a
// read that would block.
func TestGuardFifo(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no mkfifo here:", err)
	}
	ts, err := g.check(dir, priv, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRestored(t, dir, ts, "fifo")
}

// state.json edited behind the engine's back is replaced by the engine's
// own copy and reported; one with no engine copy is not trusted.
func TestLoadTrustedState(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	st := freshState()
	st.Iterations, st.Phase, st.StartedAt = 3, PhaseBuild, st.UpdatedAt
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, issues, err := loadTrusted(dir)
	if err != nil || len(issues) != 0 || got.Iterations != 3 {
		t.Fatalf("untouched state: %+v %v %v", got, issues, err)
	}
	forged := `{"v":1,"phase":"done","outcome":"done","iterations":-5,"cycle":1}`
	os.WriteFile(StatePath(dir), []byte(forged), 0o600)
	got, issues, _ = loadTrusted(dir)
	if len(issues) != 1 || got.Phase != PhaseBuild || got.Iterations != 3 {
		t.Fatalf("forged public state was trusted: %+v %v", got, issues)
	}
	os.RemoveAll(PrivateDir(dir)) // the engine's copies: its journal and its state.json
	got, issues, _ = loadTrusted(dir)
	if len(issues) != 1 || got.Phase == PhaseDone || got.Outcome != "" || got.Iterations < 0 {
		t.Fatalf("a state with no engine copy was trusted: %+v %v", got, issues)
	}
}

func TestTargetProblems(t *testing.T) {
	for _, bad := range []string{"/etc/passwd", "../../etc/passwd", "a/../../x", "working-records/state.json", ".git/config", "output/plan.json", "src/"} {
		if targetProblem(bad) == "" {
			t.Errorf("%q accepted as a target", bad)
		}
	}
	for _, good := range []string{"main.go", "src/a.go", "output/answer.txt", "./x.txt"} {
		if why := targetProblem(good); why != "" {
			t.Errorf("%q refused: %s", good, why)
		}
	}
}

// A loop folder inside the state folder (a worktree loop) stays writable;
// everything beside it in the state folder is read-only.
func TestReadOnlyAround(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"engine/x", "loops", "logs", "worktrees/a-1/sub", "worktrees/b-2"} {
		os.MkdirAll(filepath.Join(root, d), 0o700)
	}
	got := readOnlyAround(root, filepath.Join(root, "worktrees", "a-1", "sub"))
	want := map[string]bool{"engine": true, "loops": true, "logs": true, "worktrees/b-2": true}
	for _, g := range got {
		rel, _ := filepath.Rel(root, g)
		if !want[rel] {
			t.Errorf("%s read-only, but it holds the loop folder or is not beside it", rel)
		}
		delete(want, rel)
	}
	if len(want) > 0 {
		t.Errorf("not read-only: %v (got %v)", want, got)
	}
	if got := readOnlyAround(root, t.TempDir()); len(got) != 1 || got[0] != root {
		t.Errorf("a loop outside the state folder: %v, want the whole state folder", got)
	}
}
