//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// Two runs at once over the same loop folder, each under bwrap with a
// layer of its own (as parallel build runs will be): each run's writes land
// in its own layer only, the folder is untouched, and a hostile run that
// knows where the other run's layer is (the engine's private folder) can
// neither write nor remove anything there.
func TestLayerSlotsIsolated(t *testing.T) {
	need(t, Bwrap)
	if err := LayerProbe(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs where overlayfs can be mounted, but: %v", err)
		}
		t.Skipf("no copy-on-write layer here: %v", err)
	}
	l := newLayout(t)
	// overlayfs leaves a mode-000 folder in a work folder: emptied before
	// the test's folders are removed (as an ordinary user too).
	t.Cleanup(func() { removeAllWritable(filepath.Join(l.state, "engine", "layers")) })
	os.WriteFile(filepath.Join(l.dir, "shared.txt"), []byte("base\n"), 0o644)
	os.WriteFile(filepath.Join(l.dir, "gone.txt"), []byte("x\n"), 0o644)
	slot := func(name string) Layer {
		d := filepath.Join(l.state, "engine", "layers", name)
		lay := Layer{Target: l.dir, Upper: filepath.Join(d, "upper"), Work: filepath.Join(d, "work")}
		if left, err := PrepareLayer(lay); err != nil || left {
			t.Fatalf("PrepareLayer %s: %v %v", name, left, err)
		}
		return lay
	}
	a, b := slot("loop"), slot("loop-2")
	// b holds a file before the hostile run starts: it must stay.
	os.WriteFile(filepath.Join(b.Upper, "mine.txt"), []byte("b's work\n"), 0o644)
	honest := `set -e
echo B > shared.txt
rm gone.txt
sleep 1
echo done`
	hostile := `echo A > shared.txt
echo forged > "$OTHER/forged.txt" 2>/dev/null && echo "WROTE other layer"
echo forged >> "$OTHER/mine.txt" 2>/dev/null && echo "APPENDED other layer"
rm -f "$OTHER/mine.txt" 2>/dev/null && [ -d "$OTHER" ] && ! [ -e "$OTHER/mine.txt" ] && echo "REMOVED from other layer"
mkdir "$OTHER/../upper2" 2>/dev/null && echo "MADE a layer folder"
grep -q '^B$' shared.txt && echo "SAW the other run's write"
echo done`
	start := func(lay Layer, script, other string) (*bytes.Buffer, func() error) {
		p := l.policy(Bwrap)
		p.Layers = []Layer{lay}
		cmd, err := wrapped(p, script, []string{"OTHER=" + other})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return &out, cmd.Wait
	}
	outB, waitB := start(b, honest, "")
	outA, waitA := start(a, hostile, b.Upper)
	errA, errB := waitA(), waitB()
	if errB != nil || !strings.Contains(outB.String(), "done") {
		t.Fatalf("the honest run: %v: %s", errB, outB)
	}
	if errA != nil || !strings.Contains(outA.String(), "done") {
		t.Fatalf("the hostile run: %v: %s", errA, outA)
	}
	for _, bad := range []string{"WROTE", "APPENDED", "REMOVED", "MADE", "SAW"} {
		if strings.Contains(outA.String(), bad) {
			t.Errorf("the hostile run reached the other run: %s", outA)
		}
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	if got := read(filepath.Join(a.Upper, "shared.txt")); got != "A\n" {
		t.Errorf("the hostile run's layer holds %q", got)
	}
	if got := read(filepath.Join(b.Upper, "shared.txt")); got != "B\n" {
		t.Errorf("the honest run's layer holds %q", got)
	}
	if got := read(filepath.Join(b.Upper, "mine.txt")); got != "b's work\n" {
		t.Errorf("the other layer's file is %q", got)
	}
	if _, err := os.Stat(filepath.Join(b.Upper, "forged.txt")); err == nil {
		t.Error("a file was forged in the other run's layer")
	}
	if got := read(filepath.Join(l.dir, "shared.txt")); got != "base\n" {
		t.Errorf("the loop folder changed while the runs ran: %q", got)
	}

	// A run that starts after the honest one ended sees its work with the
	// folder untouched: the finished layer laid under the new run's own
	// (Lower), its removal included. The folder never changes while a run
	// is mounted over it, as overlayfs requires.
	c := slot("loop-3")
	c.Lower = []string{b.Upper}
	p := l.policy(Bwrap)
	p.Layers = []Layer{c}
	cmd, err := wrapped(p, `cat shared.txt mine.txt; [ -e gone.txt ] && echo "gone.txt is back"; echo C > shared.txt; echo done`, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "B\nb's work\ndone\n" {
		t.Fatalf("the run over the finished layer: %v: %q", err, out)
	}
	if read(filepath.Join(c.Upper, "shared.txt")) != "C\n" || read(filepath.Join(b.Upper, "shared.txt")) != "B\n" || read(filepath.Join(l.dir, "shared.txt")) != "base\n" {
		t.Error("the new run's write reached the finished layer or the folder")
	}
	if _, err := os.Stat(filepath.Join(l.dir, "gone.txt")); err != nil {
		t.Error("the folder lost gone.txt before any layer was applied")
	}
}

// TestSmallHelper runs the layer tests again with the small helper binary
// (cmd/looprinter-sandbox) beside the running binary, as `go install
// ./cmd/...` places it: a copy of this test binary in a folder with the
// helper built from the same source, where nshelper.Path must pick the
// helper, and every layer test must pass with it.
func TestSmallHelper(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	if os.Getenv("SANDBOX_TEST_SMALL_HELPER") != "" {
		t.Skip("already the copy")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the helper")
	}
	d := t.TempDir()
	helper := filepath.Join(d, nshelper.HelperName)
	build := exec.Command(goBin, "build", "-o", helper, "github.com/looprinter/looprinter/cmd/looprinter-sandbox")
	if out, err := build.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" && os.Getuid() == 0 {
			t.Fatalf("build the helper: %v: %s", err, out)
		}
		t.Skipf("cannot build the helper here (outside the module?): %v: %s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	copyExe := filepath.Join(d, "sandbox.test")
	if err := os.WriteFile(copyExe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copyExe, "-test.count=1", "-test.v", "-test.run", "^(TestHelperIsSmall|TestLayeredBwrap|TestLayerSlotsIsolated|TestBwrapNetworkAndMasks|TestBwrapNetworkOff|TestCheckBox.*|TestView.*)$")
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_SMALL_HELPER="+helper)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestHelperIsSmall") {
		t.Fatalf("the layer tests with the small helper: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "--- ") {
			t.Log(line)
		}
	}
}

