package testcount

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func sample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseFile(t testing.TB, name string) Counts {
	t.Helper()
	c, err := ParseString(sample(t, name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every sample is real output of the runner (see testdata/README.md).
func TestSamples(t *testing.T) {
	goPassed := []string{"example.com/sample/a.TestPass", "example.com/sample/a.TestSub", "example.com/sample/a.TestSub/one", "example.com/sample/b.TestOther", "example.com/sample/b.TestPass"}
	goSkipped := []string{"example.com/sample/a.TestSkip", "example.com/sample/a.TestSub/two"}
	pyPassed := []string{"test_pyt.py::test_param[1]", "test_pyt.py::test_param[2]", "test_pyt.py::test_pass"}
	pySkipped := []string{"test_pyt.py::test_skip", "test_pyt.py::test_xfail"}
	utPassed := []string{"test_sample.TestA.test_doc", "test_sample.TestA.test_pass", "test_sample.TestB.test_other"}
	utSkipped := []string{"test_sample.TestA.test_skip", "test_sample.TestA.test_xfail"}
	cargoPassed := []string{"doc-tests sample src/lib.rs - add (line 3)", "tests/it.rs integration_passes", "unittests src/lib.rs tests::passes"}
	cargoSkipped := []string{"unittests src/lib.rs tests::ignored", "unittests src/lib.rs tests::ignored_reason"}
	for _, tc := range []struct {
		file, runner           string
		passed, failed, skip   int
		passedNames, skipNames []string
	}{
		{"go-v.txt", "go", 5, 1, 2, goPassed, goSkipped},
		{"go-json.txt", "go-json", 5, 1, 2, goPassed, goSkipped},
		{"pytest-default.txt", "pytest", 3, 2, 2, nil, nil},
		{"pytest-q.txt", "pytest", 3, 2, 2, nil, nil},
		{"pytest-v.txt", "pytest", 3, 2, 2, pyPassed, pySkipped},
		{"pytest-color.txt", "pytest", 3, 2, 2, pyPassed, pySkipped},
		{"pytest-rA.txt", "pytest", 3, 2, 2, pyPassed, []string{"test_pyt.py:10: not today", "test_pyt.py::test_xfail"}},
		{"pytest-rN.txt", "pytest", 3, 2, 2, nil, nil},
		{"pytest-s.txt", "pytest", 3, 2, 2, nil, nil},
		{"pytest-k.txt", "pytest", 1, 2, 4, nil, nil}, // 2 deselected count as skipped
		{"pytest-unittest.txt", "pytest", 3, 2, 2, nil, nil},
		{"unittest.txt", "unittest", 3, 2, 2, nil, nil},
		{"unittest-v.txt", "unittest", 3, 2, 2, utPassed, utSkipped},
		{"unittest-ok.txt", "unittest", 1, 0, 1, nil, nil},
		{"cargo.txt", "cargo", 3, 1, 2, cargoPassed, cargoSkipped},
		{"cargo-nocapture.txt", "cargo", 3, 1, 2, cargoPassed, cargoSkipped},
		{"cargo-filtered.txt", "cargo", 1, 0, 3, []string{"unittests src/lib.rs tests::passes"}, nil},
		{"jest.txt", "jest", 3, 1, 2, nil, nil},
		{"jest-verbose.txt", "jest", 3, 1, 2,
			[]string{"t/other.test.js › other passes", "t/sum.test.js › math › adds", "t/sum.test.js › top level"},
			[]string{"t/sum.test.js › math › later", "t/sum.test.js › math › skipped one"}},
		{"vitest.txt", "vitest", 3, 1, 2, nil, nil},
		{"vitest-verbose.txt", "vitest", 3, 1, 2,
			[]string{"other.test.js > other passes", "sum.test.js > math > adds", "sum.test.js > top level"},
			[]string{"sum.test.js > math > later", "sum.test.js > math > skipped one"}},
		{"node-tap.txt", "tap", 3, 1, 3, []string{"group", "group/inner pass", "passes"}, []string{"group/inner skip", "skipped", "todo"}},
		{"node-spec.txt", "node", 3, 1, 3, nil, nil},
		{"tap-handwritten.txt", "tap", 4, 1, 3,
			[]string{"parses the body", "parses the header", "unnumbered with a dash"},
			[]string{"slow path", "talks to the network", "unicode names"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := parseFile(t, tc.file)
			want := Counts{Runner: tc.runner, Passed: tc.passed, Failed: tc.failed, Skipped: tc.skip,
				PassedNames: tc.passedNames, SkippedNames: tc.skipNames, Known: true}
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got  %+v\nwant %+v", c, want)
			}
		})
	}
}

// Output that names no counts is not Known: plain go test (no -v, no -json)
// prints only package lines and the failures, and pytest -qq prints no
// summary (its only summary-shaped line is a test's print).
func TestUnknown(t *testing.T) {
	for _, f := range []string{"go-plain.txt", "pytest-qq.txt"} {
		if c := parseFile(t, f); c.Known || c.Passed != 0 || c.Runner != "" {
			t.Errorf("%s: %+v, want not Known", f, c)
		}
	}
	// Stray "ok" lines name no tests.
	if c, _ := ParseString("ok 1 - looks like TAP\n3 passed in 0.1s\n", nil); c.Passed != 3 || c.PassedNames != nil {
		t.Errorf("%+v", c)
	}
	for _, s := range []string{
		"", "\n\n", "hello\nworld\n",
		"ok 1 - looks like TAP but has no plan or version\nok 2\n",
		"FAIL\texample.com/x\t0.01s\n--- FAIL: TestX (0.00s)\n", // go test without -v
		"Tests:       3 passed, 3 total\n",                      // jest's line without its "Test Suites:" line
		"Ran 3 tests in 0.1s\n\nsomething else\n",               // unittest without its result line
	} {
		if c, _ := ParseString(s, nil); c.Known {
			t.Errorf("%q: %+v, want not Known", s, c)
		}
	}
}

// Lines that tests print to fake a summary do not count.
func TestFakeSummaries(t *testing.T) {
	// cargo --nocapture: "test result: ok. 99 passed" printed by a test before the real one.
	if c := parseFile(t, "cargo-nocapture.txt"); c.Passed != 3 {
		t.Errorf("cargo: %d passed, want 3", c.Passed)
	}
	// pytest: "===== 500 passed" in a captured section, or inline with -s.
	for _, f := range []string{"pytest-v.txt", "pytest-rN.txt", "pytest-s.txt"} {
		if c := parseFile(t, f); c.Passed != 3 {
			t.Errorf("%s: %d passed, want 3", f, c.Passed)
		}
	}
	// jest and vitest: console.log("Tests:       99 passed, 99 total").
	for _, f := range []string{"jest-verbose.txt", "vitest-verbose.txt"} {
		if c := parseFile(t, f); c.Passed != 3 || c.Runner == "jest,vitest" {
			t.Errorf("%s: %+v", f, c)
		}
	}
}

func TestSeveralRunnersAreSummed(t *testing.T) {
	// pytest -q prints no session header: a -q run is told from the next
	// by its progress line, or by the next run's header.
	out := sample(t, "go-json.txt") + sample(t, "pytest-q.txt") + sample(t, "pytest-q.txt") + sample(t, "pytest-v.txt") + sample(t, "cargo.txt")
	c, _ := ParseString(out, nil)
	if c.Runner != "go-json,pytest,cargo" || c.Passed != 5+3+3+3+3 || c.Failed != 1+2+2+2+1 || c.Skipped != 2+2+2+2+2 {
		t.Errorf("%+v", c)
	}
	if len(c.PassedNames) != 5+3+3 {
		t.Errorf("names %q", c.PassedNames)
	}
}

func TestANSI(t *testing.T) {
	color := parseFile(t, "pytest-color.txt")
	plain := parseFile(t, "pytest-v.txt")
	if !reflect.DeepEqual(color, plain) {
		t.Errorf("colour %+v\nplain  %+v", color, plain)
	}
	got := string(stripANSI(nil, []byte("\x1b[1m\x1b[32m3 passed\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x1b\\ \x1b(Bok\x1b")))
	if got != "3 passed link ok" {
		t.Errorf("stripANSI: %q", got)
	}
	// A progress line rewritten with \r: only what follows the last \r counts.
	c, _ := ParseString("collecting 3 items\r\x1b[2K=== 3 passed in 0.01s ===\r\n", nil)
	if c.Passed != 3 || !c.Known {
		t.Errorf("%+v", c)
	}
}

// Go names are qualified with their package; a stream cut before the package
// line keeps them bare.
func TestGoVerboseNames(t *testing.T) {
	c, _ := ParseString("=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- SKIP: TestB (0.01s)\n", nil)
	if c.Runner != "go" || c.Passed != 1 || c.Skipped != 1 || !reflect.DeepEqual(c.PassedNames, []string{"TestA"}) || !reflect.DeepEqual(c.SkippedNames, []string{"TestB"}) {
		t.Errorf("%+v", c)
	}
}

func TestPatterns(t *testing.T) {
	ava := Pattern{Name: "ava", Passed: `^\s*(\d+) tests? passed`, Failed: `^\s*(\d+) tests? failed`, Skipped: `^\s*(\d+) tests? skipped`}
	gotestsum := Pattern{Name: "gotestsum", Total: `^DONE (\d+) tests?`, Skipped: `^DONE \d+ tests?.*?, (\d+) skipped`, Failed: `^DONE \d+ tests?.*?, (\d+) failures?`}
	out := "\n  12 tests passed\n  2 tests skipped\n  1 test failed\n\nDONE 40 tests, 3 skipped, 2 failures in 1.2s\n" + sample(t, "go-json.txt")
	c, err := ParseString(out, []Pattern{ava, gotestsum})
	if err != nil {
		t.Fatal(err)
	}
	if c.Runner != "go-json,ava,gotestsum" || c.Passed != 5+12+35 || c.Failed != 1+1+2 || c.Skipped != 2+2+3 {
		t.Errorf("%+v", c)
	}
	// A pattern that matches nothing does not make the output Known.
	if c, _ := ParseString("nothing here\n", []Pattern{ava}); c.Known {
		t.Errorf("%+v", c)
	}

	for _, tc := range []struct {
		p    Pattern
		want string
	}{
		{Pattern{Passed: `(\d+)`}, "name: empty"},
		{Pattern{Name: "go", Passed: `(\d+)`}, "built-in"},
		{Pattern{Name: "x", Failed: `(\d+)`}, "passed: empty"},
		{Pattern{Name: "x", Passed: `\d+ passed`}, "passed: \"\\\\d+ passed\" has 0 capture groups"},
		{Pattern{Name: "x", Passed: `(\d+) (passed)`}, "2 capture groups"},
		{Pattern{Name: "x", Passed: `(\d+)`, Skipped: `(\d+`}, "skipped: error parsing regexp"},
	} {
		err := tc.p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
		if _, err := ParseString("1\n", []Pattern{tc.p}); err == nil {
			t.Errorf("%+v: Parse took it", tc.p)
		}
	}
	if err := ava.Validate(); err != nil {
		t.Error(err)
	}
}

// Write in any chunks, or Line per line, gives what Parse gives.
func TestChunking(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, f := range files {
		data := sample(t, filepath.Base(f))
		want, _ := ParseString(data, nil)
		for _, size := range []int{1, 7, 4096} {
			p, _ := NewParser(nil)
			for b := []byte(data); len(b) > 0; {
				n := min(size, len(b))
				p.Write(b[:n])
				b = b[n:]
			}
			if got := p.Counts(); !reflect.DeepEqual(got, want) {
				t.Errorf("%s in chunks of %d: %+v, want %+v", f, size, got, want)
			}
		}
		p, _ := NewParser(nil)
		for _, l := range strings.Split(data, "\n") {
			p.Line([]byte(l))
		}
		if got := p.Counts(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s by Line: %+v, want %+v", f, got, want)
		}
		if again := p.Counts(); !reflect.DeepEqual(again, want) {
			t.Errorf("%s: second Counts differs", f)
		}
	}
}

// A line longer than MaxLine is cut, and what follows it is read.
func TestLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*MaxLine+5)
	out := "=== RUN   TestA\n" + long + "\n--- PASS: TestA (0.00s)\n" + long + "\nok  \tpkg\t0.1s\n" + long // no final newline
	c, _ := ParseString(out, nil)
	if c.Passed != 1 || !reflect.DeepEqual(c.PassedNames, []string{"pkg.TestA"}) {
		t.Errorf("%+v", c)
	}
	// A summary on the last line without a newline counts.
	c, _ = ParseString("3 passed in 0.01s", nil)
	if c.Passed != 3 {
		t.Errorf("%+v", c)
	}
	// Names are cut at MaxNameLen.
	c, _ = ParseString("=== RUN   T\n--- PASS: "+strings.Repeat("é", MaxNameLen)+" (0.00s)\n", nil)
	if len(c.PassedNames) != 1 || len(c.PassedNames[0]) > MaxNameLen+len("…") {
		t.Errorf("name of %d bytes", len(c.PassedNames[0]))
	}
}

func TestNamesCapped(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("=== RUN   TestX\n")
	n := 0
	for buf.Len() < 2*MaxNameBytes {
		n++
		buf.WriteString("--- PASS: TestNumber" + strings.Repeat("x", 100) + strconv.Itoa(n) + " (0.00s)\n")
	}
	c, _ := Parse(&buf, nil)
	if c.Passed != n || !c.NamesTruncated || len(c.PassedNames) >= n {
		t.Errorf("passed %d of %d, %d names, truncated %v", c.Passed, n, len(c.PassedNames), c.NamesTruncated)
	}
}
