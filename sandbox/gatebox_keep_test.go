//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The package's other tests (and BenchmarkGateCPU) measure and attack a
// box alone: each box starts its own server. The tests below keep them
// as the engine does.
func init() { keptServers.off = true }

// keepServers keeps the servers of closed boxes for the test's length,
// starting from none kept.
func keepServers(t testing.TB) {
	CloseRunBoxes()
	keptServers.Lock()
	keptServers.off, keptServers.took = false, 0
	keptServers.Unlock()
	t.Cleanup(func() {
		keptServers.Lock()
		keptServers.off = true
		keptServers.Unlock()
		CloseRunBoxes()
	})
}

func tookServers() int {
	keptServers.Lock()
	defer keptServers.Unlock()
	return keptServers.took
}

// setupSeen runs a setup in box that writes the file built in tree,
// then a check that must read it.
func setupSeen(t *testing.T, box *CheckBox, tree string) {
	t.Helper()
	cmd, done, err := box.SetupCommand(context.Background(), tree, "echo built > built", os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup: %v: %s", err, b)
	}
	done()
	var out bytes.Buffer
	if code, err := box.Run(context.Background(), tree, "cat built", os.Environ(), &out); err != nil || code != 0 || !strings.Contains(out.String(), "built") {
		t.Fatalf("the setup's output is not under the box's checks (exit %d, %v): %s", code, err, out.String())
	}
}

// runIn runs line in a new box of o's and closes it, failing t on any
// error; it returns the check's exit and output.
func runIn(t *testing.T, o CheckBoxOptions, dir, line string) (int, string) {
	t.Helper()
	box, err := NewCheckBox(o)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	var out bytes.Buffer
	code, err := box.Run(context.Background(), dir, line, os.Environ(), &out)
	if err != nil {
		t.Fatalf("%s: %v: %s", line, err, out.String())
	}
	return code, out.String()
}

// A box's server serves the next box with the same view: nothing one
// gate's check wrote (the tree, HOME, /tmp, /dev/shm) or left running
// reaches the next gate's; a changed tree is seen at once.
func TestKeptServerCarriesNothing(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	keepServers(t)
	tree, priv := t.TempDir(), t.TempDir()
	writeTinyModule(t, tree)
	home := os.Getenv("HOME")
	o := CheckBoxOptions{Kind: Bwrap, Tree: tree, Hide: []string{priv}, Scratch: priv}
	leave := `echo planted > planted; echo planted > /tmp/planted; echo planted > /dev/shm/planted; echo planted > "$HOME/.looprinter-planted" 2>/dev/null;
(sleep 2; echo late > late) >/dev/null 2>&1 &
setsid sh -c 'sleep 2; echo late > late2' >/dev/null 2>&1 &
echo ok`
	if code, out := runIn(t, o, tree, leave); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("first gate: exit %d: %s", code, out)
	}
	os.WriteFile(filepath.Join(tree, "fresh"), []byte("seen\n"), 0o644)
	time.Sleep(2500 * time.Millisecond)
	look := `for f in planted /tmp/planted /dev/shm/planted "$HOME/.looprinter-planted" late late2; do test -e "$f" && echo "LEFT $f"; done; cat fresh`
	code, out := runIn(t, o, tree, look)
	if tookServers() != 1 {
		t.Fatalf("the second gate started a server of its own (took %d kept)", tookServers())
	}
	if code != 0 || strings.Contains(out, "LEFT") || !strings.Contains(out, "seen") {
		t.Fatalf("the second gate's check saw what the first left, or not the tree (exit %d): %s", code, out)
	}
	for _, p := range []string{filepath.Join(tree, "planted"), filepath.Join(tree, "late"), filepath.Join(tree, "late2"), filepath.Join(home, ".looprinter-planted")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is on the host", p)
		}
	}
}

