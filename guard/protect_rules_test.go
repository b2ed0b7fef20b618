package guard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// protectFixture writes files (path → contents; a trailing "!" in the
// contents makes it executable) and a loop file, and loads the loop.
func protectFixture(t *testing.T, loopYAML string, files map[string]string) (string, *spec.Loop) {
	t.Helper()
	dir := t.TempDir()
	files["loop.yaml"] = loopYAML
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(data, "!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	l, err := spec.Load(filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, l
}

// resolved maps each protected path to its rule.
func resolved(t *testing.T, dir string, l *spec.Loop) map[string]Protected {
	t.Helper()
	ps, err := ResolveProtected(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Protected{}
	for i, p := range ps {
		if i > 0 && ps[i-1].Path >= p.Path {
			t.Errorf("not sorted: %s before %s", ps[i-1].Path, p.Path)
		}
		out[p.Path] = p
	}
	return out
}

// wantProtected checks that each path is protected by a rule containing the
// text, and that each path of not is not protected.
func wantProtected(t *testing.T, got map[string]Protected, want map[string]string, not ...string) {
	t.Helper()
	for path, rule := range want {
		p, ok := got[path]
		switch {
		case !ok:
			t.Errorf("%s is not protected (want rule %q); protected: %v", path, rule, keys(got))
		case !strings.Contains(p.Rule, rule):
			t.Errorf("%s is protected by %q, want %q", path, p.Rule, rule)
		}
	}
	for _, path := range not {
		if p, ok := got[path]; ok {
			t.Errorf("%s is protected (%s), but should not be", path, p.Rule)
		}
	}
}

func keys(m map[string]Protected) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

const goLoop = `objective: "go test ./... passes"
verify: ["go test ./..."]
`

// The issue: `init --verify "go test ./..."` wrote protect: [] and an agent
// turned t.Fatal into t.Log in add_test.go. Tests are protected by default.
func TestProtectGo(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{
		"go.mod": "module x\n", "add.go": "package x\n", "add_test.go": "package x\n",
		"sub/sub_test.go": "package sub\n", "testdata/golden.txt": "1\n", "sub/testdata/in.json": "{}",
		"vendor/dep/dep_test.go": "package dep\n", "node_modules/x/x_test.go": "",
		"working-records/events.jsonl": "", ".git/config": "",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"add_test.go":          "go test files (default rule go-tests)",
		"sub/sub_test.go":      "go test files (default rule go-tests)",
		"testdata/golden.txt":  "go test data (default rule go-testdata)",
		"sub/testdata/in.json": "go-testdata",
		"loop.yaml":            "the loop file",
		"go.mod":               "go build configuration the tests run with (default rule go-test-config)",
		// The module's vendor folder, all of it: the build compiles it.
		"vendor/dep/dep_test.go": "vendored sources the Go build uses (default rule go-vendor)",
	}, "add.go", "node_modules/x/x_test.go", "working-records/events.jsonl", ".git/config")
	if !got["add_test.go"].Default || got["loop.yaml"].Default {
		t.Errorf("Default: test %v, loop file %v", got["add_test.go"].Default, got["loop.yaml"].Default)
	}
	if len(got) != 7 {
		t.Errorf("protected %v", keys(got))
	}

	// One path: an existing test is protected; a new one may be written.
	if rule, ok := ProtectRule(dir, l, "add_test.go"); !ok || rule != "go test files (default rule go-tests)" {
		t.Errorf("ProtectRule(add_test.go) = %q %v", rule, ok)
	}
	if rule, ok := ProtectRule(dir, l, "new_test.go"); ok {
		t.Errorf("a new test file is protected: %s", rule)
	}
	if _, ok := ProtectRule(dir, l, filepath.Join(dir, "add.go")); ok {
		t.Error("add.go is protected")
	}
	if _, ok := ProtectRule(dir, l, "../outside_test.go"); ok {
		t.Error("a path outside the folder is protected")
	}
	if got["add_test.go"].Allow() != `add protect_except: ["add_test.go"] to the loop file` {
		t.Errorf("Allow: %s", got["add_test.go"].Allow())
	}
}

func TestProtectPython(t *testing.T) {
	dir, l := protectFixture(t, `objective: "pytest passes"
verify: ["python3 -m py_compile calc.py", "python3 -m pytest -q"]
`, map[string]string{
		"pyproject.toml": "[project]\nname = \"calc\"\n", "calc.py": "", "test_calc.py": "", "pkg/calc_test.py": "",
		"tests/expected.txt": "4\n", "tests/helpers/util.py": "", "conftest.py": "", "pytest.ini": "", "tox.ini": "",
		"setup.cfg": "", ".venv/lib/test_site.py": "", "docs/testing.md": "",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"test_calc.py":          "python test files (default rule python-tests)",
		"pkg/calc_test.py":      "python-tests",
		"tests/expected.txt":    "python-tests",
		"tests/helpers/util.py": "python-tests",
		"conftest.py":           "pytest configuration (default rule python-test-config)",
		"pytest.ini":            "python-test-config",
		"tox.ini":               "python-test-config",
		"pyproject.toml":        "python-test-config",
		"setup.cfg":             "python-test-config",
	}, "calc.py", ".venv/lib/test_site.py", "docs/testing.md")

	// A new conftest.py changes how the existing tests run: refused even
	// though it is new. A new test file is work.
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := r.ProtectNew("pkg/conftest.py"); !ok || !strings.Contains(p.Rule, "python-test-config") {
		t.Errorf("a new conftest.py may be added: %+v", p)
	}
	if p, ok := r.ProtectNew("test_new.py"); ok {
		t.Errorf("a new test file is refused: %+v", p)
	}
}

// Any .py file makes a folder a Python project.
func TestProtectPythonDetectedByScript(t *testing.T) {
	dir, l := protectFixture(t, `objective: x
verify: ["python3 solve.py > out.txt", "cmp out.txt tests/expected.txt"]
`, map[string]string{"solve.py": "", "tests/expected.txt": ""})
	wantProtected(t, resolved(t, dir, l), map[string]string{
		"solve.py":           "gate program: `python3 solve.py` runs solve.py",
		"tests/expected.txt": "python-tests",
	})
}

func TestProtectJS(t *testing.T) {
	dir, l := protectFixture(t, `objective: "npm test passes"
verify: ["node --check app.js", "npm test"]
`, map[string]string{
		"package.json": "{}", "app.js": "", "src/app.test.ts": "", "src/app.spec.js": "", "src/__tests__/a.js": "",
		"test/mocha.js": "", "jest.config.js": "", ".mocharc.yml": "", "vitest.config.ts": "",
		"node_modules/lib/lib.test.js": "", "dist/app.test.js": "",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"src/app.test.ts":    "JS/TS test files (default rule js-tests)",
		"src/app.spec.js":    "js-tests",
		"src/__tests__/a.js": "js-tests",
		"test/mocha.js":      "js-tests",
		"jest.config.js":     "JS/TS test runner configuration (default rule js-test-config)",
		".mocharc.yml":       "js-test-config",
		"vitest.config.ts":   "js-test-config",
		"package.json":       "js-test-config",
	}, "app.js", "node_modules/lib/lib.test.js", "dist/app.test.js")
}

func TestProtectRust(t *testing.T) {
	dir, l := protectFixture(t, `objective: "cargo test passes"
verify: ["cargo test"]
`, map[string]string{
		"Cargo.toml": "", "src/lib.rs": "", "tests/it.rs": "", "crates/b/Cargo.toml": "", "crates/b/tests/t.rs": "",
		"crates/b/src/lib.rs": "", "target/debug/tests/x.rs": "", "docs/tests/readme.md": "",
	})
	wantProtected(t, resolved(t, dir, l), map[string]string{
		"tests/it.rs":         "rust integration tests (default rule rust-tests)",
		"crates/b/tests/t.rs": "rust-tests",
		// Listed whole; KeepTestConfigEdit keeps an edit outside its
		// profile, patch and replace tables.
		"Cargo.toml":          "cargo build profiles and patches (default rule rust-build-config)",
		"crates/b/Cargo.toml": "rust-build-config",
	}, "src/lib.rs", "crates/b/src/lib.rs", "target/debug/tests/x.rs", "docs/tests/readme.md")
}

// Issue 25: a Go module's vendor folder is runner configuration, all of it
// (not only vendor/modules.txt): an edited or added file there changes
// what the tests compile. A folder named vendor that is no module's (PHP's
// composer, a vendor folder beside no go.mod) stays a dependency folder
// the default rules do not look into.
func TestProtectGoVendor(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{
		"go.mod": "module x\n", "add.go": "package x\n",
		"vendor/modules.txt": "# a.b/c v1.0.0\n", "vendor/a.b/c/c.go": "package c\n", "vendor/a.b/c/LICENSE": "MIT\n",
		"sub/go.mod": "module x/sub\n", "sub/vendor/d/d.go": "package d\n",
		"tools/vendor/e/e.go": "package e\n", "node_modules/vendor/f.go": "package f\n",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"vendor/modules.txt":   "go-vendor",
		"vendor/a.b/c/c.go":    "vendored sources the Go build uses (default rule go-vendor)",
		"vendor/a.b/c/LICENSE": "go-vendor",
		"sub/vendor/d/d.go":    "go-vendor",
	}, "add.go", "tools/vendor/e/e.go", "node_modules/vendor/f.go")
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	// A file added to the vendor folder is refused too.
	if p, ok := r.ProtectNew("vendor/a.b/c/new.go"); !ok || p.Rule != ruleGoVendor {
		t.Errorf("a new vendored file: %+v %v", p, ok)
	}
	if p, ok := r.ProtectNew("tools/vendor/e/new.go"); ok {
		t.Errorf("a new file in a vendor folder beside no go.mod is protected: %s", p.Rule)
	}

	// Without a go.mod a vendor folder is a dependency folder.
	dir, l = protectFixture(t, `objective: "php tests pass"
verify: ["vendor/bin/phpunit"]
`, map[string]string{"composer.json": "{}", "vendor/autoload.php": "<?php\n", "vendor/bin/phpunit": "#!/bin/sh\n!"})
	wantProtected(t, resolved(t, dir, l), map[string]string{"vendor/bin/phpunit": "gate program"}, "vendor/autoload.php")
}

