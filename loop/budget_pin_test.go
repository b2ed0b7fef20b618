package loop

// Tests that pin the engine's budget and retry decisions (issue 18): each
// one fails if the comparison or arithmetic it is named after changes.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// pinAdapter answers run n (from 1) with results[n-1] (the last repeats),
// remembers each run's request, and writes done.txt at run doneOn (0:
// never), so the ralph loop's verify check passes from then on. sleep makes
// each run's process take that long.
type pinAdapter struct {
	mu      sync.Mutex
	results []agent.Result
	doneOn  int
	sleep   time.Duration
	reqs    []agent.Request
}

func (a *pinAdapter) Name() string { return "pin" }

func (a *pinAdapter) Invocation(agent.Request) (agent.Invocation, error) {
	if a.sleep > 0 {
		return agent.Invocation{Path: "/bin/sleep", Args: []string{fmt.Sprintf("%.3f", a.sleep.Seconds())}}, nil
	}
	return agent.Invocation{Path: "/bin/true"}, nil
}

func (a *pinAdapter) NewParser(req agent.Request) agent.Parser {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, req)
	n := len(a.reqs)
	return &pinParser{res: a.results[min(n, len(a.results))-1], done: n == a.doneOn, dir: req.Dir}
}

func (a *pinAdapter) calls() []agent.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agent.Request(nil), a.reqs...)
}

type pinParser struct {
	res  agent.Result
	done bool
	dir  string
}

func (p *pinParser) Line([]byte) []agent.ToolEvent { return nil }

func (p *pinParser) Finish(agent.Exit) agent.Result {
	if p.done {
		os.WriteFile(filepath.Join(p.dir, "done.txt"), []byte("yes"), 0o644)
	}
	return p.res
}

