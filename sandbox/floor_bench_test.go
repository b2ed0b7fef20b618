//go:build linux

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"
)

// BenchmarkConfinedFloor is the confined floor: the CPU time (user and
// system, of the whole process tree: the started process's rusage, which
// counts every descendant it waited for, and this process's own during
// the start and the wait) of starting /bin/true as the engine starts an
// agent under the default sandbox (copy-on-write layers over the loop
// folder and HOME, a network namespace with the relay to a proxy's
// socket), against bare bubblewrap (the same bwrap flags, no layer, no
// network namespace). The modes run in turn, so a busy machine slows them
// alike: "bwrap" bare bubblewrap, "layer" the agent's start with this test
// binary as the helper (smaller than the engine's; its init function runs
// at the same point, before the heavy packages), and one mode for each
// binary LOOPRINTER_BENCH_HELPER names. Each reports its median CPU and
// wall time, and its median CPU above bare bubblewrap, pair by pair.
func BenchmarkConfinedFloor(b *testing.B) {
	if _, err := Resolve(Bwrap); err != nil {
		b.Skip(err)
	}
	if err := LayerProbe(); err != nil {
		b.Skip(err)
	}
	dir, home, state := b.TempDir(), b.TempDir(), b.TempDir()
	defer os.RemoveAll(TempDir(dir))
	defer removeAllWritable(state)
	sock := filepath.Join(state, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	lay := func(name, target string) Layer {
		l := Layer{Target: target, Upper: filepath.Join(state, name, "upper"), Work: filepath.Join(state, name, "work")}
		if _, err := PrepareLayer(l); err != nil {
			b.Fatal(err)
		}
		return l
	}
	layered := Policy{Kind: Bwrap, Dir: dir, Writable: []string{home},
		Layers: []Layer{lay("dir", dir), lay("home", home)},
		Net:    &Network{Socket: sock, Port: 3128}}
	type mode struct {
		name   string
		p      Policy
		helper string
	}
	modes := []mode{
		{"bwrap", Policy{Kind: Bwrap, Dir: dir, Writable: []string{home}}, ""},
		{"layer", layered, ""},
	}
	// LOOPRINTER_BENCH_HELPER: more binaries as the helper, separated by
	// colons, each a mode named after its file (the engine's, go build -o
	// /tmp/b/looprinter ./cmd/looprinter, and the small helper's, go build
	// -o /tmp/b/looprinter-sandbox ./cmd/looprinter-sandbox).
	for _, h := range filepath.SplitList(os.Getenv("LOOPRINTER_BENCH_HELPER")) {
		modes = append(modes, mode{filepath.Base(h), layered, h})
	}
	cpu := map[string][]time.Duration{}
	wall := map[string][]time.Duration{}
	var above []time.Duration
	aboveBy := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var bare time.Duration
		for _, m := range modes {
			path, args, extra, err := m.p.Wrap("/bin/true", nil)
			if err != nil {
				b.Fatal(err)
			}
			if m.helper != "" {
				path = m.helper
			}
			cmd := exec.Command(path, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), extra...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			self0 := selfCPU()
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v: %s", m.name, err, out)
			}
			wall[m.name] = append(wall[m.name], time.Since(start))
			// The starter's share counts too (its fork, its wait).
			c := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() + selfCPU() - self0
			cpu[m.name] = append(cpu[m.name], c)
			switch m.name {
			case "bwrap":
				bare = c
			case "layer":
				above = append(above, c-bare)
			}
			if m.helper != "" {
				aboveBy[m.name] = append(aboveBy[m.name], c-bare)
			}
		}
	}
	median := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2]) / 1e6
	}
	for _, m := range modes {
		b.ReportMetric(median(cpu[m.name]), m.name+"-cpu-ms")
		b.ReportMetric(median(wall[m.name]), m.name+"-wall-ms")
	}
	b.ReportMetric(median(above), "above-bwrap-cpu-ms")
	for name, d := range aboveBy {
		b.ReportMetric(median(d), name+"-above-bwrap-cpu-ms")
	}
}

// selfCPU is this process's user and system time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
