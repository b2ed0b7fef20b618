//go:build unix

package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// attemptLayer makes an attempt's upper folder where the engine keeps
// layers (the state folder, hidden from checks), holding files.
func attemptLayer(t *testing.T, files map[string]string, removed ...string) string {
	t.Helper()
	base, err := os.MkdirTemp(filepath.Join(loopdir.StateRoot()), "attempt-")
	if err != nil {
		os.MkdirAll(loopdir.StateRoot(), 0o700)
		if base, err = os.MkdirTemp(loopdir.StateRoot(), "attempt-"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	upper := filepath.Join(base, "upper")
	for rel, body := range files {
		p := filepath.Join(upper, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(upper, 0o755)
	for _, rel := range removed {
		if err := unix.Mknod(filepath.Join(upper, rel), unix.S_IFCHR, 0); err != nil {
			t.Skipf("no whiteout can be made here: %v", err)
		}
	}
	return upper
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == loopdir.RecordsDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // a whiteout
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

// Each attempt is judged on its own layer laid over the loop folder: the
// attempt that did the task passes, one that did it wrong fails with the
// checks' output, a removal (whiteout) in a layer is seen, and the loop
// folder is never written. A hostile attempt whose code (run by the check)
// writes the folder and another attempt's layer reaches neither, and the
// other attempt's verdict is the same after it.
func TestJudgeAttemptOnItsLayer(t *testing.T) {
	for _, kind := range []string{sandbox.Bwrap, sandbox.Off} {
		t.Run(kind, func(t *testing.T) {
			if kind == sandbox.Bwrap {
				needBox(t, kind)
			}
			j, _ := newJudge(t, &spec.Loop{Sandbox: kind})
			for rel, body := range map[string]string{"calc.txt": "old\n", "extra.txt": "x\n", "run.sh": "grep -q '^new$' calc.txt || { echo 'FAIL: calc.txt is not new'; cat calc.txt; exit 1; }\n"} {
				os.WriteFile(filepath.Join(j.Dir, rel), []byte(body), 0o644)
			}
			before := readTree(t, j.Dir)
			cmds := []string{"sh run.sh", "test ! -e extra.txt || { echo 'FAIL: extra.txt is still there'; exit 1; }"}
			good := attemptLayer(t, map[string]string{"calc.txt": "new\n"}, "extra.txt")
			wrong := attemptLayer(t, map[string]string{"calc.txt": "newer\n"})
			ctx := context.Background()

			v := j.JudgeAttempt(ctx, AttemptOptions{Task: "T-001", Index: 0, Upper: good, Cmds: cmds})
			if !v.Pass || v.Signal != "" || len(v.Results) != 2 {
				t.Fatalf("the good attempt: %+v", v)
			}
			if !strings.Contains(v.Results[0].Output, "-attempt-T-001-1-1.log") {
				t.Errorf("its output at %s", v.Results[0].Output)
			}
			w := j.JudgeAttempt(ctx, AttemptOptions{Task: "T-001", Index: 1, Upper: wrong, Cmds: cmds})
			if w.Pass || !strings.Contains(w.Signal, "FAIL: calc.txt is not new") || !strings.Contains(w.Signal, "FAIL: extra.txt is still there") {
				t.Fatalf("the wrong attempt: pass %v, signal %q", w.Pass, w.Signal)
			}

			if kind == sandbox.Off {
				// Unconfined checks get a copy of the folder with the layer
				// applied: the folder stays as it was. (Nothing holds code
				// off the other layers there: the hostile part needs a box.)
				if after := readTree(t, j.Dir); len(after) != len(before) || after["calc.txt"] != "old\n" {
					t.Errorf("the loop folder changed: %v", after)
				}
				return
			}
			// The hostile attempt's run.sh is what the check runs.
			hostile := attemptLayer(t, map[string]string{"run.sh": `echo forged > "$LOOPRINTER_DIR/forged.txt" 2>/dev/null
echo forged >> calc.txt 2>/dev/null
echo forged > forged-here.txt 2>/dev/null
echo new > "` + good + `/calc.txt" 2>/dev/null
echo forged > "` + good + `/forged.txt" 2>/dev/null
rm -f "` + good + `/extra.txt" 2>/dev/null
echo new > "` + wrong + `/calc.txt" 2>/dev/null
exit 0
`})
			h := j.JudgeAttempt(ctx, AttemptOptions{Task: "T-001", Index: 2, Upper: hostile, Cmds: cmds[:1]})
			if !h.Pass {
				t.Fatalf("the hostile attempt's check: %+v", h)
			}
			if after := readTree(t, j.Dir); len(after) != len(before) || after["calc.txt"] != "old\n" || after["run.sh"] != before["run.sh"] {
				t.Errorf("the loop folder changed: %v", after)
			}
			if got := readTree(t, good); len(got) != 1 || got["calc.txt"] != "new\n" {
				t.Errorf("the good attempt's layer changed: %v", got)
			}
			if fi, err := os.Lstat(filepath.Join(good, "extra.txt")); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
				t.Errorf("the good attempt's whiteout is gone: %v", err)
			}
			if got := readTree(t, wrong); got["calc.txt"] != "newer\n" {
				t.Errorf("the wrong attempt's layer changed: %v", got)
			}
			if again := j.JudgeAttempt(ctx, AttemptOptions{Task: "T-001", Index: 1, Upper: wrong, Cmds: cmds}); again.Pass {
				t.Error("after the hostile attempt, the wrong attempt passes")
			}
			if again := j.JudgeAttempt(ctx, AttemptOptions{Task: "T-001", Index: 0, Upper: good, Cmds: cmds}); !again.Pass {
				t.Errorf("after the hostile attempt, the good attempt fails: %s", again.Signal)
			}
		})
	}
}

// A layer that is not there fails closed.
func TestJudgeAttemptWithoutLayer(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: sandbox.Off})
	v := j.JudgeAttempt(context.Background(), AttemptOptions{Task: "T-001", Upper: filepath.Join(t.TempDir(), "none"), Cmds: []string{"true"}})
	if v.Pass || !strings.Contains(v.Signal, "is not a folder") {
		t.Fatalf("%+v", v)
	}
}

// An attempt is judged by its checks alone: none, nothing fails; a check
// cut short by the end of the context does not pass.
func TestJudgeAttemptNoChecksAndCancel(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: sandbox.Off})
	up := t.TempDir()
	if v := j.JudgeAttempt(context.Background(), AttemptOptions{Task: "T-001", Upper: up}); !v.Pass || v.Signal != "" {
		t.Errorf("no checks: %+v", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v := j.JudgeAttempt(ctx, AttemptOptions{Task: "T-001", Upper: up, Cmds: []string{"true", "true"}}); v.Pass || v.Signal == "" {
		t.Errorf("cancelled: %+v", v)
	}
}

// Under verify_baseline: new-only a check failing only as it failed before
// the loop passes for the attempt; a new failure does not.
func TestJudgeAttemptBaseline(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: sandbox.Off, VerifyBaseline: "new-only"})
	up := t.TempDir()
	cmd := `echo "--- FAIL: TestOld"; test -e new.txt && echo "--- FAIL: TestNew"; exit 1`
	base := map[string][]string{cmd: {Normalize("--- FAIL: TestOld")}}
	if v := j.JudgeAttempt(context.Background(), AttemptOptions{Task: "T-001", Upper: up, Cmds: []string{cmd}, Baseline: base}); !v.Pass {
		t.Errorf("only the old failure: %+v", v)
	}
	os.WriteFile(filepath.Join(up, "new.txt"), []byte("x\n"), 0o644)
	if v := j.JudgeAttempt(context.Background(), AttemptOptions{Task: "T-001", Upper: up, Cmds: []string{cmd}, Baseline: base}); v.Pass || !strings.Contains(v.Signal, "TestNew") || len(v.Results) != 1 || strings.Join(v.Results[0].Lines, "|") != "--- FAIL: TestNew" {
		t.Errorf("a new failure: %+v", v)
	}
}