// Only programs are protected, never the data a gate reads: the issue's
// commands protected the deliverable.
func TestProtectGateProgramsNotData(t *testing.T) {
	dir, l := protectFixture(t, `objective: x
verify:
  - "python3 -m py_compile calc.ts"
  - "node --check app.js"
  - "bash -n x.sh"
  - "ruff check lint.rb"
  - "mypy typed.rb"
  - "grep -c . out.txt"
  - "cmp out.txt tests/expected.txt"
  - "cat data.sh | wc -l"
objective_verify:
  - "sh check.sh"
  - "./run_tests --fast"
  - "bash -c './inner.sh'"
  - ". ./env.sh && make"
  - "cd sub && ./gate"
  - "lib/helper.txt"
`, map[string]string{
		"calc.ts": "", "app.js": "", "x.sh": "", "lint.rb": "", "typed.rb": "", "out.txt": "", "tests/expected.txt": "",
		"data.sh": "", "check.sh": "", "run_tests": "!", "inner.sh": "", "env.sh": "", "sub/gate": "!",
		"lib/helper.txt": "",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"check.sh":       "gate program: `sh check.sh` runs check.sh",
		"run_tests":      "gate program: `./run_tests --fast` runs ./run_tests",
		"inner.sh":       "gate program: `bash -c './inner.sh'` runs inner.sh",
		"env.sh":         "gate program: `. ./env.sh` sources ./env.sh",
		"sub/gate":       "gate program: `./gate` runs ./gate",
		"lib/helper.txt": "gate program:",
		"loop.yaml":      "the loop file",
	}, "calc.ts", "app.js", "x.sh", "lint.rb", "typed.rb", "out.txt", "tests/expected.txt", "data.sh")
	if len(got) != 7 {
		t.Errorf("protected %v", keys(got))
	}

	// A gate program that does not exist yet may not be written by the
	// agent: the check would run what the agent wrote.
	os.Remove(filepath.Join(dir, "check.sh"))
	if rule, ok := ProtectRule(dir, l, "check.sh"); !ok || !strings.Contains(rule, "gate program") {
		t.Errorf("a missing gate program may be created: %q %v", rule, ok)
	}
}

