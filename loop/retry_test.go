package loop

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// scriptedAdapter answers each run with the next status of a list (the
// last one repeats), running /bin/true as the process.
type scriptedAdapter struct {
	mu       sync.Mutex
	statuses []agent.Status
	calls    int
}

func (a *scriptedAdapter) Name() string { return "scripted" }

func (a *scriptedAdapter) Invocation(agent.Request) (agent.Invocation, error) {
	return agent.Invocation{Path: "/bin/true"}, nil
}

func (a *scriptedAdapter) NewParser(req agent.Request) agent.Parser {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.statuses[min(a.calls, len(a.statuses)-1)]
	a.calls++
	return &scriptedParser{status: st, dir: req.Dir}
}

type scriptedParser struct {
	status agent.Status
	dir    string
}

func (p *scriptedParser) Line([]byte) []agent.ToolEvent { return nil }

func (p *scriptedParser) Finish(agent.Exit) agent.Result {
	r := agent.Result{Status: p.status, CostUSD: 0.01}
	if p.status == agent.StatusOK {
		os.WriteFile(filepath.Join(p.dir, "done.txt"), []byte("yes"), 0o644)
	}
	if p.status == agent.StatusRateLimited {
		r.RetryAfter = 10 * time.Millisecond
	}
	if p.status == agent.StatusAPIError {
		r.Error = "API error 500"
	}
	return r
}

func runScripted(t *testing.T, name string, statuses ...agent.Status) (*Outcome, []record.Event, *scriptedAdapter) {
	t.Helper()
	ad := &scriptedAdapter{statuses: statuses}
	agent.Register(name, func() agent.Adapter { return ad })
	dir := t.TempDir()
	src := []byte("shape: ralph\nobjective: done.txt exists\nagent: {backend: command, command: x}\nbudget: {iterations: 3, api_retries: 2}\nverify: [\"test -s done.txt\"]\n")
	os.WriteFile(filepath.Join(dir, "loop.yaml"), src, 0o644)
	l, err := spec.Parse(src, filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l.Agent.Backend = name
	var evs []record.Event
	out, err := Run(context.Background(), l, Options{
		Backoff:     func(int) time.Duration { return 5 * time.Millisecond },
		Subscribers: []func(record.Event){func(e record.Event) { evs = append(evs, e) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, evs, ad
}

func count(evs []record.Event, name string) int {
	n := 0
	for _, e := range evs {
		if e.Event == name {
			n++
		}
	}
	return n
}

// Transient API errors are retried (api_retries) within one attempt.
func TestAPIErrorsAreRetriedThenSucceed(t *testing.T) {
	out, evs, ad := runScripted(t, "scripted-retry", agent.StatusAPIError, agent.StatusAPIError, agent.StatusOK)
	if out.Reason != ReasonDone || out.State.Iterations != 1 || ad.calls != 3 {
		t.Fatalf("outcome %s, %d attempts, %d calls; want done after 1 attempt and 3 calls", out.Reason, out.State.Iterations, ad.calls)
	}
	if n := count(evs, record.AgentRetry); n != 2 {
		t.Errorf("%d agent_retry records, want 2", n)
	}
	if out.State.CostUSD < 0.029 {
		t.Errorf("cost %.3f: every try's spend must count", out.State.CostUSD)
	}
}

// More API errors than api_retries: BLOCKED, without running the checks.
func TestAPIErrorsBeyondRetriesBlock(t *testing.T) {
	out, evs, ad := runScripted(t, "scripted-block", agent.StatusAPIError)
	if out.Reason != ReasonBlocked || out.ExitCode != 4 || ad.calls != 3 {
		t.Fatalf("outcome %s (exit %d) after %d calls; want blocked (4) after 1 + 2 retries", out.Reason, out.ExitCode, ad.calls)
	}
	if n := count(evs, record.Verify); n != 0 {
		t.Errorf("%d verify records: a blocked run must not be verified", n)
	}
}

// A rate limit waits and is not an attempt, however often it comes.
func TestRateLimitsAreNotAttempts(t *testing.T) {
	out, _, ad := runScripted(t, "scripted-429", agent.StatusRateLimited, agent.StatusRateLimited, agent.StatusRateLimited, agent.StatusRateLimited, agent.StatusOK)
	if out.Reason != ReasonDone || out.State.Iterations != 1 || ad.calls != 5 {
		t.Fatalf("outcome %s, %d attempts, %d calls; want done, 1 attempt, 5 calls", out.Reason, out.State.Iterations, ad.calls)
	}
}

// Rate limits forever (each wait well inside the wall budget): one agent run
// still ends, BLOCKED after maxTries tries, never a loop without end.
func TestEndlessRateLimitsAreBounded(t *testing.T) {
	defer func(n int) { maxTries = n }(maxTries)
	maxTries = 7 // 100 tries take half a minute
	out, _, ad := runScripted(t, "scripted-429-forever", agent.StatusRateLimited)
	if out.Reason != ReasonBlocked || ad.calls != maxTries {
		t.Fatalf("outcome %s after %d calls; want blocked after %d tries", out.Reason, ad.calls, maxTries)
	}
	// Every try hit a limit: the run did no work, and is no attempt.
	if out.State.Iterations != 0 {
		t.Errorf("%d attempts counted for a run that only hit usage limits, want 0", out.State.Iterations)
	}
}
