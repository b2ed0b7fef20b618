package testcount

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func failuresOf(t testing.TB, out string) ([]Failure, int) {
	t.Helper()
	p, err := NewParser(nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Write([]byte(out))
	return p.Failures()
}

// Every runner's failing tests come with their names and the lines that say
// why, from real output (testdata/README.md).
func TestFailuresSamples(t *testing.T) {
	ring := []Failure{
		{"go", "example.com/ring/pan.TestIndex", []string{"panic: runtime error: index out of range [5] with length 0 [recovered, repanicked]",
			"at /src/ring/pan/pan_test.go:7 (example.com/ring/pan.TestIndex)"}},
		{"go", "example.com/ring/ring.TestOverwrite", []string{"ring_test.go:19: Len = 3, want 2"}},
		{"go", "example.com/ring/ring.TestGrow/full", []string{"ring_test.go:26: Cap = 4, want 8", "    after growing twice"}},
	}
	goJSON := []Failure{
		{"go-json", "example.com/ring/ring.TestOverwrite", ring[1].Lines},
		{"go-json", "example.com/ring/ring.TestGrow/full", ring[2].Lines},
		{"go-json", "example.com/ring/pan.TestIndex", ring[0].Lines},
	}
	pytest := []Failure{
		{"pytest", "test_pyt.py::test_error", []string{"E       RuntimeError: fixture", "test_pyt.py:24: RuntimeError"}},
		{"pytest", "test_pyt.py::test_fail", []string{"E       assert 1 == 2", "test_pyt.py:8: AssertionError"}},
	}
	jest := []Failure{{"jest", "t/sum.test.js › math › fails", []string{
		"expect(received).toBe(expected) // Object.is equality", "Expected: 2", "Received: 1", "at Object.toBe (sum.test.js:3:35)"}}}
	cargo := []Failure{{"cargo", "unittests src/lib.rs tests::fails", []string{
		"thread 'tests::fails' panicked at src/lib.rs:13:18:", "assertion `left == right` failed", "  left: 4", " right: 5"}}}
	for _, tc := range []struct {
		file string
		want []Failure
	}{
		{"go-v-fail.txt", ring},
		{"go-plain-fail.txt", ring},
		{"go-json-fail.txt", goJSON},
		{"go-v.txt", []Failure{{"go", "example.com/sample/a.TestFail", []string{"a_test.go:6: boom"}}}},
		{"go-json.txt", []Failure{{"go-json", "example.com/sample/a.TestFail", []string{"a_test.go:6: boom"}}}},
		{"pytest-default.txt", pytest},
		{"pytest-v.txt", pytest},
		{"pytest-q.txt", pytest},
		{"pytest-color.txt", pytest},
		// -rN: no short summary; the blocks keep their titles.
		{"pytest-rN.txt", []Failure{{"pytest", "test_error", pytest[0].Lines}, {"pytest", "test_fail", pytest[1].Lines}}},
		{"pytest-unittest.txt", []Failure{
			{"pytest", "test_sample.py::TestA::test_error", []string{"E       RuntimeError: bad", "test_sample.py:12: RuntimeError"}},
			{"pytest", "test_sample.py::TestA::test_fail", []string{"E       AssertionError: 1 != 2", "test_sample.py:7: AssertionError"}},
		}},
		{"jest.txt", jest},
		{"jest-verbose.txt", jest},
		{"vitest.txt", []Failure{{"vitest", "sum.test.js > math > fails", []string{
			"AssertionError: expected 1 to be 2 // Object.is equality", "❯ sum.test.js:4:35", "- Expected", "+ Received", "- 2", "+ 1"}}}},
		{"cargo.txt", cargo},
		{"cargo-nocapture.txt", cargo},
		{"node-tap.txt", []Failure{{"tap", "fails", []string{
			"location: 'sample.test.mjs:5:1'", "failureType: 'testCodeFailure'", "error: |-",
			"  Expected values to be strictly equal:", "  1 !== 2", "code: 'ERR_ASSERTION'",
			"name: 'AssertionError'", "expected: 2", "actual: 1", "operator: 'strictEqual'"}}}},
		{"tap-handwritten.txt", []Failure{{"tap", "rejects garbage", []string{"message: 'ok 99 - inside YAML, not a test point'"}}}},
		{"unittest.txt", []Failure{
			{"unittest", "test_sample.TestA.test_error", []string{"RuntimeError: bad", `File "/src/sample/test_sample.py", line 12, in test_error`, `  raise RuntimeError("bad")`}},
			{"unittest", "test_sample.TestA.test_fail", []string{"AssertionError: 1 != 2", `File "/src/sample/test_sample.py", line 7, in test_fail`, "  self.assertEqual(1, 2)"}},
		}},
		// Runners without failure rules, or nothing failed: none.
		{"node-spec.txt", nil},
		{"go-json-fatal-to-log.txt", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, more := failuresOf(t, sample(t, tc.file))
			if !reflect.DeepEqual(got, tc.want) || more != 0 {
				t.Errorf("got  %q (%d more)\nwant %q", got, more, tc.want)
			}
		})
	}
}

