package forge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/internal/fakegithub"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

func TestWaitCIRedNamesTheJobAndItsFailLines(t *testing.T) {
	f := setup(t)
	f.s.SetCI("acme/widget", func(string) []fakegithub.CheckRun {
		return []fakegithub.CheckRun{
			{Name: "lint", Conclusion: "success"},
			{Name: "test", Conclusion: "failure", Log: "2026-12-03T10:00:00.1234567Z ##[group]Run go test\n2026-12-03T10:00:01Z ok  pkg/a\n2026-12-03T10:00:02Z --- FAIL: TestParse (0.00s)\n2026-12-03T10:00:02Z     parse_test.go:12: want 1, got 2\n2026-12-03T10:00:03Z ##[error]Process completed with exit code 1.\n"},
		}
	})
	ci, err := forge.WaitCI(context.Background(), f.c, sha, []string{"test"}, 5*time.Second, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if ci.Green() || !ci.Reported || len(ci.Failing) != 1 || ci.Failing[0].Name != "test" {
		t.Fatalf("ci %+v", ci)
	}
	want := []string{"--- FAIL: TestParse (0.00s)", "    parse_test.go:12: want 1, got 2", "##[error]Process completed with exit code 1."}
	if strings.Join(ci.Failing[0].Lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines %q", ci.Failing[0].Lines)
	}
	if v := ci.Verdict(); v != "CI RED: test" {
		t.Fatalf("verdict %q", v)
	}
	if txt := ci.Text(); !strings.Contains(txt, "test (http://") || !strings.Contains(txt, "```text\n--- FAIL: TestParse") {
		t.Fatalf("text %q", txt)
	}
}

func TestWaitCIGreenAndRequired(t *testing.T) {
	f := setup(t)
	f.s.SetCI("acme/widget", func(string) []fakegithub.CheckRun {
		return []fakegithub.CheckRun{{Name: "test", Conclusion: "success"}, {Name: "docs", Conclusion: "skipped"}}
	})
	ci, err := forge.WaitCI(context.Background(), f.c, sha, []string{"test"}, 5*time.Second, 50*time.Millisecond)
	if err != nil || !ci.Green() || ci.Verdict() != "CI GREEN" {
		t.Fatalf("ci %+v, %v", ci, err)
	}
	// A required check that never comes is not green, however the others
	// did: the wait ends at the timeout.
	start := time.Now()
	ci, err = forge.WaitCI(context.Background(), f.c, sha, []string{"test", "e2e"}, 400*time.Millisecond, 50*time.Millisecond)
	if err != nil || ci.Green() || strings.Join(ci.Missing, ",") != "e2e" || !strings.Contains(ci.Verdict(), "required checks never reported: e2e") {
		t.Fatalf("ci %+v, %v", ci, err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Fatalf("waited %s", d)
	}
}

func TestWaitCINeverReportingIsNotVerified(t *testing.T) {
	f := setup(t)
	ci, err := forge.WaitCI(context.Background(), f.c, sha, nil, 300*time.Millisecond, 50*time.Millisecond)
	if err != nil || ci.Green() || ci.Reported || ci.Verdict() != "CI NOT VERIFIED: no check run or status reported" {
		t.Fatalf("ci %+v, %v", ci, err)
	}
	// Still running when the wait ends: not green either.
	f.s.SetCI("acme/widget", func(string) []fakegithub.CheckRun {
		return []fakegithub.CheckRun{{Name: "slow", Status: "in_progress"}}
	})
	ci, err = forge.WaitCI(context.Background(), f.c, sha, nil, 300*time.Millisecond, 50*time.Millisecond)
	if err != nil || ci.Green() || strings.Join(ci.Pending, ",") != "slow" || !strings.HasPrefix(ci.Verdict(), "CI NOT VERIFIED: still running") {
		t.Fatalf("ci %+v, %v", ci, err)
	}
	// A red commit status counts too, without a log.
	f.s.AddStatus("acme/widget", fakegithub.Status{SHA: strings.Repeat("c", 40), Context: "ci/jenkins", State: "failure"})
	ci, err = forge.WaitCI(context.Background(), f.c, strings.Repeat("c", 40), nil, time.Second, 50*time.Millisecond)
	if err != nil || ci.Green() || len(ci.Failing) != 1 || ci.Failing[0].Name != "ci/jenkins" || ci.Failing[0].Lines != nil {
		t.Fatalf("status ci %+v, %v", ci, err)
	}
}

func TestFailLines(t *testing.T) {
	if got := forge.FailLines("a\nb\n\nc\n", 2); strings.Join(got, ",") != "b,c" {
		t.Fatalf("no failure words: the last lines, got %q", got)
	}
	var log strings.Builder
	for i := 0; i < 50; i++ {
		log.WriteString("--- FAIL: TestX\n")
	}
	if got := forge.FailLines(log.String(), 30); len(got) != 30 {
		t.Fatalf("%d lines", len(got))
	}
}
