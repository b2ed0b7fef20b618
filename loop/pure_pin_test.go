package loop

// Tests of the engine's small pure decisions (issue 18): exit codes and
// titles, the default backoff, the notes a killed or cheating run leaves.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// The exit code of each outcome is part of the command line's contract.
func TestPinExitCodesAndTitles(t *testing.T) {
	for _, c := range []struct {
		reason, title string
		code          int
	}{
		{ReasonDone, "DONE", 0}, {ReasonBudget, "BUDGET SPENT", 1}, {ReasonNoProgress, "NO PROGRESS", 2},
		{ReasonTimeCost, "TIME OR COST BUDGET", 3}, {ReasonBlocked, "BLOCKED", 4},
		{ReasonAlreadyPassing, "ALREADY PASSING", 5}, {ReasonNotVerified, "NOT VERIFIED", 6},
		{ReasonInterrupted, "INTERRUPTED", 130},
	} {
		if got, ok := ExitCodes[c.reason]; !ok || got != c.code {
			t.Errorf("exit code of %s: %d, want %d", c.reason, got, c.code)
		}
		if got := Title(c.reason); got != c.title {
			t.Errorf("Title(%s) = %q, want %q", c.reason, got, c.title)
		}
	}
	if got := Title("some_new_reason"); got != "SOME_NEW_REASON" {
		t.Errorf("Title of an unknown reason: %q", got)
	}
}

// A run killed by its timeout reads as such, or as the wall budget running
// out when it was cut short; an idle run names the idle timeout.
func TestPinKilledNote(t *testing.T) {
	a := spec.Agent{Timeout: spec.Duration(10 * time.Minute), IdleTimeout: spec.Duration(2 * time.Minute)}
	for _, c := range []struct {
		res  agent.Result
		want string
	}{
		{agent.Result{Status: agent.StatusTimeout, Duration: 10 * time.Minute}, "killed after the 10m0s timeout without finishing"},
		{agent.Result{Status: agent.StatusTimeout, Duration: 9 * time.Minute}, "killed after the 10m0s timeout"},
		{agent.Result{Status: agent.StatusTimeout, Duration: 8*time.Minute + 59*time.Second}, "the loop's wall budget ran out"},
		{agent.Result{Status: agent.StatusTimeout}, "killed after the 10m0s timeout"},
		{agent.Result{Status: agent.StatusIdle}, "no output for 2m0s (idle timeout)"},
		{agent.Result{Status: agent.StatusOK}, ""},
	} {
		got := killedNote(a, c.res)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("killedNote(%s after %s) = %q, want %q", c.res.Status, c.res.Duration, got, c.want)
		}
	}
	if got := killedNote(spec.Agent{}, agent.Result{Status: agent.StatusTimeout, Duration: time.Second}); strings.Contains(got, "wall budget") {
		t.Errorf("without a timeout of its own a run is not cut by the wall budget: %q", got)
	}
}

// The note to the next run names each protected file, its rule and why
// the change weakened the loop.
func TestPinTamperNote(t *testing.T) {
	got := tamperNote([]guard.Tamper{{File: "a_test.go", What: "modified", Rule: "go tests"}, {File: "loop.yaml", What: "modified", Why: "budget raised"}})
	want := "VIOLATION: a_test.go is protected by go tests and must not be edited (it was modified; the engine restored it). Change the code, not the checks.\n" +
		"VIOLATION: loop.yaml is protected and must not be edited (it was modified; the engine restored it). Change the code, not the checks.\n" +
		"  The change weakened the loop: budget raised"
	if got != want {
		t.Errorf("tamperNote:\n%s\nwant:\n%s", got, want)
	}
}

// Small helpers the records rely on.
func TestPinRecordHelpers(t *testing.T) {
	if got := judge.FirstFailure([]CheckResult{{Check: record.Check{Command: "a", Pass: true}}, {Check: record.Check{Command: "b", ExitCode: 2}}, {Check: record.Check{Command: "c", ExitCode: 3}}}); got != "`b` exited 2" {
		t.Errorf("firstFailure = %q", got)
	}
	if got := judge.FirstFailure([]CheckResult{{Check: record.Check{Command: "a", Pass: true}}}); got != "" {
		t.Errorf("firstFailure of passing checks = %q", got)
	}
	if got := firstLines("a\nb\nc\nd\n", 3); got != "b\nc\nd" {
		t.Errorf("firstLines = %q", got)
	}
	if got := firstLines("a\nb", 3); got != "a\nb" {
		t.Errorf("firstLines of 2 lines = %q", got)
	}
	if got := firstLines(strings.Repeat("x", 600), 3); len(got) != 500+len("…") {
		t.Errorf("firstLines of 600 bytes: %d bytes, want 500 and an ellipsis", len(got))
	}
	if plural(1, "run") != "1 run" || plural(2, "run") != "2 runs" || plural(0, "run") != "0 runs" {
		t.Error("plural")
	}
	if got := short(strings.Repeat("y", 81)); got != strings.Repeat("y", 80)+"…" {
		t.Errorf("short = %q", got)
	}
	if got := short("abc"); got != "abc" {
		t.Errorf("short = %q", got)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "x.log")
	if loopdir.UniquePath(p) != p {
		t.Error("uniquePath of a new path")
	}
	os.WriteFile(p, nil, 0o644)
	if got := loopdir.UniquePath(p); got != filepath.Join(dir, "x.2.log") {
		t.Errorf("uniquePath = %s", got)
	}
	os.WriteFile(filepath.Join(dir, "x.2.log"), nil, 0o644)
	if got := loopdir.UniquePath(p); got != filepath.Join(dir, "x.3.log") {
		t.Errorf("uniquePath = %s", got)
	}
	if got := rel(dir, p); got != "x.log" {
		t.Errorf("rel = %s", got)
	}
	if got := rel(dir, "/elsewhere/y"); got != "/elsewhere/y" {
		t.Errorf("rel outside = %s", got)
	}
	if prices(nil) != nil {
		t.Error("prices(nil)")
	}
	if got := prices(map[string]spec.Price{"m": {Input: 1, Output: 2}}); got["m"].Input != 1 || got["m"].Output != 2 {
		t.Errorf("prices = %+v", got)
	}
}

// LoadState: the engine's private copy first, else state.json, else fresh.
func TestPinLoadState(t *testing.T) {
	dir := t.TempDir()
	st, err := LoadState(dir)
	if err != nil || st.Cycle != 1 || st.CycleGate != "pending" {
		t.Fatalf("a loop that never ran: %+v %v", st, err)
	}
	os.MkdirAll(filepath.Dir(loopdir.Dir(dir).State()), 0o755)
	os.WriteFile(loopdir.Dir(dir).State(), []byte(`{"v":1,"cycle":4,"iterations":7}`), 0o644)
	st, err = LoadState(dir)
	if err != nil || st.Cycle != 4 || st.Iterations != 7 {
		t.Fatalf("state.json: %+v %v", st, err)
	}
}