// Data is protected only by the user's globs, and those protect new files
// and look into the folders the default rules skip.
func TestProtectUserGlobs(t *testing.T) {
	dir, l := protectFixture(t, `objective: x
verify: ["cmp out.txt tests/expected.txt"]
protect: ["tests/**", "node_modules/pinned/**"]
`, map[string]string{"out.txt": "", "tests/expected.txt": "", "node_modules/pinned/a.js": "", "node_modules/other/b.js": ""})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"tests/expected.txt":       `protect[0] "tests/**"`,
		"node_modules/pinned/a.js": `protect[1] "node_modules/pinned/**"`,
	}, "out.txt", "node_modules/other/b.js")
	if got["tests/expected.txt"].Default {
		t.Error("a user glob's file is Default")
	}
	if rule, ok := ProtectRule(dir, l, "tests/new.txt"); !ok || rule != `protect[0] "tests/**"` {
		t.Errorf("a new file under a user glob: %q %v", rule, ok)
	}
	if got["tests/expected.txt"].Allow() != "narrow or remove that protect glob in the loop file" {
		t.Error(got["tests/expected.txt"].Allow())
	}
}

// protect_except frees files from the default rules only: never the loop
// file, never the user's own globs.
func TestProtectExcept(t *testing.T) {
	dir, l := protectFixture(t, `objective: "go test ./... passes"
verify: ["go test ./...", "sh check.sh"]
protect: ["pinned_test.go"]
protect_except: ["add_test.go", "loop.yaml", "pinned_test.go", "check.sh", "testdata/**"]
`, map[string]string{"go.mod": "", "add_test.go": "", "other_test.go": "", "pinned_test.go": "", "check.sh": "", "testdata/a": ""})
	wantProtected(t, resolved(t, dir, l), map[string]string{
		"other_test.go":  "go-tests",
		"pinned_test.go": `protect[0] "pinned_test.go"`,
		"loop.yaml":      "the loop file",
	}, "add_test.go", "check.sh", "testdata/a")
}

