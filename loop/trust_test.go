//go:build !windows

package loop

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

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
	os.WriteFile(loopdir.Dir(dir).State(), []byte(forged), 0o600)
	got, issues, _ = loadTrusted(dir)
	if len(issues) != 1 || got.Phase != PhaseBuild || got.Iterations != 3 {
		t.Fatalf("forged public state was trusted: %+v %v", got, issues)
	}
	os.RemoveAll(string(loopdir.PrivateOf(dir))) // the engine's copies: its journal and its state.json
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
	sameReadOnly(t, root, readOnlyAround(root, filepath.Join(root, "worktrees", "a-1", "sub")), "engine", "loops", "logs", "worktrees/b-2")
	if got := readOnlyAround(root, t.TempDir()); len(got) != 1 || got[0] != root {
		t.Errorf("a loop outside the state folder: %v, want the whole state folder", got)
	}
	// A private HOME in the engine's folder is kept too, and what is beside
	// it there (the engine's state) is read-only.
	os.MkdirAll(filepath.Join(root, "engine", "x", "home"), 0o700)
	os.MkdirAll(filepath.Join(root, "engine", "y"), 0o700)
	os.WriteFile(filepath.Join(root, "engine", "x", "state.json"), nil, 0o600)
	sameReadOnly(t, root, readOnlyAround(root, t.TempDir(), filepath.Join(root, "engine", "x", "home")), "engine/x/state.json", "engine/y", "loops", "logs", "worktrees")
}

// sameReadOnly fails unless got names exactly the paths want (relative to
// root).
func sameReadOnly(t *testing.T, root string, got []string, want ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, w := range want {
		left[w] = true
	}
	for _, g := range got {
		rel, _ := filepath.Rel(root, g)
		if !left[rel] {
			t.Errorf("%s read-only, but it holds a kept path or is not beside one", rel)
		}
		delete(left, rel)
	}
	if len(left) > 0 {
		t.Errorf("not read-only: %v (got %v)", left, got)
	}
}
