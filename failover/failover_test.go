package failover

import (
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// failoverRunner is a runner over a review loop whose writer and fixer run
// command/a and whose reviewer runs command/b, falling back to command/a,
// then command/c.
func failoverRunner(t *testing.T) (*testRunner, *[]record.Event) {
	t.Helper()
	dir := t.TempDir()
	a := spec.Agent{Backend: "command", Model: "a", Command: "/bin/true", FallbackAfter: spec.Duration(10 * time.Minute)}
	rev := a
	rev.Model = "b"
	rev.Fallback = []spec.Fallback{{Backend: "command", Model: "a", Command: "/bin/true"}, {Backend: "command", Model: "c", Command: "/bin/true"}}
	l := &spec.Loop{Shape: spec.ShapeReview, Dir: dir, Agent: a, Agents: map[string]spec.Agent{"reviewer": rev}}
	rec, err := record.Create(t.TempDir(), "r", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	var evs []record.Event
	rec.Subscribe(func(ev record.Event) { evs = append(evs, ev) })
	return newTestRunner(l, dir, func(ev record.Event) { rec.Write(ev) }), &evs
}

// The reviewer, limited, never fails over onto the writer's and fixer's
// model: it skips command/a and takes command/c.
func TestFailoverKeepsReviewerOffWriterModel(t *testing.T) {
	r, evs := failoverRunner(t)
	first := r.spec().AgentFor("reviewer", false)
	cur := r.chooseAgent("reviewer", "", first)
	if agentKey(cur) != "command/b" {
		t.Fatalf("first choice %s, want command/b", agentKey(cur))
	}
	next, wait, ok := r.failoverOnLimit("reviewer", "", first, cur, 3*time.Hour)
	if !ok || agentKey(next) != "command/c" || wait != 0 {
		t.Fatalf("failover to %s (ok %v, wait %s), want command/c at once", agentKey(next), ok, wait)
	}
	if len(*evs) != 1 || (*evs)[0].Event != record.AgentFailover || (*evs)[0].From != "command/b" || (*evs)[0].To != "command/c" {
		t.Fatalf("records %+v, want one agent_failover b → c", *evs)
	}
	// The next run stays on c while b is limited.
	if got := agentKey(r.chooseAgent("reviewer", "", first)); got != "command/c" {
		t.Errorf("next reviewer run on %s, want command/c", got)
	}
	// c limited too: everything the reviewer may use is limited; it waits
	// for the earliest reset (b's, 3h, before c's 5h), on b.
	next, wait, ok = r.failoverOnLimit("reviewer", "", first, next, 5*time.Hour)
	if ok || agentKey(next) != "command/b" || wait > 3*time.Hour || wait < 2*time.Hour {
		t.Errorf("all limited: %s after %s (ok %v), want command/b after about 3h", agentKey(next), wait, ok)
	}
	// Back to the first choice once its limit has passed.
	r.st.Failover.Limits["command/b"] = time.Now().Add(-time.Second)
	if got := agentKey(r.chooseAgent("reviewer", "", first)); got != "command/b" {
		t.Errorf("after the reset the reviewer runs on %s, want command/b", got)
	}
}

// A limit that resets sooner than fallback_after is waited out, as without
// fallbacks; an agent without fallbacks never fails over.
func TestFailoverOnlyPastFallbackAfter(t *testing.T) {
	r, evs := failoverRunner(t)
	first := r.spec().AgentFor("reviewer", false)
	if _, wait, ok := r.failoverOnLimit("reviewer", "", first, first, 5*time.Minute); ok || wait != 5*time.Minute {
		t.Errorf("a 5m limit failed over (ok %v, wait %s)", ok, wait)
	}
	w := r.spec().AgentFor("writer", false)
	if _, _, ok := r.failoverOnLimit("writer", "", w, w, 3*time.Hour); ok {
		t.Error("an agent without fallbacks failed over")
	}
	if len(*evs) != 0 {
		t.Errorf("records %+v, want none", *evs)
	}
}