func TestProtectDefaultsOff(t *testing.T) {
	dir, l := protectFixture(t, `objective: "go test ./... passes"
verify: ["sh check.sh"]
protect_defaults: false
protect: ["a_test.go"]
`, map[string]string{"go.mod": "", "a_test.go": "", "b_test.go": "", "check.sh": ""})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{"a_test.go": "protect[0]", "loop.yaml": "the loop file"}, "b_test.go", "check.sh")
}

// The listing never skips silently: past its bound it fails, and so does
// ProtectRule (closed: protected).
func TestProtectWalkBound(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{"go.mod": "", "a.go": "", "b.go": "", "c_test.go": ""})
	old := maxProtectWalk
	defer func() { maxProtectWalk = old }()
	maxProtectWalk = 5 // exactly the fixture's files, loop.yaml included
	if _, err := ResolveProtected(dir, l); err != nil {
		t.Fatalf("5 files, bound 5: %v", err)
	}
	maxProtectWalk = 3
	if _, err := ResolveProtected(dir, l); err == nil || !strings.Contains(err.Error(), "more than 3 files") {
		t.Fatalf("err = %v", err)
	}
	if rule, ok := ProtectRule(dir, l, "a.go"); !ok || !strings.Contains(rule, "could not be listed") {
		t.Errorf("ProtectRule past the bound: %q %v", rule, ok)
	}
	if _, err := ResolveProtected(filepath.Join(dir, "nope"), l); err == nil {
		t.Error("a missing folder lists nothing without an error")
	}
	if _, err := ResolveProtected(dir, nil); err == nil {
		t.Error("nil loop")
	}
}

// An unreadable gate command cannot have its programs protected: fail.
func TestProtectUnreadableGate(t *testing.T) {
	dir, l := protectFixture(t, "objective: x\nverify: [\"sh 'check.sh\"]\n", map[string]string{})
	if _, err := ResolveProtected(dir, l); err == nil || !strings.Contains(err.Error(), "verify[0]") {
		t.Errorf("err = %v", err)
	}
}

