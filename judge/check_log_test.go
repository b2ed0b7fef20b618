package judge

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// TestCheckLogLines: a check's log is its output line by line, each ended
// by a newline (a carriage return before it dropped, a last line without
// one ended), whole past the signal's cut, however it was written.
func TestCheckLogLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 600)
	os.WriteFile(filepath.Join(dir, "out.txt"), []byte("a\r\nError b\n"+long+"\nc"), 0o644)
	log := filepath.Join(t.TempDir(), "check.log")
	res := Check(context.Background(), CheckRequest{Loop: &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute)},
		Cmds: []string{"cat out.txt; sleep 0.2; echo d; exit 1"}, LogPath: func(int) string { return log },
		Env: os.Environ(), Redactor: redact.New(nil, nil, nil), Unconfined: true})[0]
	got, _ := os.ReadFile(log)
	if want := "a\nError b\n" + long + "\ncd\n"; string(got) != want {
		t.Fatalf("log %q, want %q", got, want)
	}
	if res.Signal != "Error b" {
		t.Fatalf("signal %q", res.Signal)
	}
	if s := readLog(log); s != string(got) {
		t.Fatalf("readLog %q", s)
	}
}

// TestFailLineAsRegexp: FailLine says what `FAIL|Error|not ok` matches.
func TestFailLineAsRegexp(t *testing.T) {
	re := regexp.MustCompile(`FAIL|Error|not ok`)
	for _, l := range []string{"", "FAIL", "--- FAIL: T", "fail", "Errors: 0", "error", "not ok 3", "not  ok", "nOT ok", "ok", "FAI L", "xnot okx"} {
		if FailLine(l) != re.MatchString(l) {
			t.Errorf("FailLine(%q) = %v", l, FailLine(l))
		}
	}
}
