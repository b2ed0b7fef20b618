package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestExamples runs testdata/examples/*.txtar: each copies one folder of
// examples/ into its work directory with `example NAME`, validates it, and
// runs it to DONE against the built-in scripted fake agent. $EXAMPLES is the
// examples folder itself, to compare against.
func TestExamples(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	// The Go example builds and tests a module: share the Go caches.
	goEnv := map[string]string{}
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		vals := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
			if i < len(vals) {
				goEnv[k] = vals[i]
			}
		}
	}
	p := ScriptParams()
	p.Dir = filepath.Join("..", "..", "testdata", "examples")
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if setup != nil {
			if err := setup(env); err != nil {
				return err
			}
		}
		env.Setenv("EXAMPLES", examples)
		env.Setenv("GOFLAGS", "-mod=mod")
		env.Setenv("GOTOOLCHAIN", "local")
		env.Setenv("GOPROXY", "off")
		for k, v := range goEnv {
			env.Setenv(k, v)
		}
		return nil
	}
	cmds := map[string]func(*testscript.TestScript, bool, []string){}
	for k, v := range p.Cmds {
		cmds[k] = v
	}
	cmds["example"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: example NAME")
		}
		ts.Check(copyTree(filepath.Join(examples, args[0]), ts.MkAbs(".")))
	}
	p.Cmds = cmds
	testscript.Run(t, p)
}

// TestExamplesAllTested: every example folder has its script test and a README.
func TestExamplesAllTested(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		for _, want := range []string{
			filepath.Join("..", "..", "examples", e.Name(), "loop.yaml"),
			filepath.Join("..", "..", "examples", e.Name(), "README.md"),
			filepath.Join("..", "..", "testdata", "examples", e.Name()+".txtar"),
		} {
			if _, err := os.Stat(want); err != nil {
				t.Errorf("example %s: %v", e.Name(), err)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d examples, want at least 3", n)
	}
}

// copyTree copies a folder, keeping file modes (scripts stay executable).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if d.Name() == "output" || d.Name() == "working-records" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}