// TestHelperIsSmall: in TestSmallHelper's copy, the helper started is the
// small one.
func TestHelperIsSmall(t *testing.T) {
	want := os.Getenv("SANDBOX_TEST_SMALL_HELPER")
	if want == "" {
		t.Skip("run by TestSmallHelper")
	}
	if got, err := nshelper.Path(); err != nil || got != want {
		t.Fatalf("helper %q (%v), want %q", got, err, want)
	}
}

// Runs of a loop at once never share a private temporary folder: each
// slot's is its own (one run's start empties its folder, which raced with
// and emptied another run's, and a hostile run could leave files in the
// other's /tmp), with and without layers.
func TestSlotsHaveTheirOwnTempDir(t *testing.T) {
	need(t, Bwrap)
	l := newLayout(t)
	tmpOf := func(p Policy) string {
		t.Helper()
		_, _, env, err := p.Wrap("/bin/true", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "TMPDIR="); ok {
				return v
			}
		}
		t.Fatalf("no TMPDIR in %q", env)
		return ""
	}
	cases := []func(int) Policy{func(slot int) Policy { p := l.policy(Bwrap); p.Slot = slot; return p }}
	if LayerProbe() == nil {
		cases = append(cases, func(slot int) Policy {
			p := l.policy(Bwrap)
			p.Slot = slot
			d := filepath.Join(l.state, fmt.Sprintf("layer-%d", slot))
			lay := Layer{Target: l.dir, Upper: filepath.Join(d, "upper"), Work: filepath.Join(d, "work")}
			if _, err := PrepareLayer(lay); err != nil {
				t.Fatal(err)
			}
			p.Layers = []Layer{lay}
			return p
		})
	}
	for i, mk := range cases {
		a, b := tmpOf(mk(0)), tmpOf(mk(1))
		if a == b || a != TempDir(l.dir) && a != TempDirOf(l.dir, 0) {
			t.Errorf("case %d: slot 0's TMPDIR %s, slot 1's %s: want two folders", i, a, b)
		}
		os.WriteFile(filepath.Join(a, "left"), []byte("x"), 0o600)
		tmpOf(mk(1))
		if _, err := os.Stat(filepath.Join(a, "left")); err != nil {
			t.Errorf("case %d: slot 1's start emptied slot 0's folder: %v", i, err)
		}
	}
}