// pyproject.toml holds dependencies too: an edit outside its pytest section
// stays; one inside it, or a new pytest section, is put back.
func TestKeepTestConfigEdit(t *testing.T) {
	old := "[project]\ndependencies = [\"requests\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool.ruff]\nline-length = 100\n"
	cases := []struct {
		file, cur string
		keep      bool
	}{
		{"pyproject.toml", strings.Replace(old, `"requests"`, `"requests", "numpy"`, 1), true},
		{"pyproject.toml", strings.Replace(old, "100", "120", 1), true},
		{"pyproject.toml", strings.Replace(old, `"-q"`, `"-q -k 'not slow'"`, 1), false},
		{"pyproject.toml", strings.Replace(old, "[tool.pytest.ini_options]\naddopts = \"-q\"\n", "", 1), false},
		{"pyproject.toml", old + "[tool]\npytest.ini_options.addopts = \"--co\"\n", false},
		{"sub/setup.cfg", "[metadata]\nname = x\n[tool:pytest]\naddopts = --co\n", false},
		{"setup.cfg", "[metadata]\nname = x\n[pytest]\naddopts = --co\n", false},
		{"setup.cfg", "[metadata]\nname = y\n", true},
		{"tox.ini", old + "x", false},
	}
	for _, c := range cases {
		prev := old
		if strings.HasSuffix(c.file, "setup.cfg") {
			prev = "[metadata]\nname = x\n"
		}
		if keep, why := KeepTestConfigEdit(c.file, []byte(prev), []byte(c.cur)); keep != c.keep {
			t.Errorf("%s %q: keep=%v (%s), want %v", c.file, c.cur, keep, why, c.keep)
		}
	}
	// No pytest section before: adding one is a change to it.
	if keep, _ := KeepTestConfigEdit("pyproject.toml", []byte("[project]\n"), []byte("[project]\n[tool.pytest.ini_options]\naddopts='--co'\n")); keep {
		t.Error("a new pytest section is kept")
	}
}

// walkFiles lists every file under the folder except under .git, the
// records, node_modules and .cache (at any depth), and fails closed past
// maxWalk files: exactly maxWalk is walked whole.
func TestProtectWalkFilesSkipsAndBounds(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.go", "sub/b.go", ".git/config", "sub/node_modules/x.js", ".cache/y", loopdir.RecordsDir + "/state.json"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	var got []string
	if err := walkFiles(dir, func(rel string, _ fs.DirEntry) { got = append(got, rel) }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "a.go sub/b.go" {
		t.Errorf("walked %q, want a.go sub/b.go", got)
	}
	old := maxWalk
	defer func() { maxWalk = old }()
	maxWalk = 2
	if err := walkFiles(dir, func(string, fs.DirEntry) {}); err != nil {
		t.Errorf("2 files, bound 2: %v", err)
	}
	maxWalk = 1
	if err := walkFiles(dir, func(string, fs.DirEntry) {}); !errors.Is(err, ErrTooManyFiles) {
		t.Errorf("2 files, bound 1: %v, want ErrTooManyFiles", err)
	}
}

// The default rules never look into git's folder: a test file there is not
// protected, one beside it is.
func TestProtectNeverInsideGit(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{"go.mod": "", "a_test.go": "", ".git/b_test.go": "", "sub/.git/c_test.go": ""})
	got := protectedEnding(t, dir, l, "_test.go")
	if strings.Join(got, " ") != "a_test.go" {
		t.Errorf("protected tests %q, want only a_test.go", got)
	}
}

// A user glob reaches into a folder the default rules skip, to the depth
// it names: node_modules/* protects node_modules/top.js, deps/** what is in
// deps/node_modules, and folders deeper than the glob are looked at without
// harm.
func TestProtectUserGlobUnderSkippedFolder(t *testing.T) {
	dir, l := protectFixture(t, "objective: x\nprotect: [\"node_modules/*\", \"lib/*\", \"deps/**\"]\n",
		map[string]string{"node_modules/top.js": "", "node_modules/a/b/deep.js": "", "lib/a/node_modules/x.js": "", "deps/node_modules/y.js": ""})
	got := protectedEnding(t, dir, l, ".js")
	if strings.Join(got, " ") != "deps/node_modules/y.js node_modules/top.js" {
		t.Errorf("protected %q, want deps/node_modules/y.js (deps/**) and node_modules/top.js", got)
	}
}

