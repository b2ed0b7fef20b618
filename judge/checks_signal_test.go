package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// signalOf runs `cat FILE; exit 1` as a check, FILE one of the real runner
// outputs under testcount/testdata.
func signalOf(t *testing.T, file string) CheckResult {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "testcount", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return checkOutput(t, fmt.Sprintf("cat '%s'; exit 1", abs))
}

func checkOutput(t *testing.T, cmd string) CheckResult {
	t.Helper()
	dir := t.TempDir()
	res := Check(context.Background(), CheckRequest{Loop: &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute)}, Cmds: []string{cmd}, LogPath: func(int) string { return filepath.Join(dir, "check.log") }, Env: os.Environ(), Redactor: redact.New(os.Environ(), nil, nil), Unconfined: true})[0]
	if res.Pass || res.Signal != strings.Join(res.Lines, "\n") || len(res.Lines) > SignalLines {
		t.Fatalf("pass %v, %d lines, signal %q", res.Pass, len(res.Lines), res.Signal)
	}
	return res
}

// The failure signal names each failing test with the message that says
// why, which the FAIL/Error/not ok lines miss.
func TestSignalKeepsTestMessages(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"go-v-fail.txt", []string{
			"FAIL: example.com/ring/ring.TestOverwrite\n    ring_test.go:19: Len = 3, want 2",
			"FAIL: example.com/ring/ring.TestGrow/full\n    ring_test.go:26: Cap = 4, want 8\n        after growing twice",
			"FAIL: example.com/ring/pan.TestIndex\n    panic: runtime error: index out of range [5] with length 0",
		}},
		{"go-json-fail.txt", []string{
			"FAIL: example.com/ring/ring.TestOverwrite\n    ring_test.go:19: Len = 3, want 2",
			"FAIL: example.com/ring/ring.TestGrow/full\n    ring_test.go:26: Cap = 4, want 8",
		}},
		{"go-v.txt", []string{"FAIL: example.com/sample/a.TestFail\n    a_test.go:6: boom"}},
		{"go-json.txt", []string{"FAIL: example.com/sample/a.TestFail\n    a_test.go:6: boom"}},
		{"pytest-default.txt", []string{
			"FAIL: test_pyt.py::test_fail\n    E       assert 1 == 2\n    test_pyt.py:8: AssertionError",
			"FAIL: test_pyt.py::test_error\n    E       RuntimeError: fixture",
		}},
		{"jest.txt", []string{"FAIL: t/sum.test.js › math › fails\n    expect(received).toBe(expected) // Object.is equality\n    Expected: 2\n    Received: 1"}},
		{"cargo.txt", []string{"FAIL: unittests src/lib.rs tests::fails\n    thread 'tests::fails' panicked at src/lib.rs:13:18:\n    assertion `left == right` failed\n      left: 4\n     right: 5"}},
		{"node-tap.txt", []string{"FAIL: fails\n    location: 'sample.test.mjs:5:1'", "    1 !== 2"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := signalOf(t, tc.file)
			for _, w := range tc.want {
				if !strings.Contains(res.Signal, w) {
					t.Errorf("the signal lacks %q:\n%s", w, res.Signal)
				}
			}
			if strings.Contains(res.Signal, "goroutine") || strings.Contains(res.Signal, "stack") || strings.Contains(res.Signal, "duration_ms") {
				t.Errorf("the signal holds a stack or timings:\n%s", res.Signal)
			}
		})
	}
}

// Output that names no failing test keeps the old rule: its FAIL, Error and
// not ok lines, else its last lines.
func TestSignalFallsBackWithoutTests(t *testing.T) {
	res := checkOutput(t, `echo one; echo "Error: config missing"; echo two; exit 1`)
	if res.Signal != "Error: config missing" {
		t.Errorf("%q", res.Signal)
	}
	res = checkOutput(t, `echo one; echo two; exit 3`)
	if res.Signal != "one\ntwo" {
		t.Errorf("%q", res.Signal)
	}
	res = checkOutput(t, `printf './x.go:3:1: syntax error\nFAIL\texample.com/x [build failed]\n'; exit 1`)
	if res.Signal != "FAIL\texample.com/x [build failed]" {
		t.Errorf("%q", res.Signal)
	}
}

