package initwiz

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/testcount"
)

// The holdout check keeps the runner's options from the project's test
// script or the check (mocha --ui qunit), not its files or watch options.
func TestHoldoutKeepsRunnerFlags(t *testing.T) {
	dir := testkit.Tree(t, map[string]string{"test/a.test.js": "test('a', () => {})\n", "test/b.test.js": "test('b', () => {})\n", "spec/x": ""})
	for _, tc := range []struct {
		line, runner string
		want         []string
	}{
		{"mocha --ui qunit test/", "mocha", []string{"--ui", "qunit"}},
		{"mocha --ui=qunit --recursive test --exit", "mocha", []string{"--ui=qunit", "--recursive", "--exit"}},
		{"./node_modules/.bin/mocha -r ts-node/register --timeout 5000 'test/**/*.ts' && echo ok", "mocha", []string{"-r", "ts-node/register", "--timeout", "5000"}},
		{"NODE_ENV=test jest --ci --config jest.config.js --watch", "jest", []string{"--ci", "--config", "jest.config.js"}},
		{"vitest run --reporter=verbose spec", "vitest", []string{"--reporter=verbose"}},
		{"vitest --environment jsdom", "vitest", []string{"--environment", "jsdom"}},
		{"tap test/", "mocha", nil},
		{"", "mocha", nil},
	} {
		if got := runnerFlags(dir, tc.line, tc.runner); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.line, got, tc.want)
		}
	}
	// Through package.json's test script, with npm's lockfile.
	dir = testkit.Tree(t, map[string]string{
		"package.json":      `{"scripts":{"test":"mocha --ui qunit test/"}}`,
		"package-lock.json": "{}",
		"test/a.js":         "test('a', function () {})\n",
		"test/b.js":         "test('b', function () {})\n",
	})
	if got := HoldoutVerify(dir, []string{"test/b.js"}, []string{"npm test"}); !reflect.DeepEqual(got, []string{"npx mocha --ui qunit test/b.js"}) {
		t.Errorf("HoldoutVerify = %q", got)
	}
	if got := HoldoutVerify(dir, []string{"test/b.js"}, []string{"npx jest --ci"}); !reflect.DeepEqual(got, []string{"npx jest --ci --runTestsByPath test/b.js"}) {
		t.Errorf("HoldoutVerify jest = %q", got)
	}
}

// cargo's integration tests are test files a holdout can take, run by
// `cargo test --test NAME`; a crate's inline tests and its tests' shared
// modules are not.
func TestHoldoutCargo(t *testing.T) {
	dir := testkit.Tree(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"x\"\n", "src/lib.rs": "#[cfg(test)]\nmod tests {}\n",
		"tests/lib.rs": "", "tests/api.rs": "", "tests/common/mod.rs": "", "tests/big/main.rs": "",
		"crates/b/Cargo.toml": "[package]\nname = \"b\"\n", "crates/b/tests/it.rs": "",
		"other/tests/x.rs": "",
	})
	files, err := TestFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"crates/b/tests/it.rs", "tests/api.rs", "tests/big/main.rs", "tests/lib.rs"}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("TestFiles = %q, want %q", files, want)
	}
	got := HoldoutVerify(dir, []string{"tests/lib.rs", "crates/b/tests/it.rs", "tests/big/main.rs"}, []string{"cargo test"})
	if w := []string{"cargo test --test lib --test big", "cargo test --manifest-path crates/b/Cargo.toml --test it"}; !reflect.DeepEqual(got, w) {
		t.Errorf("HoldoutVerify = %q, want %q", got, w)
	}
}

// A test file the failing checks' output names holds the loop's target:
// by its path, by its name where it is the only one, by a Go test function
// named as failing.
func TestFailingNamed(t *testing.T) {
	dir := testkit.Tree(t, map[string]string{
		"test/serialize.js": "", "test/parse.js": "", "a/util.test.js": "", "b/util.test.js": "",
		"ring/ring_test.go":  "package ring\n\nimport \"testing\"\n\nfunc TestGrow(t *testing.T) {}\n",
		"ring/other_test.go": "package ring\n\nimport \"testing\"\n\nfunc TestGrowth(t *testing.T) {}\n",
	})
	files := []string{"a/util.test.js", "b/util.test.js", "ring/other_test.go", "ring/ring_test.go", "test/parse.js", "test/serialize.js"}
	got := failingNamed(dir, files, "FAIL: serialize keeps keys\n    at Context.<anonymous> (test/serialize.js:30:12)\nFAIL: example.com/ring.TestGrow/full\n    util.test.js:3\n")
	want := map[string]string{"test/serialize.js": "a test that fails before the loop is in it", "ring/ring_test.go": "a test that fails before the loop is in it (TestGrow)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := failingNamed(dir, files, ""); len(got) != 0 {
		t.Errorf("no output: %q", got)
	}
	// PlanHoldout keeps it in sight and says why.
	a := Answers{HoldoutShare: "2", Verify: []string{"npx mocha"}, FailingOutput: "at Context.<anonymous> (test/serialize.js:30:12)"}
	dir = testkit.Tree(t, map[string]string{"test/a.js": "it('a', () => {})\n", "test/b.js": "it('b', () => {})\n", "test/serialize.js": "it('s', () => {})\n"})
	if err := PlanHoldout(dir, &a); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Holdout, []string{"test/a.js", "test/b.js"}) || len(a.HoldoutNotes) == 0 || !strings.Contains(a.HoldoutNotes[0], "test/serialize.js (a test that fails before the loop is in it)") {
		t.Errorf("holdout %q, notes %q", a.Holdout, a.HoldoutNotes)
	}
}

func TestHoldoutRunWarning(t *testing.T) {
	known := func(p, f int) testcount.Counts { return testcount.Counts{Known: true, Passed: p, Failed: f} }
	for _, tc := range []struct {
		exit   int
		tests  testcount.Counts
		failed int
		want   string
	}{
		{1, testcount.Counts{}, 0, "failed (exit 1) without a failing test: it may never pass, and the loop would never reach DONE; run it yourself and correct it in holdout_verify (its output: ReferenceError: suite is not defined)"},
		{0, known(0, 0), 0, "ran no test"},
		{1, known(2, 1), 1, ""},
		{1, known(2, 1), 0, ""},
		{0, known(3, 0), 0, ""},
		{1, known(0, 0), 0, "ran no test"},
	} {
		got := HoldoutRunWarning("npx mocha test/b.js", tc.exit, tc.tests, tc.failed, "ReferenceError: suite is not defined\n    at x")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%d %+v %d: %q, want %q", tc.exit, tc.tests, tc.failed, got, tc.want)
		}
	}
}

// init says how to commit the loop file in a git work tree where it is
// not committed; nothing outside git or once committed.
func TestCommitHint(t *testing.T) {
	dir := testkit.Tree(t, map[string]string{"loop.yaml": "x\n", ".gitignore": "output/\n"})
	if h := CommitHint(dir, filepath.Join(dir, "loop.yaml")); h != "" {
		t.Errorf("outside git: %q", h)
	}
	if _, err := git(dir, "init", "-q"); err != nil {
		t.Skip("no git")
	}
	h := CommitHint(dir, filepath.Join(dir, "loop.yaml"))
	if !strings.Contains(h, "git add loop.yaml .gitignore && git commit") {
		t.Errorf("untracked: %q", h)
	}
	git(dir, "add", "loop.yaml", ".gitignore")
	if _, err := git(dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x"); err != nil {
		t.Fatal(err)
	}
	if h := CommitHint(dir, filepath.Join(dir, "loop.yaml")); h != "" {
		t.Errorf("committed: %q", h)
	}
}
