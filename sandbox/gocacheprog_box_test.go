//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// userGoCacheWarm is the test process's own Go build cache (the user's),
// warm for a build of tree: the test builds it once unconfined.
func userGoCacheWarm(t *testing.T, tree string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command")
	}
	out, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(strings.TrimSpace(string(out)), 0o755)
	g, err := canonical(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "build", "./...")
	cmd.Dir = tree
	cmd.Env = append(os.Environ(), "GOCACHE="+g, "GOFLAGS=", "GOCACHEPROG=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("warming the user's cache: %v\n%s", err, out)
	}
	return g
}

// Under Landlock a check's go reads the user's warm build cache (the
// loop's cache layer is empty): it compiles none of the standard library;
// and a check's code writes neither the user's cache nor the layer.
func TestCheckBoxLandlockUserGoCache(t *testing.T) {
	f := newBoxFixture(t)
	need(t, Landlock)
	os.WriteFile(filepath.Join(f.tree, "go.mod"), []byte("module example.com/m\n\ngo 1.24\n"), 0o644)
	os.WriteFile(filepath.Join(f.tree, "m.go"), []byte("package m\n\nimport \"strconv\"\n\nfunc F(n int) string { return strconv.Itoa(n) }\n"), 0o644)
	user := userGoCacheWarm(t, f.tree)
	var entry string
	filepath.WalkDir(user, func(p string, d os.DirEntry, err error) error {
		if err == nil && entry == "" && strings.HasSuffix(p, "-a") {
			entry = p
		}
		return nil
	})
	before, err := os.ReadFile(entry)
	if err != nil {
		t.Fatalf("no entry in the user's cache %s: %v", user, err)
	}
	env := append(withoutEnv(f.env, "GOCACHE"), "GOCACHE="+user, "GOFLAGS=", "GOTOOLCHAIN=local")
	layer := CheckCache{Dir: filepath.Join(f.priv, "engine", "cache")}
	o := CheckBoxOptions{Kind: Landlock, Tree: f.tree, Env: env, Cache: &layer, Scratch: filepath.Join(f.priv, "scratch")}
	os.MkdirAll(o.Scratch, 0o755)
	b, err := NewCheckBox(o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	out, code := runBox(t, b, f.tree, "go build -x ./... 2>&1", env)
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("go build: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "-p strconv ") || strings.Contains(out, "-p runtime ") {
		t.Fatalf("the check compiled the standard library again (%v): its go did not read the user's cache\n%s", took, out)
	}
	t.Logf("go build in the box, the user's cache warm, the layer empty: %v", took)

	probe := filepath.Join(user, "looprinter-box-probe")
	poison := filepath.Join(layer.Dir, cacheLandlock, "gocache", "poison")
	line := `{ echo x > '` + probe + `'; echo poison >> '` + entry + `'; } 2>/dev/null
{ mkdir -p '` + filepath.Dir(poison) + `'; echo poison > '` + poison + `'; } 2>/dev/null
echo "progs=$(env | grep -c '^GOCACHEPROG=')"; true`
	out, _ = runBox(t, b, f.tree, line, env)
	if _, err := os.Stat(probe); err == nil {
		os.Remove(probe)
		t.Error("a check wrote a file in the user's build cache")
	}
	if after, _ := os.ReadFile(entry); string(after) != string(before) {
		t.Errorf("a check changed an entry of the user's build cache: %q", after)
	}
	if _, err := os.Stat(poison); err == nil {
		t.Error("a check wrote the loop's cache layer")
	}
	if !strings.Contains(out, "progs=1\n") {
		t.Errorf("a check's go should get the cache program: %s", out)
	}
}

// A user's build cache an agent or a check can write (in the tree, an
// agent's temporary folder, the cache layer) is not read through the
// cache program.
func TestCheckBoxLandlockUserGoCacheRefused(t *testing.T) {
	f := newBoxFixture(t)
	need(t, Landlock)
	layer := CheckCache{Dir: filepath.Join(f.priv, "engine", "cache")}
	for _, g := range []string{
		filepath.Join(f.tree, ".cache", "go-build"),
		filepath.Join(os.TempDir(), "looprinter-sandbox-0123456789abcdef", "go-build"),
		filepath.Join(layer.Dir, "go-build"),
		filepath.Join(f.priv, "engine", "home", "go-build"),
	} {
		if err := os.MkdirAll(g, 0o755); err != nil {
			t.Fatal(err)
		}
		env := append(withoutEnv(f.env, "GOCACHE"), "GOCACHE="+g)
		o := CheckBoxOptions{Kind: Landlock, Tree: f.tree, Env: env, Cache: &layer, Hide: []string{filepath.Join(f.priv, "engine")}}
		b, err := NewCheckBox(o)
		if err != nil {
			t.Fatal(err)
		}
		if u := b.userGoCache(); u != "" {
			t.Errorf("GOCACHE=%s: read through the cache program", g)
		}
		out, _ := runBox(t, b, f.tree, `echo "progs=$(env | grep -c '^GOCACHEPROG=')"`, env)
		b.Close()
		if !strings.Contains(out, "progs=0\n") {
			t.Errorf("GOCACHE=%s: a check got a cache program: %s", g, out)
		}
	}
	os.RemoveAll(filepath.Join(os.TempDir(), "looprinter-sandbox-0123456789abcdef"))
}
