//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkCheckBox runs a check as the judge will — Command, Run,
// cleanup — in a tree with a tiny Go package and 0 or 10,000 more files:
// `true` and `go test -count=1 .`, unconfined (off) and under each check
// box kind in turn (interleaved, so a busy machine slows them alike). It
// reports each kind's median and its median cost over off (target: at most
// 30 ms), and bubblewrap alone with the box's flags (bwrap-bare) for
// scale. The user's HOME and Go caches are the ones of the environment.
func BenchmarkCheckBox(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command")
	}
	gocache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		b.Fatal(err)
	}
	kinds := []string{Off}
	for _, k := range []string{Bwrap, Landlock} {
		if _, err := Resolve(k); err == nil {
			kinds = append(kinds, k)
		}
	}
	for _, n := range []int{0, 10000} {
		tree := b.TempDir()
		writeTinyModule(b, tree)
		for i := 0; i < n; i++ {
			sub := filepath.Join(tree, "data", fmt.Sprintf("d%03d", i/100))
			os.MkdirAll(sub, 0o755)
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.txt", i)), []byte("x\n"), 0o644)
		}
		priv := b.TempDir()
		cache := strings.TrimSpace(string(gocache))
		boxes := map[string]*CheckBox{}
		for _, k := range kinds {
			box, err := NewCheckBox(CheckBoxOptions{Kind: k, Tree: tree, Hide: []string{priv}})
			if err != nil {
				b.Fatal(err)
			}
			defer box.Close()
			boxes[k] = box
		}
		for _, check := range []struct{ name, line string }{{"true", "true"}, {"gotest", shellQuote(goBin) + " test -count=1 ."}} {
			b.Run(fmt.Sprintf("files=%d/%s", n, check.name), func(b *testing.B) {
				times := map[string][]time.Duration{}
				for i := 0; i < b.N; i++ {
					if boxes[Bwrap] != nil {
						// bubblewrap alone, with the box's flags and no layer:
						// what the machine charges for any bubblewrap start.
						start := time.Now()
						cmd := exec.Command(bwrapOnce.path, "--die-with-parent", "--unshare-pid", "--new-session", "--unshare-user", "--cap-drop", "ALL", "--unshare-net",
							"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", tree, tree, "--bind", cache, cache, "--chdir", tree, "--", "/bin/sh", "-c", check.line)
						if out, err := cmd.CombinedOutput(); err != nil {
							b.Fatalf("bubblewrap alone: %v: %s", err, out)
						}
						times["bwrap-bare"] = append(times["bwrap-bare"], time.Since(start))
					}
					for _, k := range kinds {
						start := time.Now()
						cmd, cleanup, err := boxes[k].Command(context.Background(), tree, check.line, os.Environ())
						if err != nil {
							b.Fatal(err)
						}
						out, err := cmd.CombinedOutput()
						cleanup()
						if err != nil {
							b.Fatalf("%s: %v: %s", k, err, out)
						}
						times[k] = append(times[k], time.Since(start))
					}
				}
				med := map[string]float64{}
				all := kinds
				if boxes[Bwrap] != nil {
					all = append(append([]string(nil), kinds...), "bwrap-bare")
				}
				for _, k := range all {
					d := times[k]
					sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
					med[k] = float64(d[len(d)/2]) / 1e6
					b.ReportMetric(med[k], k+"-ms")
				}
				for _, k := range all[1:] {
					b.ReportMetric(med[k]-med[Off], k+"-extra-ms")
				}
			})
		}
	}
}

func writeTinyModule(tb testing.TB, dir string) {
	tb.Helper()
	for name, body := range map[string]string{
		"go.mod":    "module tiny\n\ngo 1.22\n",
		"a.go":      "package tiny\n\nfunc Add(a, b int) int { return a + b }\n",
		"a_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
