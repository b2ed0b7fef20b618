package cost

// Tests of EstimateLoop (issue 18): which runs each shape counts, how many
// of each its budgets allow, per-run caps, unknown and command agents, and
// the figures built from them.

import (
	"math"
	"reflect"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

func parseLoop(t *testing.T, src string) *spec.Loop {
	t.Helper()
	l, err := spec.Parse([]byte(src), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

var testTable = Table{"opus": {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}, "sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}

func per(model string, turns int) float64 {
	return DefaultAssumptions.Session(model, testTable[model], turns).USD
}

func TestEstimateLoopCycle(t *testing.T) {
	l := parseLoop(t, `objective: x
agent: {backend: claude, model: opus, max_turns: 10}
agents:
  build: {model: sonnet, max_turns: 20, max_budget_usd: 0.05}
budget: {iterations: 7, cycles: 3, cost_usd: 100}
post_phases:
  - {name: docs, prompt: p, done: D, max_steps: 2}
`)
	e := DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{})
	var phases []string
	counts := map[string]int{}
	for _, r := range e.Runs {
		phases = append(phases, r.Phase)
		counts[r.Phase] = r.Count
	}
	if !reflect.DeepEqual(phases, []string{"plan", "replan", "build", "post: docs"}) {
		t.Fatalf("runs %v", phases)
	}
	if counts["plan"] != 1 || counts["replan"] != 2 || counts["build"] != 7 || counts["post: docs"] != 2 {
		t.Errorf("counts %v, want plan 1, replan cycles-1 = 2, build 7, docs max_steps 2", counts)
	}
	plan, build, docs := e.Runs[0], e.Runs[2], e.Runs[3]
	if !near(plan.PerRun, per("opus", 10)) || plan.Capped || !plan.Known || plan.PriceKey != "opus" {
		t.Errorf("plan run %+v, want opus for 10 turns", plan)
	}
	if per("sonnet", 20) <= 0.05 {
		t.Fatal("the test needs a build run dearer than its cap")
	}
	if !near(build.PerRun, 0.05) || !build.Capped || !near(build.Subtotal, 0.35) {
		t.Errorf("build run %+v, want capped at 0.05, 7 of them", build)
	}
	if e.Tasks != 5 {
		t.Errorf("tasks %d, want the default 5", e.Tasks)
	}
	wantTypical := plan.PerRun + 5*build.PerRun + docs.PerRun
	if !near(e.Typical, wantTypical) || e.TypicalOf != "one cycle: a plan, 5 build runs and the post phases once" {
		t.Errorf("typical %v (%s), want %v", e.Typical, e.TypicalOf, wantTypical)
	}
	worst := plan.Subtotal + e.Runs[1].Subtotal + build.Subtotal + docs.Subtotal
	if !near(e.WorstCase, worst) || !near(e.Bound, worst) || e.Cap != 100 {
		t.Errorf("worst %v bound %v cap %v, want worst %v under the cap", e.WorstCase, e.Bound, e.Cap, worst)
	}
	if !near(e.PerAttempt, build.PerRun) || !e.Priced || len(e.Unknown) != 0 {
		t.Errorf("per attempt %v priced %v unknown %v", e.PerAttempt, e.Priced, e.Unknown)
	}

	// A cap below the worst case bounds it; one cycle has no re-plan; the
	// turns of the options win over max_turns; the tasks given are used.
	l.Budget.CostUSD, l.Budget.Cycles = 0.5, 1
	l.PostPhases = nil
	e = DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{Turns: 3, Tasks: 2})
	if len(e.Runs) != 2 || e.Runs[0].Phase != "plan" || e.Runs[1].Phase != "build" {
		t.Fatalf("one cycle: runs %+v, want plan and build only", e.Runs)
	}
	if e.Runs[0].Turns != 3 || !near(e.Runs[0].PerRun, per("opus", 3)) {
		t.Errorf("plan run %+v, want 3 turns", e.Runs[0])
	}
	if e.Tasks != 2 || e.TypicalOf != "one cycle: a plan and 2 build runs" || !near(e.Typical, e.Runs[0].PerRun+2*e.Runs[1].PerRun) {
		t.Errorf("typical %v (%s) for 2 tasks", e.Typical, e.TypicalOf)
	}
	if e.WorstCase <= 0.5 || e.Bound != 0.5 {
		t.Errorf("worst %v bound %v: want the 0.5 cap to bound a dearer worst case", e.WorstCase, e.Bound)
	}
	// One task: one build run, not "1 build runs".
	if e = DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{Turns: 3, Tasks: 1}); e.TypicalOf != "one cycle: a plan and 1 build run" {
		t.Errorf("one task: %q", e.TypicalOf)
	}
	l.Budget.CostUSD = 0
	if e = DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{}); !near(e.Bound, e.WorstCase) {
		t.Errorf("no cap: bound %v, want the worst case %v", e.Bound, e.WorstCase)
	}
}