// Whole-stream reads and line-by-line reads agree, and Failures can be
// called again.
func TestFailuresByLine(t *testing.T) {
	out := sample(t, "go-v-fail.txt")
	want, _ := failuresOf(t, out)
	p, _ := NewParser(nil)
	for _, l := range strings.Split(out, "\n") {
		p.Line([]byte(l))
	}
	got, _ := p.Failures()
	again, _ := p.Failures()
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(again, want) {
		t.Errorf("%q\n%q\n%q", got, again, want)
	}
}

// Output of any size keeps at most MaxFailures failures of at most
// MaxFailureLines lines, each at most MaxFailureLineLen bytes (and "…").
func TestFailuresBounded(t *testing.T) {
	var b strings.Builder
	for i := range MaxFailures + 50 {
		fmt.Fprintf(&b, "=== RUN   Test%d\n", i)
		for j := range 3 * MaxFailureLines {
			fmt.Fprintf(&b, "    x_test.go:%d: line %d %s\n", j, j, strings.Repeat("x", 2*MaxFailureLineLen))
		}
		fmt.Fprintf(&b, "--- FAIL: Test%d (0.00s)\n", i)
	}
	b.WriteString("FAIL\texample.com/x\t0.01s\n")
	got, more := failuresOf(t, b.String())
	if len(got) != MaxFailures || more != 50 {
		t.Fatalf("%d failures, %d more", len(got), more)
	}
	for _, f := range got {
		if len(f.Lines) != MaxFailureLines {
			t.Fatalf("%s: %d lines", f.Name, len(f.Lines))
		}
		for _, l := range f.Lines {
			if len(l) > MaxFailureLineLen+len("…") {
				t.Fatalf("%d bytes", len(l))
			}
		}
	}
	if got[0].Name != "example.com/x.Test0" || !strings.HasPrefix(got[0].Lines[0], "x_test.go:0: line 0 xxx") {
		t.Errorf("%q", got[0])
	}
}

// Output that names no failing test has none: "not ok" in output that is not
// TAP, a FAIL line of no runner.
func TestFailuresNone(t *testing.T) {
	for _, out := range []string{
		"",
		"not ok - but this is no TAP\n  ---\n  message: x\n  ...\n",
		"FAIL: something\nError: boom\n",
		"./main.go:3:1: syntax error\nFAIL\texample.com/x [build failed]\n",
	} {
		if got, more := failuresOf(t, out); len(got) != 0 || more != 0 {
			t.Errorf("%q: %q %d", out, got, more)
		}
	}
}

