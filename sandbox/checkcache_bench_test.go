//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkCheckCache is a Go loop's check, `go test -count=1 ./...` of a
// package that imports a little of the standard library, with the user's
// Go build cache EMPTY (a fresh machine, CI, a container), each check in a
// box of its own as a gate's: without a cache layer (cold: every check
// compiles the standard library again; run once, it is slow), and with the
// loop's cache layer after the baseline's warm-up (layer); against the
// same check with the user's cache WARM (warm-user: a box without a layer;
// bare: unconfined). It reports the medians in ms, layer/warm-user (target:
// at most 1.5) and layer/bare, per confined kind. Run with -benchtime Nx.
func BenchmarkCheckCache(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command")
	}
	for _, kind := range []string{Bwrap, Landlock} {
		if _, err := Resolve(kind); err != nil {
			continue
		}
		b.Run(kind, func(b *testing.B) {
			root, _ := filepath.EvalSymlinks(b.TempDir())
			tree := filepath.Join(root, "tree")
			os.MkdirAll(tree, 0o755)
			os.WriteFile(filepath.Join(tree, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
			os.WriteFile(filepath.Join(tree, "m.go"), []byte("package m\n\nimport (\n\t\"encoding/json\"\n\t\"regexp\"\n)\n\nfunc Name(s string) (string, error) {\n\tb, err := json.Marshal(regexp.MustCompile(`\\s+`).ReplaceAllString(s, \" \"))\n\treturn string(b), err\n}\n"), 0o644)
			os.WriteFile(filepath.Join(tree, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestName(t *testing.T) {\n\tif s, _ := Name(\"a  b\"); s != `\"a b\"` {\n\t\tt.Fatal(s)\n\t}\n}\n"), 0o644)
			envFor := func(home string) []string {
				env := os.Environ()
				for _, k := range []string{"HOME", "GOCACHE", "XDG_CACHE_HOME", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOENV"} {
					env = withoutEnv(env, k)
				}
				os.MkdirAll(home, 0o755)
				return append(env, "HOME="+home, "GOPATH="+filepath.Join(root, "gopath"), "GOTOOLCHAIN=local")
			}
			cold, warm := envFor(filepath.Join(root, "cold-home")), envFor(filepath.Join(root, "warm-home"))
			line := shellQuote(goBin) + " test -count=1 ./..."
			bare := func(env []string) time.Duration {
				start := time.Now()
				cmd := exec.Command("/bin/sh", "-c", line)
				cmd.Dir, cmd.Env = tree, env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("bare: %v: %s", err, out)
				}
				return time.Since(start)
			}
			box := func(env []string, c *CheckCache) time.Duration {
				start := time.Now()
				bx, err := NewCheckBox(CheckBoxOptions{Kind: kind, Tree: tree, Env: env, Hide: []string{filepath.Join(root, "state")}, Scratch: root, Cache: c})
				if err != nil {
					b.Fatal(err)
				}
				defer bx.Close()
				cmd, cleanup, err := bx.Command(context.Background(), tree, line, env)
				if err != nil {
					b.Fatal(err)
				}
				out, err := cmd.CombinedOutput()
				cleanup()
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				bx.Close()
				return time.Since(start)
			}
			bare(warm) // the user's cache, warm
			layer := &CheckCache{Dir: filepath.Join(root, "state", "cache")}
			var warmUp time.Duration
			{
				start := time.Now()
				box(cold, &CheckCache{Dir: layer.Dir, Warm: true})
				if err := FinishCacheWarm(*layer, cold, tree); err != nil {
					b.Fatal(err)
				}
				warmUp = time.Since(start)
			}
			times := map[string][]time.Duration{}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i == 0 {
					times["cold"] = append(times["cold"], box(cold, nil))
				}
				times["layer"] = append(times["layer"], box(cold, layer))
				times["warm-user"] = append(times["warm-user"], box(warm, nil))
				times["bare"] = append(times["bare"], bare(warm))
			}
			b.StopTimer()
			ms := func(k string) float64 {
				d := append([]time.Duration(nil), times[k]...)
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			for _, k := range []string{"cold", "layer", "warm-user", "bare"} {
				b.ReportMetric(ms(k), strings.ReplaceAll(k, "-", "")+"-ms")
			}
			b.ReportMetric(float64(warmUp.Microseconds())/1000, "warmup-ms")
			b.ReportMetric(ms("layer")/ms("warm-user"), "layer/warm-user")
			b.ReportMetric(ms("layer")/ms("bare"), "layer/bare")
			b.ReportMetric(ms("cold")/ms("layer"), "cold/layer")
		})
	}
}
