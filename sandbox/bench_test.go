package sandbox

import (
	"os"
	"os/exec"
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
