package cost

import (
	"fmt"
	"math"
	"sort"

	"github.com/looprinter/looprinter/spec"
)

// LoopOptions tune the estimate of a loop file.
type LoopOptions struct {
	Turns int // turns per agent run; 0: each agent's max_turns
	Tasks int // tasks per cycle, for the one-cycle figure; 0: 5
}

// RunLine is one kind of agent run of a loop.
type RunLine struct {
	Phase    string
	Backend  string
	Model    string
	PriceKey string // the price table entry used; "" when no price is known
	Assumed  string // why the model was assumed, if it was
	Turns    int
	PerRun   float64 // one run, capped by max_budget_usd
	Capped   bool    // PerRun is max_budget_usd
	Count    int     // most runs of this kind the budgets allow
	Subtotal float64 // PerRun * Count
	Known    bool
	// Command: a command agent (agent.backend: command). Its model and
	// tokens are unknown to looprinter, so it cannot be priced; its spend is
	// what it reports on ::looprinter cost_usd=… lines, capped by
	// budget.cost_usd.
	Command bool
}

// LoopEstimate is what a loop file may cost.
type LoopEstimate struct {
	Shape     string
	Runs      []RunLine
	Typical   float64 // cycle: one cycle of Tasks tasks; ralph: one attempt; review: one full review
	TypicalOf string  // what Typical is
	Tasks     int
	WorstCase float64 // every budgeted run at its per-run cost
	Cap       float64 // budget.cost_usd
	Bound     float64 // min(WorstCase, Cap)
	Unknown   []string
	// PerAttempt is what one attempt costs, for the cost per task: a build
	// run (cycle), an attempt (ralph), a whole review (review).
	PerAttempt float64
	// Priced says whether any run could be priced; when none could (every
	// agent is a command agent, or no model has a price) the figures are 0
	// and only Cap bounds the loop.
	Priced bool
	// Commands lists the phases run by a command agent.
	Commands []string
}

// FromSpec converts a loop file's prices: map.
func FromSpec(m map[string]spec.Price) map[string]Price {
	out := map[string]Price{}
	for k, v := range m {
		out[k] = Price(v)
	}
	return out
}

// EstimateLoop prices a loop file's runs from its budgets and agents. The
// table should already hold the loop file's prices (see FromSpec).
func (a Assumptions) EstimateLoop(l *spec.Loop, t Table, o LoopOptions) LoopEstimate {
	if o.Tasks <= 0 {
		o.Tasks = 5
	}
	e := LoopEstimate{Shape: l.Shape, Cap: l.Budget.CostUSD, Tasks: o.Tasks}
	line := func(phase string, ag spec.Agent, count int) RunLine {
		r := RunLine{Phase: phase, Backend: ag.Backend, Model: ag.Model, Count: count, Turns: ag.MaxTurns}
		if ag.Backend == "command" {
			r.Command, r.Turns = true, 0
			e.Commands = append(e.Commands, phase)
			return r
		}
		if o.Turns > 0 {
			r.Turns = o.Turns
		}
		if r.Turns <= 0 {
			r.Turns = spec.DefaultMaxTurns
		}
		model := ag.Model
		if model == "" && ag.Backend == "claude" {
			model, r.Assumed = "sonnet", "no model set; assumed sonnet"
		}
		p, key, ok := t.Lookup(model)
		if model == "" || !ok {
			name := model
			if name == "" {
				name = ag.Backend
			}
			e.Unknown = append(e.Unknown, name)
			return r
		}
		r.Known, r.PriceKey = true, key
		r.PerRun = a.Session(model, p, r.Turns).USD
		if ag.MaxBudgetUSD > 0 && r.PerRun > ag.MaxBudgetUSD {
			r.PerRun, r.Capped = ag.MaxBudgetUSD, true
		}
		r.Subtotal = r.PerRun * float64(count)
		return r
	}
	b := l.Budget
	switch l.Shape {
	case spec.ShapeRalph:
		r := line("ralph", l.AgentFor("ralph", false), b.Iterations)
		e.Runs = append(e.Runs, r)
		e.Typical, e.TypicalOf = r.PerRun, "one attempt"
	case spec.ShapeReview:
		rounds := l.Review.MaxRounds
		if l.Review.Writer != "" {
			e.Runs = append(e.Runs, line("writer", l.AgentFor("writer", false), 1))
		}
		e.Runs = append(e.Runs,
			line("reviewer", l.AgentFor("reviewer", false), rounds+1),
			line("fixer", l.AgentFor("fixer", false), rounds))
		for _, r := range e.Runs {
			e.Typical += r.Subtotal
		}
		e.TypicalOf = fmt.Sprintf("%d rounds and the fix check", rounds)
	default:
		plan := line("plan", l.AgentFor("plan", false), 1)
		replan := line("replan", l.AgentFor("replan", false), b.Cycles-1)
		build := line("build", l.AgentFor("build", false), b.Iterations)
		e.Runs = append(e.Runs, plan)
		if b.Cycles > 1 {
			e.Runs = append(e.Runs, replan)
		}
		e.Runs = append(e.Runs, build)
		e.Typical = plan.PerRun + float64(o.Tasks)*build.PerRun
		runs := fmt.Sprintf("%d build runs", o.Tasks)
		if o.Tasks == 1 {
			runs = "1 build run"
		}
		e.TypicalOf = "one cycle: a plan and " + runs
		if len(l.PostPhases) > 0 {
			e.TypicalOf = "one cycle: a plan, " + runs + " and the post phases once"
		}
	}
	if l.Shape != spec.ShapeReview {
		for _, p := range l.PostPhases {
			r := line("post: "+p.Name, l.AgentFor(p.Name, true), p.MaxSteps)
			e.Runs = append(e.Runs, r)
			if l.Shape == spec.ShapeCycle {
				e.Typical += r.PerRun
			}
		}
	}
	for _, r := range e.Runs {
		e.WorstCase += r.Subtotal
		e.Priced = e.Priced || r.Known
		if l.Shape == spec.ShapeCycle && r.Phase == "build" {
			e.PerAttempt = r.PerRun
		}
	}
	if l.Shape != spec.ShapeCycle {
		e.PerAttempt = e.Typical
	}
	e.Bound = e.WorstCase
	if e.Cap > 0 {
		e.Bound = math.Min(e.WorstCase, e.Cap)
	}
	sort.Strings(e.Unknown)
	e.Unknown = dedupe(e.Unknown)
	return e
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
