package loop

import (
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
		if len(retries(evs)) != 0 || out.State.Iterations != 1 {
			t.Errorf("%d retries, %d attempts; want 0 and 1 (the failover goes on at once and is no attempt)", len(retries(evs)), out.State.Iterations)
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