// The loop file is protected even where the walk does not look (a folder
// the default rules skip).
func TestProtectLoopFileInSkippedFolder(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "node_modules", "loop.yaml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("objective: x\n"), 0o644)
	l, err := spec.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ResolveProtected(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Path != "node_modules/loop.yaml" {
		t.Errorf("protected %+v, want node_modules/loop.yaml", ps)
	}
}

// protectedEnding lists the protected paths of the loop in dir that end in
// suffix.
func protectedEnding(t *testing.T, dir string, l *spec.Loop, suffix string) []string {
	t.Helper()
	ps, err := ResolveProtected(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		if strings.HasSuffix(p.Path, suffix) {
			got = append(got, p.Path)
		}
	}
	return got
}

// go.mod and package.json hold the project's dependencies too: an edit
// stands unless it changes how the tests build or what `npm test` runs.
func TestKeepTestConfigRunnerEdits(t *testing.T) {
	gomod := "module x\n\ngo 1.22\n\nrequire a.b/c v1.0.0\n"
	cargo := "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[profile.dev]\ndebug-assertions = true\n\n[dependencies]\n"
	cases := []struct {
		file, old, cur string
		keep           bool
	}{
		{"go.mod", gomod, gomod + "require d.e/f v1.2.0\n", true},
		{"go.mod", gomod, gomod + "replace a.b/c => ./fake\n", false},
		{"go.mod", gomod, gomod + "replace (\n\ta.b/c => ./fake\n)\n", false},
		{"go.mod", gomod, strings.Replace(gomod, "go 1.22", "go 1.21", 1), false},
		{"go.mod", gomod, gomod + "toolchain go1.30.0\n", false},
		{"go.mod", gomod, gomod + "godebug panicnil=1\n", false},
		{"sub/go.mod", gomod, gomod + "// replace a comment\n", true},
		{"package.json", `{"name":"x","scripts":{"test":"node --test"}}`, `{"name":"x","dependencies":{"y":"1"},"scripts":{"test":"node --test"}}`, true},
		{"package.json", `{"name":"x","scripts":{"test":"node --test"}}`, `{"name":"x","scripts":{"test":"exit 0"}}`, false},
		{"package.json", `{"name":"x","scripts":{"test":"jest"}}`, `{"name":"x","scripts":{"test":"jest"},"jest":{"testMatch":[]}}`, false},
		{"pkg/package.json", `{"name":"x"}`, `{"name":"x","imports":{"#lib":"./fake.js"}}`, false},
		{"main.go", "package main", "package main // x", false},
		// A block ends: what follows it is not a replacement.
		{"go.mod", gomod + "replace (\n\ta.b/c => ./fake\n)\n", gomod + "replace (\n\ta.b/c => ./fake\n)\nrequire d.e/f v1.2.0\n", true},
		{"go.mod", gomod + "replace (\n\ta.b/c => ./fake\n)\n", gomod + "replace (\n\ta.b/c => ./other\n)\n", false},
		{"go.mod", gomod, "module x\n\ngo 1.22\n\nrequire a.b/c v1.0.0\nreplace a.b/c v1.0.0 => a.b/c v1.0.1\n", false},
		{"go.mod", "module x\ngo 1.22\n", "module x\ngo   1.22 // the same\n", true},
		// Spacing alone is no change; a script's text is.
		{"package.json", `{"name":"x","scripts":{"test":"node --test"}}`, "{\n  \"name\": \"x\",\n  \"scripts\": { \"test\": \"node --test\" }\n}", true},
		{"package.json", `{"scripts":{"test":"node --test"}}`, `{"scripts":{"test":"node --test","pretest":"exit 0"}}`, false},
		{"package.json", `not json`, `not json at all`, false},
		{"package.json", `not json`, `not json`, true},
		// Cargo.toml: a dependency added is work; a profile, a patch or a
		// replacement changes how the tests build.
		{"Cargo.toml", cargo, cargo + "serde = \"1\"\n", true},
		{"Cargo.toml", cargo, strings.Replace(cargo, "version = \"0.1.0\"", "version = \"0.2.0\"", 1), true},
		{"Cargo.toml", cargo, cargo + "\n[profile.test]\noverflow-checks = false\n", false},
		{"Cargo.toml", cargo, strings.Replace(cargo, "debug-assertions = true", "debug-assertions = false", 1), false},
		{"Cargo.toml", cargo, cargo + "\n[patch.crates-io]\nrand = { path = \"fake\" }\n", false},
		{"Cargo.toml", cargo, cargo + "\n[replace]\n\"rand:0.8.5\" = { path = \"fake\" }\n", false},
		{"Cargo.toml", cargo, "profile.dev.debug-assertions = false\n" + cargo, false},
		{"crates/b/Cargo.toml", cargo, strings.Replace(cargo, "[profile.dev]", "[profile . \"dev\"]  # the same", 1) + "\n", true},
	}
	for _, c := range cases {
		if keep, why := KeepTestConfigEdit(c.file, []byte(c.old), []byte(c.cur)); keep != c.keep {
			t.Errorf("%s: %q → %q: keep %v (%s), want %v", c.file, c.old, c.cur, keep, why, c.keep)
		}
	}
}

// Test support code is test code: a package only tests import (and what
// only it imports) is protected like the tests; a package the deliverable
// imports too is not, and neither is one nothing imports.
func TestProtectGoTestSupport(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{
		"go.mod":                         "module example.com/x\n",
		"add.go":                         "package x\n\nimport _ \"example.com/x/internal/shared\"\n",
		"add_test.go":                    "package x\n\nimport (\n\t\"testing\"\n\t\"example.com/x/internal/testutil\"\n\t\"example.com/x/internal/shared\"\n)\n",
		"internal/testutil/equal.go":     "package testutil\n\nimport _ \"example.com/x/internal/testutil/deep\"\n",
		"internal/testutil/deep/deep.go": "package deep\n",
		"internal/shared/shared.go":      "package shared\n",
		"internal/unused/unused.go":      "package unused\n",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"internal/testutil/equal.go":     "go test support: a package only tests import (default rule go-test-support)",
		"internal/testutil/deep/deep.go": "go-test-support",
	}, "add.go", "internal/shared/shared.go", "internal/unused/unused.go")
}