// Every runner's failure at full strength, from genuine output
// (testdata/README.md): the test's full name, the assertion with its whole
// diff (lines that are only "{" or "}" included), and where in the test it
// failed.
func TestFailuresFullStrength(t *testing.T) {
	unittest := []Failure{
		{"unittest", "test_error.TestParse.test_error", []string{
			"ValueError: invalid literal for int() with base 10: 'x'",
			`File "/src/sample/tests/test_error.py", line 18, in test_error`, `  parse("x")`,
			`File "/src/sample/src/calc/__init__.py", line 4, in parse`, `  return {"value": int(s), "unit": "m", "tags": ["a", "b"]}`}},
		{"unittest", "test_error.TestParse.test_dict", []string{
			"AssertionError: {'value': 2, 'unit': 'm', 'tags': ['a', 'b']} != {'value': 2, 'unit': 'km', 'tags': ['a', 'b', 'c']}",
			`File "/src/sample/tests/test_error.py", line 11, in test_dict`,
			`  self.assertEqual(parse("2"), {"value": 2, "unit": "km", "tags": ["a", "b", "c"]})`,
			"- {'tags': ['a', 'b'], 'unit': 'm', 'value': 2}",
			"+ {'tags': ['a', 'b', 'c'], 'unit': 'km', 'value': 2}",
			"?                   +++++            +"}},
		{"unittest", "test_error.TestParse.test_raises", []string{
			"AssertionError: ValueError not raised", `File "/src/sample/tests/test_error.py", line 14, in test_raises`, "  with self.assertRaises(ValueError):"}},
		{"unittest", "test_error.TestParse.test_sub (i=2)", []string{
			"AssertionError: 2 not less than 2", `File "/src/sample/tests/test_error.py", line 27, in test_sub`, "  self.assertLess(i, 2)"}},
	}
	vitestDiff := []string{
		"AssertionError: expected { value: 2, unit: 'm', …(1) } to deeply equal { value: 2, unit: 'km', …(1) }", "❯ src/calc.spec.ts:10:24",
		"- Expected", "+ Received", "  {", `    "tags": [`, `      "a",`, `      "b",`, `-     "c",`, "    ],",
		`-   "unit": "km",`, `+   "unit": "m",`, `    "value": 2,`, "  }"}
	vitest := []Failure{
		{"vitest", "src/calc.spec.ts > parse > reads the unit and tags", vitestDiff},
		{"vitest", "src/calc.spec.ts > parse > errors > throws on garbage", []string{
			"AssertionError: expected [Function] to throw an error", "❯ src/calc.spec.ts:15:32", "- Expected:", "null", "+ Received:", "undefined"}},
	}
	for _, tc := range []struct {
		file string
		want []Failure
	}{
		{"unittest-fail.txt", unittest},
		{"unittest-v-fail.txt", unittest},
		{"vitest-fail.txt", vitest},
		{"vitest-verbose-fail.txt", vitest},
		{"jest-fail.txt", []Failure{
			{"jest", "jt/calc.test.js › parse › reads the unit and tags", []string{
				"expect(received).toEqual(expected) // deep equality", "- Expected  - 2", "+ Received  + 1",
				"  Object {", `    "tags": Array [`, `      "a",`, `      "b",`, `-     "c",`, "    ],",
				`-   "unit": "km",`, `+   "unit": "m",`, `    "value": 2,`, "  }", "at Object.toEqual (calc.test.js:11:24)"}},
			{"jest", "jt/calc.test.js › parse › errors › throws on garbage", []string{
				"expect(received).toThrow(expected)", `Expected substring: "not a number"`, "Received function did not throw", "at Object.toThrow (calc.test.js:16:32)"}},
		}},
		{"mocha-spec.txt", []Failure{
			{"mocha", "serialize keeps nested keys", []string{
				"AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:", "at Context.<anonymous> (test/serialize.js:30:12)", "+ actual - expected",
				"  {", "    a: {", "      b: [", "        1,", "        2,", "-       3", "      ]", "    },", "    c: 'x'", "  }",
				"      + expected - actual", `         "a": {`, `           "b": [`, "             1", "             2", "      +      3",
				"           ]", "         }", `         "c": "x"`, "       }"}},
			{"mocha", "serialize errors rejects undefined", []string{
				"AssertionError [ERR_ASSERTION]: Missing expected exception.", "at Context.<anonymous> (test/serialize.js:25:14)"}},
		}},
		{"mocha-tap.txt", []Failure{
			{"tap", "serialize keeps nested keys", []string{
				"Expected values to be strictly deep-equal:", "at Context.<anonymous> (test/serialize.js:30:12)", "+ actual - expected",
				"  {", "    a: {", "      b: [", "        1,", "        2,", "-       3", "      ]", "    },", "    c: 'x'", "  }",
				"AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:"}},
			{"tap", "serialize errors rejects undefined", []string{
				"Missing expected exception.", "at Context.<anonymous> (test/serialize.js:25:14)", "AssertionError [ERR_ASSERTION]: Missing expected exception."}},
		}},
		{"cargo-panic.txt", []Failure{
			{"cargo", "unittests src/lib.rs tests::first_of_empty", []string{
				"thread 'tests::first_of_empty' panicked at src/lib.rs:12:5:", "index out of bounds: the len is 0 but the index is 0"}},
			{"cargo", "unittests src/lib.rs tests::mid_rounds", []string{
				"thread 'tests::mid_rounds' panicked at src/lib.rs:22:9:", "assertion `left == right` failed: mid of Point {",
				"    x: 1,", "    y: 2,", "}", "  left: Point { x: 1, y: 2 }", " right: Point { x: 2, y: 3 }"}},
		}},
		// With RUST_BACKTRACE, a panic outside the test says where in the test.
		{"cargo-panic-backtrace.txt", []Failure{
			{"cargo", "unittests src/lib.rs tests::first_of_empty", []string{
				"thread 'tests::first_of_empty' panicked at src/lib.rs:12:5:", "index out of bounds: the len is 0 but the index is 0",
				"in the test at src/lib.rs:27:20"}},
			{"cargo", "unittests src/lib.rs tests::mid_rounds", []string{
				"thread 'tests::mid_rounds' panicked at src/lib.rs:22:9:", "assertion `left == right` failed: mid of Point {",
				"    x: 1,", "    y: 2,", "}", "  left: Point { x: 1, y: 2 }", " right: Point { x: 2, y: 3 }"}},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, more := failuresOf(t, sample(t, tc.file))
			if !reflect.DeepEqual(got, tc.want) || more != 0 {
				t.Errorf("got  %q (%d more)\nwant %q", got, more, tc.want)
			}
		})
	}
}

// mocha's summary gives its counts (spec reporter); its TAP reporter is
// read as TAP. A look-alike summary a test prints before mocha's own does
// not count.
func TestMochaCounts(t *testing.T) {
	for _, f := range []string{"mocha-spec.txt", "mocha-tap.txt"} {
		c, _ := ParseString(sample(t, f), nil)
		if !c.Known || c.Passed != 3 || c.Failed != 2 || c.Skipped != 1 {
			t.Errorf("%s: %+v", f, c)
		}
	}
	c, _ := ParseString("  99 passing (1ms)\n  0 failing\n"+sample(t, "mocha-spec.txt"), nil)
	if c.Passed != 3 || c.Failed != 2 {
		t.Errorf("a fake summary counted: %+v", c)
	}
	// go test without -v: the counts cannot be read, and the caller is told why.
	c, _ = ParseString(sample(t, "go-plain.txt"), nil)
	if c.Known || !strings.Contains(c.Unreadable, "-v") {
		t.Errorf("go plain: %+v", c)
	}
	if c, _ := ParseString("built.\n", nil); c.Known || c.Unreadable == "" {
		t.Errorf("nothing: %+v", c)
	}
}
