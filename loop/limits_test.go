package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/spec"
)

// runLimited runs a ralph loop whose agent answers statuses in turn, with
// the loop file's limits line.
func runLimited(t *testing.T, name, limits string, statuses ...agent.Status) (*Outcome, *scriptedAdapter) {
	t.Helper()
	ad := &scriptedAdapter{statuses: statuses}
	agent.Register(name, func() agent.Adapter { return ad })
	dir := t.TempDir()
	src := []byte("shape: ralph\nobjective: done.txt exists\nagent: {backend: command, command: x}\nbudget: {iterations: 3, api_retries: 2}\nverify: [\"test -s done.txt\"]\n" + limits + "\n")
	os.WriteFile(filepath.Join(dir, "loop.yaml"), src, 0o644)
	l, err := spec.Parse(src, filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l.Agent.Backend = name
	out, err := Run(context.Background(), l, Options{Backoff: func(int) time.Duration { return 5 * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	return out, ad
}

// limits: stop ends the loop at the first usage limit, BLOCKED, with no
// attempt counted and no second try; limits: wait (the default) and a
// window that holds the reset wait and go on.
func TestRateLimitsPolicy(t *testing.T) {
	out, ad := runLimited(t, "scripted-limits-stop", "limits: stop", agent.StatusRateLimited, agent.StatusOK)
	if out.Reason != ReasonBlocked || ad.calls != 1 || out.State.Iterations != 0 {
		t.Fatalf("limits: stop: outcome %s after %d calls, %d attempts; want blocked after 1 call, 0 attempts", out.Reason, ad.calls, out.State.Iterations)
	}
	if !strings.Contains(out.Summary, "limits: stop") {
		t.Errorf("limits: stop: the outcome does not name the policy: %q", out.Summary)
	}
	out, ad = runLimited(t, "scripted-limits-wait", "limits: wait", agent.StatusRateLimited, agent.StatusOK)
	if out.Reason != ReasonDone || ad.calls != 2 || out.State.Iterations != 1 {
		t.Fatalf("limits: wait: outcome %s after %d calls, %d attempts; want done after 2 calls, 1 attempt", out.Reason, ad.calls, out.State.Iterations)
	}
	now := time.Now()
	w := now.Add(-time.Hour).Format("15:04") + "-" + now.Add(time.Hour).Format("15:04")
	out, ad = runLimited(t, "scripted-limits-inside", `limits: {resume_within: "`+w+`"}`, agent.StatusRateLimited, agent.StatusOK)
	if out.Reason != ReasonDone || ad.calls != 2 {
		t.Fatalf("limits: resume_within %s: outcome %s after %d calls; want done after 2 calls", w, out.Reason, ad.calls)
	}
	w = now.Add(3*time.Hour).Format("15:04") + "-" + now.Add(4*time.Hour).Format("15:04")
	out, ad = runLimited(t, "scripted-limits-outside", `limits: {resume_within: "`+w+`"}`, agent.StatusRateLimited, agent.StatusOK)
	if out.Reason != ReasonBlocked || ad.calls != 1 || !strings.Contains(out.Summary, "outside limits.resume_within "+w) {
		t.Fatalf("limits: resume_within %s: outcome %s after %d calls (%q); want blocked after 1 call, outside the window", w, out.Reason, ad.calls, out.Summary)
	}
}
