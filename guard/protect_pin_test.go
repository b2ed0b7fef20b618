package guard

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The change list's fallback without a watch compares size and mtime of
// every file: a file changed in either, one added and one removed are
// listed, sorted; an unchanged one is not; skipped folders are not walked.
func TestPinTreeStampsAndChangedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("same.txt", "a")
	write("size.txt", "a")
	write("mtime.txt", "a")
	write("gone.txt", "a")
	write("sub/deep.txt", "a")
	write(".git/HEAD", "ref")
	before, err := treeStamps(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 5 || before["sub/deep.txt"].size != 1 {
		t.Fatalf("stamps %+v", before)
	}
	if _, ok := before[".git/HEAD"]; ok {
		t.Error("a skipped folder was walked")
	}
	write("size.txt", "ab")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "mtime.txt"), old, old)
	os.Remove(filepath.Join(dir, "gone.txt"))
	write("new.txt", "a")
	write(".git/HEAD", "other")
	after, err := treeStamps(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := changedFiles(before, after)
	if want := []string{"gone.txt", "mtime.txt", "new.txt", "size.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("changed %q, want %q", got, want)
	}
	if got := changedFiles(after, after); got != nil {
		t.Errorf("no change: %q", got)
	}
	if _, err := treeStamps(filepath.Join(dir, "missing")); err == nil {
		t.Error("a loop folder that is gone is no error")
	}
}

// A file that shows an ecosystem after the rules were built extends them;
// crates are kept once each; the ecosystems are listed sorted.
func TestPinNoteNewEcosystemsAndCrates(t *testing.T) {
	dir, l := protectFixture(t, `objective: x
verify: ["true"]
`, map[string]string{"Cargo.toml": "[package]\n", "b/Cargo.toml": "[package]\n"})
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Ecosystems(); !reflect.DeepEqual(got, []string{ecoRust}) {
		t.Fatalf("ecosystems %q", got)
	}
	if _, ok := r.ProtectNew("a/.cargo/config.toml"); ok {
		t.Fatal("a crate not yet known has its configuration protected")
	}
	r.note("a/Cargo.toml")
	r.note("a/Cargo.toml")
	r.note("b/Cargo.toml")
	if !reflect.DeepEqual(r.crates, []string{"", "a", "b"}) {
		t.Errorf("crates %q, want each once, sorted", r.crates)
	}
	if p, ok := r.ProtectNew("a/.cargo/config.toml"); !ok || !strings.Contains(p.Rule, "rust-test-config") {
		t.Errorf("the new crate's configuration: %+v %v", p, ok)
	}
	r.note("web/package.json")
	r.note("tool.py")
	if got := r.Ecosystems(); !reflect.DeepEqual(got, []string{ecoJS, ecoPython, ecoRust}) {
		t.Errorf("ecosystems %q", got)
	}
}

// A folder named vendor is a Go vendor folder only beside a go.mod file.
func TestPinGoVendorFolder(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "m", "vendor"), 0o755)
	os.MkdirAll(filepath.Join(dir, "d", "go.mod"), 0o755) // a folder, not a go.mod
	os.MkdirAll(filepath.Join(dir, "d", "vendor"), 0o755)
	os.WriteFile(filepath.Join(dir, "m", "go.mod"), []byte("module m\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module top\n"), 0o644)
	for _, c := range []struct {
		rel, name string
		want      bool
	}{
		{"vendor", "vendor", true},
		{"m/vendor", "vendor", true},
		{"m/node_modules", "node_modules", false},
		{"d/vendor", "vendor", false},
		{"x/vendor", "vendor", false},
	} {
		if got := goVendorFolder(dir, c.rel, c.name); got != c.want {
			t.Errorf("goVendorFolder(%q) = %v", c.rel, got)
		}
	}
}

// A deliverable a check runs is the work under review, not a gate program;
// the loop file and the user's globs still protect their files.
func TestPinFreeDeliverables(t *testing.T) {
	dir, l := protectFixture(t, `objective: x
verify: ["sh check.sh", "./tool.sh"]
protect: ["tool.sh"]
`, map[string]string{"check.sh": "", "tool.sh": "!"})
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Rule("check.sh"); !ok {
		t.Fatal("the gate program is not protected to begin with")
	}
	r.FreeDeliverables([]string{"check.sh", filepath.Join(dir, "tool.sh"), "loop.yaml", "", "../out.sh"})
	if p, ok := r.Rule("check.sh"); ok {
		t.Errorf("a deliverable stays protected as %q", p.Rule)
	}
	if p, ok := r.Rule("tool.sh"); !ok || !strings.HasPrefix(p.Rule, "protect[0]") {
		t.Errorf("a user glob was lifted: %+v %v", p, ok)
	}
	if p, ok := r.Rule("loop.yaml"); !ok || p.Rule != ruleLoopFile {
		t.Errorf("the loop file was lifted: %+v %v", p, ok)
	}
	if _, ok := r.Rule(""); ok {
		t.Error("an empty path is protected")
	}
	if _, ok := r.ProtectNew(""); ok {
		t.Error("an empty new path is protected")
	}
}

// How a user lets the agent edit a protected file depends on its rule.
func TestPinProtectedAllow(t *testing.T) {
	for _, c := range []struct {
		p    Protected
		want string
	}{
		{Protected{Path: "loop.yaml", Rule: ruleLoopFile}, "the loop file is never the agent's to edit"},
		{Protected{Path: "a_test.go", Rule: "x", Default: true}, `add protect_except: ["a_test.go"] to the loop file`},
		{Protected{Path: "data.txt", Rule: "protect[0]"}, "narrow or remove that protect glob in the loop file"},
	} {
		if got := c.p.Allow(); got != c.want {
			t.Errorf("%+v: %q", c.p, got)
		}
	}
}
