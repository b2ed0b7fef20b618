//go:build !windows

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// The start cost of each kind: Wrap plus starting /bin/true and waiting for
// it, against starting /bin/true bare.
func benchWrap(b *testing.B, kind string) {
	if kind != Off {
		need(b, kind)
	}
	dir := b.TempDir()
	defer os.RemoveAll(TempDir(dir))
	home := b.TempDir()
	p := Policy{Kind: kind, Dir: dir, Writable: []string{home}, ReadOnly: []string{dir + "/loop.yaml"}}
	os.WriteFile(dir+"/loop.yaml", nil, 0o644)
	if _, err := Resolve(kind); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path, args, extra, err := p.Wrap("/bin/true", nil)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

func BenchmarkWrapOff(b *testing.B)      { benchWrap(b, Off) }
func BenchmarkWrapBwrap(b *testing.B)    { benchWrap(b, Bwrap) }
func BenchmarkWrapLandlock(b *testing.B) { benchWrap(b, Landlock) }

// BenchmarkStartCost runs /bin/true bare, under bwrap and under landlock in
// turn, and reports the median wall time of each (interleaved, so a busy
// machine slows all three alike).
func BenchmarkStartCost(b *testing.B) {
	dir := b.TempDir()
	defer os.RemoveAll(TempDir(dir))
	kinds := []string{Off}
	for _, k := range []string{Bwrap, Landlock} {
		if _, err := Resolve(k); err == nil {
			kinds = append(kinds, k)
		}
	}
	times := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, k := range kinds {
			start := time.Now()
			path, args, extra, err := Policy{Kind: k, Dir: dir}.Wrap("/bin/true", nil)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(path, args...)
			cmd.Env = append(os.Environ(), extra...)
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			times[k] = append(times[k], time.Since(start))
		}
	}
	for _, k := range kinds {
		d := times[k]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		b.ReportMetric(float64(d[len(d)/2])/1e6, k+"-median-ms")
	}
}

// BenchmarkAgentStart starts /bin/true as the engine starts an agent under
// the default sandbox, with 0, 1,000 and 10,000 protected files in the loop
// folder: "layer" is the default (one copy-on-write layer over the folder,
// the protected files judged after the run), "binds" the fallback where no
// layer can be made (one read-only bind per protected file), and "bare"
// the same start unconfined. Each sub-benchmark reports its median.
func BenchmarkAgentStart(b *testing.B) {
	if _, err := Resolve(Bwrap); err != nil {
		b.Skip(err)
	}
	layers := LayerProbe() == nil
	for _, n := range []int{0, 1000, 10000} {
		dir := b.TempDir()
		defer os.RemoveAll(TempDir(dir))
		ro := make([]string, 0, n)
		for i := 0; i < n; i++ {
			sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/100))
			os.MkdirAll(sub, 0o755)
			f := filepath.Join(sub, fmt.Sprintf("f%d_test.go", i))
			os.WriteFile(f, []byte("package x\n"), 0o644)
			ro = append(ro, f)
		}
		state := b.TempDir()
		lay := Layer{Target: dir, Upper: filepath.Join(state, "upper"), Work: filepath.Join(state, "work")}
		PrepareLayer(lay)
		modes := map[string]Policy{
			"bare":  {Kind: Off, Dir: dir},
			"layer": {Kind: Bwrap, Dir: dir, ReadOnly: ro, Layers: []Layer{lay}},
		}
		if n <= 1000 { // 10,000 binds take minutes per start
			modes["binds"] = Policy{Kind: Bwrap, Dir: dir, ReadOnly: ro}
		}
		for _, mode := range []string{"bare", "layer", "binds"} {
			p, ok := modes[mode]
			if !ok || (mode == "layer" && !layers) {
				continue
			}
			b.Run(fmt.Sprintf("%s-%d", mode, n), func(b *testing.B) {
				var d []time.Duration
				for i := 0; i < b.N; i++ {
					start := time.Now()
					path, args, extra, err := p.Wrap("/bin/true", nil)
					if err != nil {
						b.Fatal(err)
					}
					cmd := exec.Command(path, args...)
					cmd.Env = append(os.Environ(), extra...)
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%v: %s", err, out)
					}
					d = append(d, time.Since(start))
				}
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				b.ReportMetric(float64(d[len(d)/2])/1e6, "median-ms")
			})
		}
	}
}