// A box whose view differs, or whose paths were made again, starts its
// own server; a setup's output reaches the checks of its box even after
// the box took a kept server.
func TestKeptServerOnlyForTheSameView(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	keepServers(t)
	tree, priv, other := t.TempDir(), t.TempDir(), t.TempDir()
	writeTinyModule(t, tree)
	o := CheckBoxOptions{Kind: Bwrap, Tree: tree, Hide: []string{priv}, Scratch: priv}
	runIn(t, o, tree, "true")
	// Another folder hidden: another view.
	o2 := o
	o2.Hide = []string{priv, other}
	runIn(t, o2, tree, "true")
	if tookServers() != 0 {
		t.Fatalf("a box with another view took a kept server")
	}
	// A hidden folder made again is not the one the server covered.
	os.RemoveAll(other)
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "secret"), []byte("s"), 0o644)
	if code, out := runIn(t, o2, tree, "cat "+filepath.Join(other, "secret")+" && echo READ"); code == 0 || strings.Contains(out, "READ") {
		t.Fatalf("a folder made again after the server started is readable (exit %d): %s", code, out)
	}
	if tookServers() != 0 {
		t.Fatalf("a box whose hidden folder was made again took a kept server")
	}
	// A setup after the box took a kept server: its checks see the setup.
	box, err := NewCheckBox(o)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	var out bytes.Buffer
	if code, err := box.Run(context.Background(), tree, "true", os.Environ(), &out); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, out.String())
	}
	if tookServers() != 1 {
		t.Fatalf("the same view did not take the kept server (took %d)", tookServers())
	}
	setupSeen(t, box, tree)
	if _, err := os.Stat(filepath.Join(tree, "built")); err == nil {
		t.Fatal("the setup wrote the host's tree")
	}
}

// A kept server that ended meanwhile (killed) is not taken: the next box
// starts its own and its check runs.
func TestKeptServerEnded(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	keepServers(t)
	tree, priv := t.TempDir(), t.TempDir()
	writeTinyModule(t, tree)
	o := CheckBoxOptions{Kind: Bwrap, Tree: tree, Hide: []string{priv}, Scratch: priv}
	runIn(t, o, tree, "true")
	keptServers.Lock()
	for _, s := range keptServers.all {
		s.cmd.Process.Kill()
	}
	keptServers.Unlock()
	time.Sleep(200 * time.Millisecond)
	if code, out := runIn(t, o, tree, "echo fine"); code != 0 || !strings.Contains(out, "fine") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// BenchmarkLoopGatesCPU is BenchmarkGateCPU for a loop: 5 gates of 6
// checks (`true`), each gate a box of its own (NewCheckBox, its checks,
// Close) as the judge makes them, the servers kept between gates as the
// engine keeps them; off and bubblewrap interleaved. The box's CPU is its
// server's cgroup's whole figure, read when the loop's end ends it (the
// first gate's start and the last one's end in it).
func BenchmarkLoopGatesCPU(b *testing.B) {
	need(b, Bwrap)
	needLayers(b)
	if CgroupProbe() != nil {
		b.Skip("no cgroup here: the box's CPU cannot be counted")
	}
	keepServers(b)
	const gates, checks = 5, 6
	tree, priv := b.TempDir(), b.TempDir()
	writeTinyModule(b, tree)
	var boxCPU atomic.Int64
	onCgroupEnd = func(path string) {
		st, _ := os.ReadFile(filepath.Join(path, "cpu.stat"))
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				boxCPU.Add(n * 1000)
			}
		}
	}
	defer func() { onCgroupEnd = nil }()
	loop := func(kind string) (engine, children time.Duration) {
		boxCPU.Store(0)
		e0, c0 := cpuNow()
		for g := 0; g < gates; g++ {
			box, err := NewCheckBox(CheckBoxOptions{Kind: kind, Tree: tree, Hide: []string{priv}, Scratch: priv})
			if err != nil {
				b.Fatal(err)
			}
			if err := runGate(box, tree, checks); err != nil {
				b.Fatalf("%s: %v", kind, err)
			}
			box.Close()
		}
		CloseRunBoxes() // the loop's end
		e1, c1 := cpuNow()
		c := c1 - c0
		if kind == Bwrap {
			c = time.Duration(boxCPU.Load())
		}
		return (e1 - e0) / (gates * checks), c / (gates * checks)
	}
	per := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, k := range []string{Off, Bwrap} {
			e, c := loop(k)
			per[k] = append(per[k], e+c)
			per[k+"-engine"] = append(per[k+"-engine"], e)
			per[k+"-children"] = append(per[k+"-children"], c)
		}
	}
	if tookServers() == 0 {
		b.Fatal("no gate took the kept server")
	}
	med := map[string]float64{}
	for k, d := range per {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		med[k] = float64(d[len(d)/2]) / 1e6
		b.ReportMetric(med[k], k+"-cpu-ms/check")
	}
	b.ReportMetric(med[Bwrap]-med[Off], "box-extra-cpu-ms/check")
}

