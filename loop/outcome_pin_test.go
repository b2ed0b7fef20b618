package loop

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// A stop that is not DONE still reports the last gate's evidence and what
// was not verified (here: redaction off), in the outcome, in the state and
// in the loop_stop record.
func TestPinStopCarriesEvidenceAndNotVerified(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{resFree}}
	out, evs := pinRun(t, ad, nil, time.Minute, func(l *spec.Loop) {
		l.Budget.Iterations = 5 // a warning at the fifth run's start (4 of 5)
		l.Redact.Off = true
	})
	if out.Reason != ReasonBudget {
		t.Fatalf("outcome %s (%s), want %s", out.Reason, out.Summary, ReasonBudget)
	}
	if want := "attempt budget spent: 5 attempts without passing the verify checks"; !strings.Contains(out.Summary, want) {
		t.Errorf("summary %q, want %q", out.Summary, want)
	}
	wantEv := "verify gate: `test -s done.txt` exit 1 FAIL"
	hasEv := func(ev []string) bool {
		return slices.ContainsFunc(ev, func(s string) bool { return strings.HasPrefix(s, wantEv) })
	}
	if !hasEv(out.Evidence) {
		t.Fatalf("outcome evidence %q, want the verify gate's failure %q", out.Evidence, wantEv)
	}
	if !slices.Contains(out.NotVerified, redactionNote) {
		t.Fatalf("outcome not verified %q, want the redaction note", out.NotVerified)
	}
	if w := events(evs, record.BudgetWarning); len(w) != 1 || w[0].Kind != "iterations" {
		t.Errorf("budget warnings %+v, want one, of iterations", w)
	}
	var stop *record.Event
	for i := range evs {
		if evs[i].Event == record.LoopStop {
			stop = &evs[i]
		}
	}
	if stop == nil || !hasEv(stop.Evidence) || !slices.Contains(stop.NotVerified, redactionNote) {
		t.Fatalf("loop_stop record %+v, want the evidence and the redaction note", stop)
	}
}

// How a run that did not end well is told: its error or its status and
// exit code, the agent's question, the fix the adapter knows; the
// transcript only when the agent printed something (here nothing).
func TestPinFailedRunSummary(t *testing.T) {
	cases := []struct {
		name    string
		res     agent.Result
		want    []string
		notWant []string
	}{
		{"no error", agent.Result{Status: agent.StatusFailed, ExitCode: 3}, []string{"BLOCKED", "ralph run: the agent run ended failed (exit 3)"}, []string{"(transcript", "fix:"}},
		{"an error and a fix", agent.Result{Status: agent.StatusFailed, Error: "not logged in", Fix: "run the CLI's login"}, []string{"ralph run: not logged in", "\nfix: run the CLI's login"}, []string{"(transcript", "ended failed"}},
		{"blocked, asking", agent.Result{Status: agent.StatusBlocked, Error: "x", Blocked: "which database?"}, []string{"ralph run: the agent asked for a human: which database?"}, []string{"(transcript", "fix:"}},
		{"ok, asking", agent.Result{Status: agent.StatusOK, Blocked: "which database?"}, []string{"ralph run: the agent asked for a human: which database?"}, []string{"(transcript"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _ := pinRun(t, &pinAdapter{results: []agent.Result{c.res}}, nil, time.Minute, nil)
			if out.Reason != ReasonBlocked {
				t.Fatalf("outcome %s (%s), want blocked", out.Reason, out.Summary)
			}
			got := Title(out.Reason) + ": " + out.Summary
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("%q has %q", got, w)
				}
			}
		})
	}
}

// The first try of a run writes NAME.log, a retried try NAME.tryN.log; the
// records point at each.
func TestPinTranscriptOfEachTry(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{rateLimited(10 * time.Millisecond), resFree}, doneOn: 2}
	out, evs := pinRun(t, ad, nil, time.Minute, nil)
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s (%s), want done", out.Reason, out.Summary)
	}
	rs := retries(evs)
	ends := events(evs, record.AgentEnd)
	if len(rs) != 1 || len(ends) != 1 {
		t.Fatalf("%d retries and %d agent_end records, want 1 and 1", len(rs), len(ends))
	}
	if got := filepath.Base(rs[0].Transcript); got != "0001-c1-i1-ralph.log" {
		t.Errorf("the first try's transcript is %s, want 0001-c1-i1-ralph.log", got)
	}
	if got := filepath.Base(ends[0].Transcript); got != "0001-c1-i1-ralph.try2.log" {
		t.Errorf("the second try's transcript is %s, want 0001-c1-i1-ralph.try2.log", got)
	}
}

