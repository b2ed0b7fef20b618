//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cpuNow is this process's CPU (engine) and its waited-for children's
// (children: the layer helper, bubblewrap, the check's shell and everything
// under them).
func cpuNow() (engine, children time.Duration) {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime), tv(kids.Utime) + tv(kids.Stime)
}

// BenchmarkGateCPU runs a gate of 6 checks (`true`, the cheapest check: the
// box's own cost shows) as the judge does, under `sandbox: off` and in a
// bubblewrap check box, interleaved (a loaded machine slows both alike),
// and reports the median CPU per check of each and the box's cost over
// off: this process's CPU and its children's, and the two apart
// (KIND-engine, KIND-children; a box's children are counted by its
// cgroups). One gate is one box (NewCheckBox, each check, Close).
func BenchmarkGateCPU(b *testing.B) {
	if _, err := Resolve(Bwrap); err != nil || LayerProbe() != nil {
		b.Skip("no bubblewrap with layers here")
	}
	const checks = 6
	tree, priv := b.TempDir(), b.TempDir()
	writeTinyModule(b, tree)
	gate := func(kind string) (engine, children time.Duration) {
		e0, c0 := cpuNow()
		box, err := NewCheckBox(CheckBoxOptions{Kind: kind, Tree: tree, Hide: []string{priv}, Scratch: priv})
		if err != nil {
			b.Fatal(err)
		}
		if err := runGate(box, tree, checks); err != nil {
			b.Fatalf("%s: %v", kind, err)
		}
		box.Close()
		e1, c1 := cpuNow()
		return (e1 - e0) / checks, (c1 - c0) / checks
	}
	// Every process of a bubblewrap box runs in a cgroup of the box's (or
	// of the check's): what they spent is read from it, since bubblewrap
	// leaves the processes of its PID namespace to be reaped by no one
	// the engine waits for (getrusage does not see them).
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
	if CgroupProbe() != nil {
		b.Skip("no cgroup here: the box's CPU cannot be counted")
	}
	per := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, k := range []string{Off, Bwrap} {
			boxCPU.Store(0)
			e, c := gate(k)
			if k == Bwrap {
				c = time.Duration(boxCPU.Load()) / checks
			}
			per[k] = append(per[k], e+c)
			per[k+"-engine"] = append(per[k+"-engine"], e)
			per[k+"-children"] = append(per[k+"-children"], c)
		}
	}
	med := map[string]float64{}
	for k, d := range per {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		med[k] = float64(d[len(d)/2]) / 1e6
		b.ReportMetric(med[k], k+"-cpu-ms/check")
	}
	b.ReportMetric(med[Bwrap]-med[Off], "box-extra-cpu-ms/check")
}

// runGate runs n checks of `true` in box, one after another, as the judge
// does: in the box's server where it has one (Run), else each a process of
// its own (Command).
func runGate(box *CheckBox, tree string, n int) error {
	for i := 0; i < n; i++ {
		if env := os.Environ(); box.Serves(env) {
			var out bytes.Buffer
			code, err := box.Run(context.Background(), tree, "true", env, &out)
			if err != nil || code != 0 {
				return fmt.Errorf("exit %d, %v: %s", code, err, out.String())
			}
			continue
		}
		cmd, cleanup, err := box.Command(context.Background(), tree, "true", os.Environ())
		if err != nil {
			return err
		}
		out, err := cmd.CombinedOutput()
		cleanup()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
	}
	return nil
}