func TestEstimateLoopRalphUnknownAndDefaults(t *testing.T) {
	l := parseLoop(t, "shape: ralph\nobjective: x\nverify: [true]\nagent: {backend: codex, model: mystery-1}\nbudget: {iterations: 4}\npost_phases:\n  - {name: docs, prompt: p, done: D, max_steps: 3}\n")
	e := DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{})
	if len(e.Runs) != 2 || e.Runs[0].Phase != "ralph" || e.Runs[0].Count != 4 || e.Runs[1].Phase != "post: docs" || e.Runs[1].Count != 3 {
		t.Fatalf("runs %+v, want ralph ×4 and docs ×3", e.Runs)
	}
	r := e.Runs[0]
	if r.Known || r.PerRun != 0 || r.Turns != spec.DefaultMaxTurns {
		t.Errorf("unknown model's run %+v: want unpriced with the default turns", r)
	}
	if e.Priced || !reflect.DeepEqual(e.Unknown, []string{"mystery-1"}) || e.Typical != 0 || e.TypicalOf != "one attempt" {
		t.Errorf("priced %v unknown %v typical %v (%s)", e.Priced, e.Unknown, e.Typical, e.TypicalOf)
	}

	// Claude without a model is priced as sonnet, and says so; the attempt
	// is the typical figure; the post phases count in the worst case only.
	l = parseLoop(t, "shape: ralph\nobjective: x\nverify: [true]\nagent: {backend: claude, max_turns: 5}\nbudget: {iterations: 3}\npost_phases:\n  - {name: docs, prompt: p, done: D, max_steps: 1}\n")
	e = DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{})
	r = e.Runs[0]
	if r.Model != "" || r.Assumed == "" || !r.Known || !near(r.PerRun, per("sonnet", 5)) {
		t.Errorf("claude without a model: %+v, want priced as sonnet", r)
	}
	if !near(e.Typical, r.PerRun) || !near(e.PerAttempt, r.PerRun) || !near(e.WorstCase, 3*r.PerRun+e.Runs[1].PerRun) {
		t.Errorf("typical %v per attempt %v worst %v", e.Typical, e.PerAttempt, e.WorstCase)
	}
}

func TestEstimateLoopReviewAndCommandAgents(t *testing.T) {
	l := parseLoop(t, `shape: review
objective: x
agent: {backend: claude, model: opus, max_turns: 8}
agents:
  reviewer: {model: sonnet}
  fixer: {backend: command, command: ./fix.sh}
review: {max_rounds: 2, writer: draft it}
`)
	e := DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{})
	var got []string
	for _, r := range e.Runs {
		got = append(got, r.Phase)
	}
	if !reflect.DeepEqual(got, []string{"writer", "reviewer", "fixer"}) {
		t.Fatalf("runs %v", got)
	}
	w, rv, fx := e.Runs[0], e.Runs[1], e.Runs[2]
	if w.Count != 1 || rv.Count != 3 || fx.Count != 2 {
		t.Errorf("counts writer %d reviewer %d fixer %d, want 1, rounds+1 = 3, rounds = 2", w.Count, rv.Count, fx.Count)
	}
	if !fx.Command || fx.Turns != 0 || fx.Known || !reflect.DeepEqual(e.Commands, []string{"fixer"}) {
		t.Errorf("command fixer %+v, commands %v", fx, e.Commands)
	}
	if len(e.Unknown) != 0 {
		t.Errorf("a command agent is not an unknown model: %v", e.Unknown)
	}
	want := w.Subtotal + rv.Subtotal
	if !near(e.Typical, want) || !near(e.WorstCase, want) || !near(e.PerAttempt, want) || e.TypicalOf != "2 rounds and the fix check" {
		t.Errorf("typical %v worst %v per attempt %v (%s), want %v", e.Typical, e.WorstCase, e.PerAttempt, e.TypicalOf, want)
	}
	if !near(rv.Subtotal, 3*per("sonnet", 8)) {
		t.Errorf("reviewer subtotal %v", rv.Subtotal)
	}
	// Without a writer, no writer run; two unknown models are named once.
	l.Review.Writer = ""
	l.Agents["fixer"] = spec.Agent{Backend: "codex", Model: "zz"}
	l.Agents["reviewer"] = spec.Agent{Backend: "codex", Model: "zz"}
	e = DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{})
	if len(e.Runs) != 2 || e.Runs[0].Phase != "reviewer" || !reflect.DeepEqual(e.Unknown, []string{"zz"}) {
		t.Errorf("runs %+v unknown %v", e.Runs, e.Unknown)
	}
}