// The outcome's plan is the one on disk, or the last good one when there is
// none (here the cycle gate failed, the plan was archived, and the
// iteration budget allows no re-plan).
func TestEngineOutcomePlanIsTheLastGoodOne(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"grep -q yes a.txt\"]\nbudget: {iterations: 1}\n",
		"agent.txt": "== plan\nplan T-001:a.txt\n== build\nwrite a.txt no\nmark T-001\n",
	}
	out, evs, dir := fakeLoop(t, files, nil)
	if out.Reason != ReasonBudget {
		t.Fatalf("outcome %s: %s; want budget", out.Reason, out.Summary)
	}
	if len(events(evs, record.PlanArchived)) != 1 {
		t.Fatal("the plan was not archived")
	}
	if _, _, err := ReadPlan(loopdir.Dir(dir).Plan()); err == nil {
		t.Fatal("a plan.json is on disk: the test needs none")
	}
	if out.Plan == nil || len(out.Plan.Tasks) != 1 || out.Plan.Tasks[0].ID != "T-001" {
		t.Fatalf("outcome plan %+v, want the last good plan (T-001)", out.Plan)
	}
}

// The 80% warnings compare what is spent with the budget: $3 of a $10
// cost_usd is 30%, no warning.
func TestPinCostWarningIsAFractionOfTheBudget(t *testing.T) {
	ad := &pinAdapter{results: []agent.Result{{Status: agent.StatusOK, CostUSD: 1}}}
	out, evs := pinRun(t, ad, nil, time.Minute, func(l *spec.Loop) {
		l.Budget.Iterations = 3
		l.Budget.CostUSD = 10
	})
	if out.Reason != ReasonBudget || out.State.CostUSD != 3 {
		t.Fatalf("outcome %s after $%.2f, want budget after $3", out.Reason, out.State.CostUSD)
	}
	for _, w := range events(evs, record.BudgetWarning) {
		if w.Kind == "cost_usd" {
			t.Fatalf("a cost warning at $3 of $10: %+v", w)
		}
	}
}

// The iteration budget counts build runs: with all of it used by the three
// builds, the post phase still runs and the loop ends DONE.
func TestEnginePostPhaseRunsAtTheIterationBudget(t *testing.T) {
	files := map[string]string{"loop.yaml": cycleLoop, "agent.txt": "== plan\nauto\n== build\nauto\n== docs\nwrite SUMMARY.md done\nauto\n"}
	out, evs, _ := fakeLoop(t, files, func(l *spec.Loop) { l.Budget.Iterations = 3 })
	if out.Reason != ReasonDone || out.State.Iterations != 3 {
		t.Fatalf("outcome %s after %d iterations: %s; want done after 3", out.Reason, out.State.Iterations, out.Summary)
	}
	if as := events(evs, record.AgentStart); len(as) != 5 || as[4].Phase != "docs" {
		t.Fatalf("%d agent runs, want 5, the last the docs phase", len(as))
	}
}

// The outcome shows the current plan (the one status and report show)
// when there is one, and the engine's last plan only when there is none.
func TestPinOutcomePlan(t *testing.T) {
	current := &Plan{Tasks: []Task{{ID: "T-002"}}}
	last := &Plan{Tasks: []Task{{ID: "T-001"}}}
	if got := outcomePlan(current, last); got != current {
		t.Errorf("with a current plan: %+v, want the current one", got)
	}
	if got := outcomePlan(nil, last); got != last {
		t.Errorf("with no current plan: %+v, want the last one", got)
	}
	if got := outcomePlan(nil, nil); got != nil {
		t.Errorf("with neither: %+v", got)
	}
}