// pinRun runs a ralph loop ("done.txt exists") with ad as its agent. edit
// changes the parsed loop file (budgets, agent caps) before the run; the run
// is interrupted after limit, so that a mutant that waits too long ends the
// test instead of hanging it.
func pinRun(t *testing.T, ad *pinAdapter, backoff func(int) time.Duration, limit time.Duration, edit func(*spec.Loop)) (*Outcome, []record.Event) {
	t.Helper()
	name := "pin-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	agent.Register(name, func() agent.Adapter { return ad })
	dir := t.TempDir()
	src := []byte("shape: ralph\nobjective: done.txt exists\nagent: {backend: command, command: x}\nbudget: {iterations: 5, same_failure: 10, api_retries: 2}\nverify: [\"test -s done.txt\"]\n")
	if err := os.WriteFile(filepath.Join(dir, "loop.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := spec.Parse(src, filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l.Agent.Backend = name
	if edit != nil {
		edit(l)
	}
	if backoff == nil {
		backoff = func(int) time.Duration { return 5 * time.Millisecond }
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var mu sync.Mutex
	var evs []record.Event
	out, err := Run(ctx, l, Options{
		Backoff: backoff,
		Subscribers: []func(record.Event){func(e record.Event) {
			mu.Lock()
			evs = append(evs, e)
			mu.Unlock()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return out, append([]record.Event(nil), evs...)
}

func retries(evs []record.Event) []record.Event {
	var out []record.Event
	for _, e := range evs {
		if e.Event == record.AgentRetry {
			out = append(out, e)
		}
	}
	return out
}

var (
	resOK   = agent.Result{Status: agent.StatusOK, CostUSD: 0.25}
	resFree = agent.Result{Status: agent.StatusOK}
)

func rateLimited(after time.Duration) agent.Result {
	return agent.Result{Status: agent.StatusRateLimited, RetryAfter: after, Error: "429"}
}

// A rate limit whose wait is longer than what is left of budget.wall stops
// the loop TIME OR COST at once instead of sleeping past the budget. The
// first run takes half of the 2s budget, so that "left" computed as budget
// + elapsed (instead of budget − elapsed) would let the 1.5s wait go ahead.
// (Setup may take up to a second on a loaded machine without changing the
// verdict.)
func TestPinRateLimitWaitPastWallBudgetStops(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{rateLimited(1500 * time.Millisecond), resFree}, doneOn: 2, sleep: time.Second}
	out, evs := pinRun(t, ad, nil, 10*time.Second, func(l *spec.Loop) {
		l.Budget.Wall = spec.Duration(2 * time.Second)
		l.Agent.Timeout = spec.Duration(time.Hour)
	})
	if out.Reason != ReasonTimeCost || !strings.Contains(out.Summary, "waiting 2s would pass the wall budget") {
		t.Fatalf("outcome %s: %q; want time_or_cost: waiting 2s would pass the wall budget", out.Reason, out.Summary)
	}
	if n := len(ad.calls()); n != 1 {
		t.Errorf("%d agent runs; the wait past the budget must not be followed by another run", n)
	}
	if r := retries(evs); len(r) != 1 || r[0].WaitMS != 1500 {
		t.Errorf("agent_retry records %+v, want one with wait_ms 1500", r)
	}
}

// After a rate-limit wait, the retried run's timeout is what is left of
// budget.wall (the wait included), not the timeout of the first try.
func TestPinRetriedRunTimeoutClampedToWallLeft(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{rateLimited(400 * time.Millisecond), resFree}, doneOn: 2}
	out, _ := pinRun(t, ad, nil, 10*time.Second, func(l *spec.Loop) {
		l.Budget.Wall = spec.Duration(time.Minute)
		l.Agent.Timeout = spec.Duration(time.Hour)
	})
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
	}
	reqs := ad.calls()
	if len(reqs) != 2 {
		t.Fatalf("%d runs, want 2 (a rate limit, then the retry)", len(reqs))
	}
	first, second := reqs[0].Timeout, reqs[1].Timeout
	if first > time.Minute || first < 50*time.Second {
		t.Errorf("first run's timeout %s: want what is left of the 1m wall budget, not the agent's 1h", first)
	}
	if second <= 0 || second > first-350*time.Millisecond {
		t.Errorf("retried run's timeout %s after a 400ms wait, first run's %s: the retry must get only the wall time left", second, first)
	}
}

// The cap handed to each run (--max-budget-usd) is min(agent.max_budget_usd,
// budget.cost_usd − spent), and what is left when the agent sets none.
func TestPinPerRunBudgetCap(t *testing.T) {
	for _, c := range []struct {
		name          string
		agentCap      float64
		first, second float64 // the caps the two runs get; each run spends 0.25 of 2
	}{
		{"no agent cap: what is left", 0, 2, 1.75},
		{"agent cap below what is left", 0.5, 0.5, 0.5},
		{"agent cap between the two", 1.9, 1.9, 1.75},
		{"agent cap equal to the budget", 2, 2, 1.75},
		{"agent cap above the budget", 5, 2, 1.75},
	} {
		t.Run(c.name, func(t *testing.T) {
			ad := &pinAdapter{results: []agent.Result{resOK}, doneOn: 2}
			out, _ := pinRun(t, ad, nil, 10*time.Second, func(l *spec.Loop) {
				l.Budget.CostUSD = 2
				l.Agent.MaxBudgetUSD = c.agentCap
			})
			if out.Reason != ReasonDone {
				t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
			}
			reqs := ad.calls()
			if len(reqs) != 2 {
				t.Fatalf("%d runs, want 2", len(reqs))
			}
			for i, want := range []float64{c.first, c.second} {
				if got := reqs[i].MaxBudgetUSD; math.Abs(got-want) > 1e-9 {
					t.Errorf("run %d: max_budget_usd %.4f, want %.4f (agent cap %.2f, budget 2, spent %.2f)", i+1, got, want, c.agentCap, 0.25*float64(i))
				}
			}
		})
	}
}

// Spend exactly equal to budget.cost_usd is a spent budget: no further run
// starts, and the loop stops TIME OR COST.
func TestPinSpendEqualToBudgetStartsNoRun(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{resOK}} // never done
	out, _ := pinRun(t, ad, nil, 10*time.Second, func(l *spec.Loop) {
		l.Budget.CostUSD = 0.5
	})
	if out.Reason != ReasonTimeCost || !strings.Contains(out.Summary, "cost budget spent: $0.50 of $0.50") {
		t.Fatalf("outcome %s: %q; want time_or_cost: cost budget spent: $0.50 of $0.50", out.Reason, out.Summary)
	}
	if n := len(ad.calls()); n != 2 {
		t.Errorf("%d runs at $0.25 each under a $0.50 budget, want 2", n)
	}
	if out.State.CostUSD != 0.5 {
		t.Errorf("spent %v, want 0.5", out.State.CostUSD)
	}
}

// A rate limit with a reset time waits exactly that long; the backoff (here
// an hour, so that using it would be seen) is not consulted.
func TestPinRetryAfterIsHonoured(t *testing.T) {
	var mu sync.Mutex
	var asked []int
	backoff := func(n int) time.Duration {
		mu.Lock()
		asked = append(asked, n)
		mu.Unlock()
		return time.Hour
	}
	ad := &pinAdapter{results: []agent.Result{rateLimited(150 * time.Millisecond), resFree}, doneOn: 2}
	out, evs := pinRun(t, ad, backoff, 5*time.Second, nil)
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s: %s; want done after waiting the 150ms Retry-After", out.Reason, out.Summary)
	}
	if r := retries(evs); len(r) != 1 || r[0].WaitMS != 150 || r[0].Status != string(agent.StatusRateLimited) {
		t.Errorf("agent_retry records %+v, want one rate_limited with wait_ms 150", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 0 {
		t.Errorf("backoff consulted for retries %v although the API said when to retry", asked)
	}
}

// A rate limit without a reset time waits the backoff, counted per rate
// limit of the run: 1, then 2.
func TestPinRateLimitWithoutRetryAfterBacksOff(t *testing.T) {
	backoff := func(n int) time.Duration { return time.Duration(100+10*n) * time.Millisecond }
	ad := &pinAdapter{results: []agent.Result{rateLimited(0), rateLimited(0), resFree}, doneOn: 3}
	out, evs := pinRun(t, ad, backoff, 5*time.Second, nil)
	if out.Reason != ReasonDone || len(ad.calls()) != 3 {
		t.Fatalf("outcome %s after %d runs: %s; want done after 3", out.Reason, len(ad.calls()), out.Summary)
	}
	r := retries(evs)
	if len(r) != 2 || r[0].WaitMS != 110 || r[1].WaitMS != 120 {
		t.Errorf("agent_retry records %+v, want wait_ms 110 then 120 (the backoff for 1 and 2)", r)
	}
	if out.State.Iterations != 1 {
		t.Errorf("%d attempts: rate limits are not attempts", out.State.Iterations)
	}
}

// Each run's timeout is min(agent.timeout, wall budget left), and what is
// left of the wall budget when the agent sets none: never unlimited.
func TestPinRunTimeoutIsMinOfAgentAndWallLeft(t *testing.T) {
	for _, c := range []struct {
		name        string
		agent, wall time.Duration
		least, most time.Duration
	}{
		{"agent timeout shorter", 30 * time.Second, time.Hour, 30 * time.Second, 30 * time.Second},
		{"wall left shorter", time.Hour, time.Minute, 50 * time.Second, time.Minute},
		{"no agent timeout", 0, time.Minute, 50 * time.Second, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			ad := &pinAdapter{results: []agent.Result{resFree}, doneOn: 1}
			out, _ := pinRun(t, ad, nil, 10*time.Second, func(l *spec.Loop) {
				l.Budget.Wall = spec.Duration(c.wall)
				l.Agent.Timeout = spec.Duration(c.agent)
			})
			if out.Reason != ReasonDone {
				t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
			}
			reqs := ad.calls()
			if len(reqs) != 1 {
				t.Fatalf("%d runs, want 1", len(reqs))
			}
			if got := reqs[0].Timeout; got < c.least || got > c.most {
				t.Errorf("run timeout %s (agent %s, wall %s), want between %s and %s", got, c.agent, c.wall, c.least, c.most)
			}
		})
	}
}
