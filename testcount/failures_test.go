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
		{"go", "example.com/ring/pan.TestIndex", []string{"panic: runtime error: index out of range [5] with length 0 [recovered, repanicked]"}},
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
		"expect(received).toBe(expected) // Object.is equality", "Expected: 2", "Received: 1"}}}
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
			"AssertionError: expected 1 to be 2 // Object.is equality", "- Expected", "+ Received", "- 2", "+ 1"}}}},
		{"cargo.txt", cargo},
		{"cargo-nocapture.txt", cargo},
		{"node-tap.txt", []Failure{{"tap", "fails", []string{
			"location: 'sample.test.mjs:5:1'", "failureType: 'testCodeFailure'", "error: |-",
			"  Expected values to be strictly equal:", "  1 !== 2", "code: 'ERR_ASSERTION'",
			"name: 'AssertionError'", "expected: 2", "actual: 1", "operator: 'strictEqual'"}}}},
		{"tap-handwritten.txt", []Failure{{"tap", "rejects garbage", []string{"message: 'ok 99 - inside YAML, not a test point'"}}}},
		// Runners without failure rules, or nothing failed: none.
		{"unittest.txt", nil},
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