// A folder hidden inside the tree, removed and made again on the host
// after a gate (the kernel then detaches the kept server's cover of it),
// is not shown to the next gate's checks: that box starts its own server.
func TestKeptServerHiddenMadeAgain(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	keepServers(t)
	tree, priv := t.TempDir(), t.TempDir()
	writeTinyModule(t, tree)
	hidden := filepath.Join(tree, "secrets")
	os.Mkdir(hidden, 0o755)
	o := CheckBoxOptions{Kind: Bwrap, Tree: tree, Hide: []string{priv, hidden}, Scratch: priv}
	if code, out := runIn(t, o, tree, "ls secrets"); code != 0 || strings.TrimSpace(out) != "" {
		t.Fatalf("exit %d: %s", code, out)
	}
	os.RemoveAll(hidden)
	os.Mkdir(hidden, 0o755)
	os.WriteFile(filepath.Join(hidden, "key"), []byte("s3cret\n"), 0o644)
	if code, out := runIn(t, o, tree, "cat secrets/key; echo END"); strings.Contains(out, "s3cret") {
		t.Fatalf("a hidden folder made again is readable to the next gate (exit %d): %s", code, out)
	}
	if tookServers() != 0 {
		t.Fatal("the box took the server whose cover of the hidden folder is gone")
	}
}

// The first check of a box that took a kept server is charged its own
// CPU, not what the server spent for the gates before it.
func TestKeptServerUsageIsTheCheck(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	if CgroupProbe() != nil {
		t.Skip("no cgroup here: a box's CPU is not read")
	}
	keepServers(t)
	tree, priv := t.TempDir(), t.TempDir()
	o := CheckBoxOptions{Kind: Bwrap, Tree: tree, Hide: []string{priv}, Scratch: priv}
	usage := func(line string) time.Duration {
		box, err := NewCheckBox(o)
		if err != nil {
			t.Fatal(err)
		}
		defer box.Close()
		var out bytes.Buffer
		code, u, err := box.RunUsage(context.Background(), tree, line, os.Environ(), &out)
		if err != nil || code != 0 || u.From != UsageBox {
			t.Fatalf("exit %d, %v, %+v: %s", code, err, u, out.String())
		}
		return u.CPU
	}
	busy := usage(`i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`)
	if busy < 200*time.Millisecond {
		t.Skipf("the busy check used only %v: too little to tell apart", busy)
	}
	if idle := usage("true"); idle >= busy/2 || tookServers() != 1 {
		t.Fatalf("the next gate's `true` is charged %v after a check of %v (took %d kept)", idle, busy, tookServers())
	}
}

// LOOPRINTER_CHECK_BOX_SERVER=gate keeps no server: each gate's box
// starts its own.
func TestKeptServerGateOnly(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	keepServers(t)
	t.Setenv("LOOPRINTER_CHECK_BOX_SERVER", "gate")
	tree, priv := t.TempDir(), t.TempDir()
	o := CheckBoxOptions{Kind: Bwrap, Tree: tree, Hide: []string{priv}, Scratch: priv}
	runIn(t, o, tree, "true")
	runIn(t, o, tree, "true")
	if n := tookServers(); n != 0 {
		t.Fatalf("took %d kept servers, want none", n)
	}
}

// A server started before any setup lays no base, kept or not: a setup
// after it gives it back, so the next check sees the setup's output.
func TestServerWithoutBaseGivenBackForASetup(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	tree, priv := t.TempDir(), t.TempDir()
	box, err := NewCheckBox(CheckBoxOptions{Kind: Bwrap, Tree: tree, Hide: []string{priv}, Scratch: priv})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	var out bytes.Buffer
	if code, err := box.Run(context.Background(), tree, "true", os.Environ(), &out); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, out.String())
	}
	box.server.key = "" // a server no other box would take
	setupSeen(t, box, tree)
}