// Many failing tests: SignalLines lines in all, every test shown with its
// first message line, the rest counted.
func TestSignalBoundsTestMessages(t *testing.T) {
	var b strings.Builder
	for i := range 15 {
		fmt.Fprintf(&b, "=== RUN   Test%02d\n", i)
		for j := range 5 {
			fmt.Fprintf(&b, "    x_test.go:%d: message %d of Test%02d\n", j, j, i)
		}
		fmt.Fprintf(&b, "--- FAIL: Test%02d (0.00s)\n", i)
	}
	b.WriteString("FAIL\n")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "out.txt"), []byte(b.String()), 0o600)
	res := Check(context.Background(), CheckRequest{Loop: &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute)}, Cmds: []string{"cat out.txt; exit 1"}, LogPath: func(int) string { return filepath.Join(dir, "log") }, Env: os.Environ(), Redactor: nil, Unconfined: true})[0]
	if len(res.Lines) != SignalLines {
		t.Fatalf("%d lines:\n%s", len(res.Lines), res.Signal)
	}
	for i := range 15 {
		if !strings.Contains(res.Signal, fmt.Sprintf("FAIL: Test%02d\n    x_test.go:0: message 0 of Test%02d", i, i)) {
			t.Errorf("Test%02d or its first message is missing:\n%s", i, res.Signal)
		}
	}

	// More failing tests than lines: the names that fit, then a count.
	b.Reset()
	for i := range SignalLines + 10 {
		fmt.Fprintf(&b, "--- FAIL: Test%02d (0.00s)\n    x_test.go:1: boom\n", i)
	}
	os.WriteFile(filepath.Join(dir, "out.txt"), []byte(b.String()), 0o600)
	res = Check(context.Background(), CheckRequest{Loop: &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute)}, Cmds: []string{"cat out.txt; exit 1"}, LogPath: func(int) string { return filepath.Join(dir, "log") }, Env: os.Environ(), Redactor: nil, Unconfined: true})[0]
	if len(res.Lines) != SignalLines || res.Lines[SignalLines-1] != "… and 11 more failing tests" || res.Lines[0] != "FAIL: Test00" {
		t.Errorf("%d lines:\n%s", len(res.Lines), res.Signal)
	}
}

// The same failures read the same: the signature of go test's failures does
// not depend on -v, and cargo's thread ids are dropped.
func TestSignalSignatureStable(t *testing.T) {
	for _, pair := range [][2]string{
		{"go-v-fail.txt", "go-plain-fail.txt"},
		{"cargo.txt", "cargo-nocapture.txt"},
	} {
		a, b := signalOf(t, pair[0]), signalOf(t, pair[1])
		if Signature(a.Signal) != Signature(b.Signal) {
			t.Errorf("%s and %s:\n%s\n--\n%s", pair[0], pair[1], a.Signal, b.Signal)
		}
	}
	if Signature(signalOf(t, "go-v-fail.txt").Signal) == Signature(signalOf(t, "go-v.txt").Signal) {
		t.Error("different failures share a signature")
	}
}

// A secret that go test -json escaped in a way the output's redaction does
// not see is redacted once decoded.
func TestSignalRedactsDecodedTestOutput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MY_SERVICE_TOKEN", "svc-FAKE-7f3a9c21e8b4-abcdef")
	json := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: token \u0073vc-FAKE-7f3a9c21e8b4-abcdef\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
`
	os.WriteFile(filepath.Join(dir, "out.json"), []byte(json), 0o600)
	res := Check(context.Background(), CheckRequest{Loop: &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute)}, Cmds: []string{"cat out.json; exit 1"}, LogPath: func(int) string { return filepath.Join(dir, "log") }, Env: os.Environ(), Redactor: redact.New(os.Environ(), nil, nil), Unconfined: true})[0]
	if strings.Contains(res.Signal, "7f3a9c21e8b4") || !strings.Contains(res.Signal, "FAIL: p.TestA\n    a_test.go:3: token [REDACTED:MY_SERVICE_TOKEN]") {
		t.Errorf("%q", res.Signal)
	}
}
