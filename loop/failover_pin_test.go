package loop

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// withFallback gives the loop's agent model a, falling back to model b of
// the same adapter after fallback_after 10m.
func withFallback(l *spec.Loop) {
	l.Agent.Model = "a"
	l.Agent.FallbackAfter = spec.Duration(10 * time.Minute)
	l.Agent.Fallback = []spec.Fallback{{Backend: l.Agent.Backend, Model: "b", Command: "x"}}
}

func models(reqs []agent.Request) string {
	var m []string
	for _, r := range reqs {
		m = append(m, r.Model)
	}
	return strings.Join(m, ",")
}

// Failover inside one agent run (runAgent): a usage limit resetting later
// than fallback_after moves the same run to the next candidate at once; a
// shorter one is waited out on the same agent; when every candidate is
// limited the run waits for the earliest reset, on the agent it belongs to.
func TestPinFailoverWithinARun(t *testing.T) {
	t.Run("limit past fallback_after goes on with the next candidate", func(t *testing.T) {
		ad := &pinAdapter{results: []agent.Result{rateLimited(3 * time.Hour), resFree}, doneOn: 2}
		out, evs := pinRun(t, ad, nil, 10*time.Second, withFallback)
		if out.Reason != ReasonDone {
			t.Fatalf("outcome %s: %s; want done on the fallback", out.Reason, out.Summary)
		}
		if got := models(ad.calls()); got != "a,b" {
			t.Errorf("runs on models %s, want a,b (the second try on the fallback)", got)
		}
		var fo []record.Event
		for _, e := range evs {
			if e.Event == record.AgentFailover {
				fo = append(fo, e)
			}
		}
		if len(fo) != 1 || !strings.HasSuffix(fo[0].From, "/a") || !strings.HasSuffix(fo[0].To, "/b") {
			t.Errorf("agent_failover records %+v, want one a → b", fo)
		}
		// The try that hit the limit is recorded, on a, waiting for nothing.
		if r := retries(evs); len(r) != 1 || r[0].WaitMS != 0 || r[0].Model != "a" || out.State.Iterations != 1 {
			t.Errorf("retries %+v, %d attempts; want one on a waiting 0ms and 1 attempt (the failover goes on at once and is no attempt)", r, out.State.Iterations)
		}
	})
	t.Run("limit within fallback_after is waited out on the same agent", func(t *testing.T) {
		ad := &pinAdapter{results: []agent.Result{rateLimited(100 * time.Millisecond), resFree}, doneOn: 2}
		out, evs := pinRun(t, ad, nil, 10*time.Second, withFallback)
		if out.Reason != ReasonDone {
			t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
		}
		if got := models(ad.calls()); got != "a,a" {
			t.Errorf("runs on models %s, want a,a (no failover for a 100ms limit)", got)
		}
		if r := retries(evs); len(r) != 1 || r[0].WaitMS != 100 {
			t.Errorf("agent_retry records %+v, want one waiting 100ms", r)
		}
	})
	t.Run("every candidate limited waits for the earliest reset", func(t *testing.T) {
		// a resets in 3h, then b in 5h: the run would wait 3h for a (not
		// 5h for b), which passes the 1h wall budget.
		ad := &pinAdapter{results: []agent.Result{rateLimited(3 * time.Hour), rateLimited(5 * time.Hour), resFree}, doneOn: 3}
		out, _ := pinRun(t, ad, nil, 10*time.Second, func(l *spec.Loop) {
			withFallback(l)
			l.Budget.Wall = spec.Duration(time.Hour)
		})
		if got := models(ad.calls()); got != "a,b" {
			t.Errorf("runs on models %s, want a,b", got)
		}
		if out.Reason != ReasonTimeCost || !strings.Contains(out.Summary, "waiting 3h0m0s would pass the wall budget") {
			t.Fatalf("outcome %s: %s; want time_cost waiting 3h0m0s for a's reset", out.Reason, out.Summary)
		}
	})
}

// Every record of a run that failed over names the model that ran the try
// it reports, and the records' costs add up to what the state counts: the
// try that hit the limit is an agent_retry on its own model (no wait), the
// end of the run is on the model that ran its last try (issue 27).
func TestFailoverRecordsNameTheModelRun(t *testing.T) {
	limited := func(after time.Duration, cost float64) agent.Result {
		r := rateLimited(after)
		r.CostUSD = cost
		return r
	}
	costs := func(t *testing.T, out *Outcome, evs []record.Event) {
		t.Helper()
		sum := 0.0
		for _, e := range evs {
			if e.Event == record.AgentEnd || e.Event == record.AgentRetry {
				sum += e.CostUSD
			}
		}
		if math.Abs(sum-out.State.CostUSD) > 1e-9 {
			t.Errorf("the records' costs add up to $%.2f, the state counts $%.2f", sum, out.State.CostUSD)
		}
	}
	t.Run("failover", func(t *testing.T) {
		ad := &pinAdapter{results: []agent.Result{limited(3*time.Hour, 0.5), resOK}, doneOn: 2}
		out, evs := pinRun(t, ad, nil, 10*time.Second, withFallback)
		if out.Reason != ReasonDone {
			t.Fatalf("outcome %s: %s; want done on the fallback", out.Reason, out.Summary)
		}
		var got []string
		for _, e := range evs {
			switch e.Event {
			case record.AgentStart, record.AgentRetry, record.AgentEnd:
				got = append(got, fmt.Sprintf("%s %s $%.2f", e.Event, e.Model, e.CostUSD))
			}
		}
		want := "agent_start a $0.00|agent_retry a $0.50|agent_end b $0.25"
		if strings.Join(got, "|") != want {
			t.Errorf("records %q, want %q", strings.Join(got, "|"), want)
		}
		costs(t, out, evs)
	})
	t.Run("every candidate limited", func(t *testing.T) {
		ad := &pinAdapter{results: []agent.Result{limited(3*time.Hour, 0.5), limited(5*time.Hour, 0.25), resFree}, doneOn: 3}
		out, evs := pinRun(t, ad, nil, 10*time.Second, func(l *spec.Loop) {
			withFallback(l)
			l.Budget.Wall = spec.Duration(time.Hour)
		})
		if out.Reason != ReasonTimeCost {
			t.Fatalf("outcome %s: %s; want time_cost", out.Reason, out.Summary)
		}
		var end *record.Event
		for i, e := range evs {
			if e.Event == record.AgentEnd {
				end = &evs[i]
			}
		}
		// b ran the last try (a's limit resets first, but a did not run it).
		if end == nil || end.Model != "b" || end.CostUSD != 0.25 {
			t.Errorf("agent_end %+v, want model b at $0.25", end)
		}
		for _, e := range retries(evs) {
			if e.Model == "" {
				t.Errorf("agent_retry %+v names no model", e)
			}
		}
		costs(t, out, evs)
	})
}