// A new module at the top of the folder named like one a check runs with
// `python -m` would run instead of it: a new one is refused like runner
// configuration; the project's own module (there at the start) is the
// project's; a file of that name elsewhere is nothing.
func TestProtectPythonShadow(t *testing.T) {
	dir, l := protectFixture(t, `objective: "the tests pass"
verify: ["python3 -m unittest -v", "cd sub && python3 -m mypkg --check"]
`, map[string]string{"calc.py": "", "test_calc.py": "", "mypkg/__init__.py": ""})
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"unittest/__init__.py", "unittest.py", "unittest/__main__.py"} {
		if p, ok := r.ProtectNew(rel); !ok || !strings.Contains(p.Rule, "python -m unittest` (default rule python-shadow)") {
			t.Errorf("new %s: %v %q", rel, ok, p.Rule)
		}
	}
	for _, rel := range []string{"mypkg/new.py", "sub/unittest.py", "unittest.txt", "unittestx.py"} {
		if p, ok := r.ProtectNew(rel); ok {
			t.Errorf("new %s is protected: %q", rel, p.Rule)
		}
	}
	// Asked about as an existing file, a name like that is judged by the
	// rules for existing files: the guard asks about created files with
	// ProtectNew.
	os.MkdirAll(filepath.Join(dir, "unittest"), 0o755)
	os.WriteFile(filepath.Join(dir, "unittest", "x.py"), nil, 0o644)
	if p, ok := r.Rule("unittest/x.py"); ok {
		t.Errorf("existing unittest/x.py: %q", p.Rule)
	}
}

// In a test support package, a new file may be written (as new tests may),
// and a file that is not Go is not test support.
func TestProtectGoTestSupportNewFiles(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{
		"go.mod":                     "module example.com/x\n",
		"add_test.go":                "package x\n\nimport _ \"example.com/x/internal/testutil\"\n",
		"internal/testutil/equal.go": "package testutil\n",
		"internal/testutil/notes.md": "notes\n",
	})
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := r.ProtectNew("internal/testutil/more.go"); ok {
		t.Errorf("a new file in a test support package is protected: %q", p.Rule)
	}
	if p, ok := r.Rule("internal/testutil/notes.md"); ok {
		t.Errorf("notes.md is protected: %q", p.Rule)
	}
	if _, ok := r.Rule("internal/testutil/equal.go"); !ok {
		t.Error("equal.go is not protected")
	}
	// No go.mod: no Go package is anyone's test support.
	dir, l = protectFixture(t, goLoop, map[string]string{
		"add_test.go":                "package x\n\nimport _ \"example.com/x/internal/testutil\"\n",
		"internal/testutil/equal.go": "package testutil\n",
	})
	if r, err = NewProtectRules(dir, l); err != nil {
		t.Fatal(err)
	}
	if p, ok := r.Rule("internal/testutil/equal.go"); ok {
		t.Errorf("without go.mod equal.go is protected: %q", p.Rule)
	}
}
