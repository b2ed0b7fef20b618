package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// needBox skips where no check sandbox of kind can run (CI has them all).
func needBox(t *testing.T, kind string) {
	t.Helper()
	got, err := sandbox.Resolve(kind)
	if err == nil && got == kind && (kind != sandbox.Bwrap || sandbox.LayerProbe() == nil) {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI runs where the %s check sandbox runs: %v", kind, err)
	}
	t.Skipf("no %s check sandbox here: %v", kind, err)
}

// ATTACK (issue 35, item 1): a check runs the agent's code, which writes
// the user's real HOME (~/.config/go/env: GOFLAGS that skip the failing
// test in every later check), the tree, /tmp, and reads the engine's state
// folder (other loops' holdout logs). Confined by the judge, none of it
// survives the check or reaches the state; unconfined (sandbox: off) it
// would all happen, which the last case shows.
func TestChecksRunConfined(t *testing.T) {
	for _, kind := range []string{sandbox.Bwrap, sandbox.Landlock, sandbox.Off} {
		t.Run(kind, func(t *testing.T) {
			if kind != sandbox.Off {
				needBox(t, kind)
			}
			home := t.TempDir()
			t.Setenv("HOME", home)
			state := loopdir.StateRoot()
			os.MkdirAll(filepath.Join(state, "engine", "other"), 0o700)
			secret := filepath.Join(state, "engine", "other", "holdout.log")
			os.WriteFile(secret, []byte("HIDDEN-EXPECTATION\n"), 0o600)
			tmpMark := filepath.Join(os.TempDir(), "looprinter-check-leak-"+kind)
			os.Remove(tmpMark)
			defer os.Remove(tmpMark)
			j, _ := newJudge(t, &spec.Loop{Sandbox: kind})
			attack := `mkdir -p "$HOME/.config/go" && echo 'GOFLAGS=-run=^TestNothing$' >> "$HOME/.config/go/env"; ` +
				`echo forged > written.txt; echo leak > ` + tmpMark + `; ` +
				`cat ` + secret + ` > stolen.txt 2>/dev/null; cat ` + secret + `; true`
			rs := j.RunChecks(context.Background(), "cycle", []string{attack})
			if len(rs) != 1 || !rs[0].Pass {
				t.Fatalf("the check: %+v", rs)
			}
			log, _ := os.ReadFile(rs[0].Output)
			_, homeErr := os.Stat(filepath.Join(home, ".config", "go", "env"))
			_, treeErr := os.Stat(filepath.Join(j.Dir, "written.txt"))
			_, tmpErr := os.Stat(tmpMark)
			read := strings.Contains(string(log), "HIDDEN-EXPECTATION")
			if kind == sandbox.Off {
				if homeErr != nil || treeErr != nil || tmpErr != nil || !read {
					t.Fatalf("unconfined, the attack should reach everything (home %v, tree %v, tmp %v, read %v): the test cannot tell", homeErr, treeErr, tmpErr, read)
				}
				return
			}
			if homeErr == nil {
				t.Error("the check wrote the user's ~/.config/go/env")
			}
			if treeErr == nil && kind == sandbox.Bwrap {
				t.Error("the check's write reached the loop folder")
			}
			if tmpErr == nil {
				t.Error("the check left a file in the host's /tmp")
			}
			if read {
				t.Error("the check read the engine's state folder")
			}
		})
	}
}