func TestValidators(t *testing.T) {
	if DefaultAssumptions.Validate() != nil {
		t.Error("the default assumptions are valid")
	}
	for _, a := range []Assumptions{{Prefix: -1}, {Growth: -1}, {OutPerTurn: -1}} {
		if a.Validate() == nil {
			t.Errorf("%+v: want an error", a)
		}
	}
	if (Assumptions{}).Validate() != nil {
		t.Error("zero assumptions are valid")
	}
	ok := ReviewLoop{Writer: Role{Name: "writer", Turns: 1}, Reviewer: Role{Name: "reviewer", Turns: 1}, Fixer: Role{Name: "fixer", Turns: 1}}
	if ok.Validate() != nil {
		t.Error("one turn each is valid")
	}
	bad := ok
	bad.Fixer.Turns = 0
	if err := bad.Validate(); err == nil || err.Error() != "--fixer-turns must be at least 1" {
		t.Errorf("fixer without turns: %v", err)
	}
	bad = ok
	bad.Rounds = -1
	if bad.Validate() == nil {
		t.Error("negative rounds: want an error")
	}
	for r, valid := range map[float64]bool{0: true, 1: true, 0.5: true, 1.01: false, -0.1: false, math.NaN(): false} {
		if (ValidRate(r) == nil) != valid {
			t.Errorf("ValidRate(%v): valid %v", r, !valid)
		}
	}
	rs := PerTaskRates(2, 0)
	if len(rs) != 3 || rs[0].Rate != 1 || !near(rs[0].USD, 2) || rs[1].Rate != 0.7 || !near(rs[1].USD, 2/0.7) || !near(rs[2].USD, 4) {
		t.Errorf("PerTaskRates(2, 0) = %+v", rs)
	}
	if rs := PerTaskRates(2, 0.25); len(rs) != 1 || !near(rs[0].USD, 8) {
		t.Errorf("PerTaskRates(2, 0.25) = %+v", rs)
	}
}

// The edges of the small rules: a success rate of exactly 1, a price of
// exactly 0, a merge that sets one field at a time, and a review priced at
// zero (no ratios, never NaN).
func TestCostEdges(t *testing.T) {
	if v, err := PerTask(3, 1); err != nil || v != 3 {
		t.Errorf("PerTask(3, 1) = %v, %v", v, err)
	}
	if p, err := ParsePrice("0,0,0"); err != nil || p != (Price{}) {
		t.Errorf("ParsePrice(0,0,0) = %+v, %v", p, err)
	}
	base := Table{"m": {Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}}
	for _, c := range []struct {
		set  Price
		want Price
	}{
		{Price{Input: 9}, Price{Input: 9, Output: 2, CacheRead: 3, CacheWrite: 4}},
		{Price{Output: 9}, Price{Input: 1, Output: 9, CacheRead: 3, CacheWrite: 4}},
		{Price{CacheRead: 9}, Price{Input: 1, Output: 2, CacheRead: 9, CacheWrite: 4}},
		{Price{CacheWrite: 9}, Price{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 9}},
	} {
		if got := base.Merge(map[string]Price{"M": c.set})["m"]; got != c.want {
			t.Errorf("merge %+v: %+v, want %+v", c.set, got, c.want)
		}
	}
	if base["m"].Input != 1 {
		t.Error("Merge changed the table it was called on")
	}
	free := Table{"free": {}}
	rl := ReviewLoop{Writer: Role{Name: "writer", Model: "free", Turns: 3}, Reviewer: Role{Name: "reviewer", Model: "free", Turns: 2}, Fixer: Role{Name: "fixer", Model: "free", Turns: 2}, Rounds: 2, FixCheck: true}
	e, err := DefaultAssumptions.EstimateReview(free, rl)
	if err != nil || e.Total != 0 || e.PackedRatio != 0 || e.WriteRatio != 0 {
		t.Errorf("a free review: %+v, %v; want zero figures and no ratios", e, err)
	}
	rl.Fixer.Model = "unknown"
	if _, err := DefaultAssumptions.EstimateReview(free, rl); err == nil {
		t.Error("a fixer model without a price: want an error")
	}
}

// A run whose price equals its cap is not capped; an agent without
// max_turns is priced at the default turns.
func TestEstimateLoopCapEdgeAndDefaultTurns(t *testing.T) {
	l := parseLoop(t, "shape: ralph\nobjective: x\nverify: [true]\nagent: {backend: claude, model: opus}\nbudget: {iterations: 2}\n")
	l.Agent.MaxTurns = 0
	l.Agent.MaxBudgetUSD = per("opus", spec.DefaultMaxTurns)
	r := DefaultAssumptions.EstimateLoop(l, testTable, LoopOptions{}).Runs[0]
	if r.Turns != spec.DefaultMaxTurns || r.Capped || !near(r.PerRun, l.Agent.MaxBudgetUSD) {
		t.Errorf("run %+v: want %d turns, priced exactly at its cap and not capped", r, spec.DefaultMaxTurns)
	}
}
