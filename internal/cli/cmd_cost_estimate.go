package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/cost"
	"github.com/looprinter/looprinter/spec"
)

// costEstimateOptions are the flags of `looprinter cost estimate`.
type costEstimateOptions struct {
	file        string
	noLoop      bool
	a           cost.Assumptions
	writer      cost.Role
	reviewer    cost.Role
	fixer       cost.Role
	rounds      int
	fixCheck    bool
	successRate float64
	prices      []string
	pricesFile  string
	turns       int
	tasks       int
}

// newCostEstimateCmd is `looprinter cost estimate`. It is not registered on
// its own: the `cost` parent command adds it as a subcommand.
func newCostEstimateCmd(stdio *IO) *cobra.Command {
	o := &costEstimateOptions{
		a:        cost.DefaultAssumptions,
		writer:   cost.Role{Name: "writer", Model: "opus", Turns: 30},
		reviewer: cost.Role{Name: "reviewer", Model: "sonnet", Turns: 10},
		fixer:    cost.Role{Name: "fixer", Model: "opus", Turns: 15},
	}
	cmd := &cobra.Command{
		Use:   "estimate",
		Short: "Estimate what a loop will cost before it runs",
		Long: `Estimate token cost with looprinter's cost model (docs/cost.md). Each agent run is a session of N turns with prompt
caching on: a fixed prefix S resent every turn, a history growing by D tokens a
turn, and a fixed number of output tokens a turn:

  writes = S + (N-1)*D
  reads  = N*S + D*N*(N-1)/2 - writes
  cost   = writes*cache_write + reads*cache_read + N*output_tokens*output_price

With a loop file (-f, or ./loop.yaml when it exists) it prices that loop: each
kind of agent run at its max_turns, how many runs its budgets allow, one
typical cycle, and the worst case capped by budget.cost_usd.

Without one it prices a review loop (writer, rounds of reviewer and fixer, a
fix check) with a fresh session per role, compares it with the same work packed
into one session, and shows cost per task = cost per attempt ÷ success rate.

A command agent (agent.backend: command) cannot be estimated: looprinter
knows neither its model nor its tokens; the estimate says so and shows the
budget.cost_usd cap.

Prices are USD per million tokens. The defaults are the worked example's of
docs/cost.md (opus: cache write 5, cache read 0.20, output 20; sonnet: 2.5,
0.20, 10). Override them with
--price NAME=CACHE_WRITE,CACHE_READ,OUTPUT[,INPUT], a --prices YAML file
(NAME: {cache_write: .., cache_read: .., output: .., input: ..}), or the loop
file's prices: map. A model name matches the longest table name it contains,
so claude-opus-5-5 uses opus.`,
		Example: `  # the worked example of docs/cost.md: writer $1.3746, reviewer $0.2551, fixer $0.6606, total $4.3768
  looprinter cost estimate --no-loop

  # two review rounds, no fix check, a reviewer on another vendor's model
  looprinter cost estimate --no-loop --rounds 2 --fix-check=false \
      --reviewer gpt-5 --price gpt-5=1.25,0.125,10

  # what the loop in ./loop.yaml may cost, with runs of about 20 turns
  looprinter cost estimate --turns 20

  # with your own price table
  looprinter cost estimate -f loops/fix/loop.yaml --prices prices.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCostEstimate(stdio, o, cmd.Flags().Changed("file"))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "loop.yaml", "loop file to estimate")
	f.BoolVar(&o.noLoop, "no-loop", false, "ignore ./loop.yaml and price the review-loop model")
	f.IntVar(&o.a.Prefix, "prefix", o.a.Prefix, "S: fixed prefix tokens every turn resends")
	f.IntVar(&o.a.Growth, "growth", o.a.Growth, "D: tokens the history grows by each turn")
	f.IntVar(&o.a.OutPerTurn, "output-tokens", o.a.OutPerTurn, "output tokens per turn")
	f.StringVar(&o.writer.Model, "writer", o.writer.Model, "writer's model")
	f.IntVar(&o.writer.Turns, "writer-turns", o.writer.Turns, "writer's turns")
	f.StringVar(&o.reviewer.Model, "reviewer", o.reviewer.Model, "reviewer's model (fresh context; another model where you can)")
	f.IntVar(&o.reviewer.Turns, "reviewer-turns", o.reviewer.Turns, "reviewer's turns")
	f.StringVar(&o.fixer.Model, "fixer", o.fixer.Model, "fixer's model")
	f.IntVar(&o.fixer.Turns, "fixer-turns", o.fixer.Turns, "fixer's turns")
	f.IntVar(&o.rounds, "rounds", 3, "review rounds (reviewer + fixer each)")
	f.BoolVar(&o.fixCheck, "fix-check", true, "add a reviewer pass that re-reads only the fixes")
	f.Float64Var(&o.successRate, "success-rate", 0, "share of attempts that succeed, 0 < r <= 1 (default: show 100%, 70% and 50%)")
	f.StringArrayVar(&o.prices, "price", nil, "a model's price: NAME=CACHE_WRITE,CACHE_READ,OUTPUT[,INPUT] in USD per million tokens (repeatable)")
	f.StringVar(&o.pricesFile, "prices", "", "YAML file of prices: NAME: {cache_write, cache_read, output, input}")
	f.IntVar(&o.turns, "turns", 0, "loop file: turns per agent run (default: each agent's max_turns)")
	f.IntVar(&o.tasks, "tasks", 5, "loop file: tasks per cycle, for the one-cycle figure")
	return cmd
}

func usageErr(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

func runCostEstimate(stdio *IO, o *costEstimateOptions, fileGiven bool) error {
	rl := cost.ReviewLoop{Writer: o.writer, Reviewer: o.reviewer, Fixer: o.fixer, Rounds: o.rounds, FixCheck: o.fixCheck}
	for _, err := range []error{o.a.Validate(), rl.Validate(), cost.ValidRate(o.successRate)} {
		if err != nil {
			return usageErr("%v", err)
		}
	}
	src := cost.PriceSources{Overrides: o.prices}
	if o.pricesFile != "" {
		src.File = spec.ExpandHome(o.pricesFile)
	}
	w := stdio.Out
	if !o.noLoop {
		_, statErr := os.Stat(spec.ExpandHome(o.file))
		if fileGiven || statErr == nil {
			l, err := loadLoop(o.file)
			if err != nil {
				return err
			}
			src.Loop = cost.FromSpec(l.Prices)
			table, err := cost.BuildTable(src)
			if err != nil {
				return usageErr("%v", err)
			}
			printLoopEstimate(w, o, l, o.a.EstimateLoop(l, table, cost.LoopOptions{Turns: o.turns, Tasks: o.tasks}), table)
			return nil
		}
	}
	table, err := cost.BuildTable(src)
	if err != nil {
		return usageErr("%v", err)
	}
	e, err := o.a.EstimateReview(table, rl)
	if err != nil {
		return usageErr("%v", err)
	}
	printReviewEstimate(w, o, e)
	return nil
}

func printReviewEstimate(w io.Writer, o *costEstimateOptions, e cost.ReviewEstimate) {
	printAssumptions(w, o.a)
	printPrices(w, []cost.Session{e.Writer, e.Reviewer, e.Fixer})
	fmt.Fprintln(w, "\nFresh session per role")
	fmt.Fprintf(w, "  %-9s %-8s %5s %13s %13s %9s %9s\n", "role", "model", "turns", "cache writes", "cache reads", "output", "cost")
	for _, s := range []struct {
		name string
		s    cost.Session
	}{{"writer", e.Writer}, {"reviewer", e.Reviewer}, {"fixer", e.Fixer}} {
		fmt.Fprintf(w, "  %-9s %-8s %5d %13s %13s %9s %9s\n", s.name, s.s.Model, s.s.Turns, thousands(s.s.Writes), thousands(s.s.Reads), thousands(s.s.Output), cost.USD(s.s.USD))
	}

	fmt.Fprintf(w, "\nReview loop: writer + %d rounds × (reviewer + fixer)", e.Rounds)
	expr := fmt.Sprintf("%.4f + %d*(%.4f + %.4f)", e.Writer.USD, e.Rounds, e.Reviewer.USD, e.Fixer.USD)
	if e.FixCheck {
		fmt.Fprint(w, " + fix check")
		expr += fmt.Sprintf(" + %.4f", e.Reviewer.USD)
	}
	fmt.Fprintf(w, "\n  %s = %s   (%.1f× a single write)\n", expr, cost.USD(e.Total), e.WriteRatio)

	p := e.Packed
	fmt.Fprintf(w, "\nThe same work packed into one %s session (%d turns; the whole history is resent every turn)\n", p.Model, p.Turns)
	fmt.Fprintf(w, "  writes %s, reads %s, output %s = %s   (%.1f× the fresh sessions)\n", thousands(p.Writes), thousands(p.Reads), thousands(p.Output), cost.USD(p.USD), e.PackedRatio)
	fmt.Fprintln(w, "  Fresh sessions with records on disk are cheaper: cost grows with the turns, not their square.")

	printPerTask(w, "Cost per task = cost per attempt ÷ success rate", e.Total, o.successRate)
	fmt.Fprintln(w, "  A weak verifier overstates the success rate, and so understates the cost per task.")
}

func printAssumptions(w io.Writer, a cost.Assumptions) {
	fmt.Fprintln(w, "Cost model (docs/cost.md), USD per million tokens")
	fmt.Fprintf(w, "  S = %s prefix tokens, D = %s tokens of growth a turn, %s output tokens a turn, caching on\n", thousands(int64(a.Prefix)), thousands(int64(a.Growth)), thousands(int64(a.OutPerTurn)))
	fmt.Fprintln(w, "  writes = S + (N-1)*D ; reads = N*S + D*N*(N-1)/2 - writes")
	fmt.Fprintln(w, "  cost = writes*cache_write + reads*cache_read + N*output_tokens*output_price")
}

// printPrices lists the prices used, once per model.
func printPrices(w io.Writer, ss []cost.Session) {
	seen := map[string]bool{}
	var parts []string
	for _, s := range ss {
		if seen[s.Model] {
			continue
		}
		seen[s.Model] = true
		parts = append(parts, fmt.Sprintf("%s: cache write %g, cache read %g, output %g", s.Model, s.Price.CacheWrite, s.Price.CacheRead, s.Price.Output))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  prices: %s\n", strings.Join(parts, "; "))
	}
}

func printPerTask(w io.Writer, title string, perAttempt, rate float64) {
	fmt.Fprintf(w, "\n%s\n", title)
	var parts []string
	for _, r := range cost.PerTaskRates(perAttempt, rate) {
		parts = append(parts, fmt.Sprintf("at %g%%: %s", r.Rate*100, cost.USD(r.USD)))
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(parts, "   "))
}

func printLoopEstimate(w io.Writer, o *costEstimateOptions, l *spec.Loop, e cost.LoopEstimate, table cost.Table) {
	fmt.Fprintf(w, "Estimate for %s (shape %s)\n\n", l.Path, l.Shape)
	if !e.Priced && len(e.Commands) > 0 {
		fmt.Fprintf(w, "Cannot estimate: %s run by a command agent (agent.backend: command).\n", strings.Join(e.Commands, ", "))
		fmt.Fprintln(w, "looprinter does not know its model or its tokens; it counts the spend the agent reports on")
		fmt.Fprintln(w, "`::looprinter cost_usd=…` lines (docs/agents.md), and nothing when it reports none.")
		if e.Cap > 0 {
			fmt.Fprintf(w, "budget.cost_usd stops the loop once the reported spend reaches $%.2f.\n", e.Cap)
		} else {
			fmt.Fprintln(w, "budget.cost_usd is 0: no cost cap.")
		}
		fmt.Fprintf(w, "Runs the budgets allow: %s.\n", runCounts(e))
		return
	}
	printAssumptions(w, o.a)
	var priced []cost.Session
	for _, r := range e.Runs {
		if r.Known {
			p, _, _ := table.Lookup(r.PriceKey)
			priced = append(priced, cost.Session{Model: r.PriceKey, Price: p})
		}
	}
	printPrices(w, priced)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  run\tbackend\tmodel\tturns\tper run\truns\tsubtotal")
	for _, r := range e.Runs {
		model := r.Model
		if model == "" {
			model = "-"
		}
		per, sub := "unknown", "unknown"
		if r.Command {
			per, sub = "cannot estimate (command agent)", "-"
		}
		if r.Known {
			per, sub = cost.USD(r.PerRun), cost.USD(r.Subtotal)
			if r.Capped {
				per += " (max_budget_usd)"
			}
			if r.PriceKey != strings.ToLower(r.Model) {
				model += " (" + r.PriceKey + " prices)"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%d\t%s\n", r.Phase, r.Backend, model, r.Turns, per, r.Count, sub)
	}
	tw.Flush()
	for _, r := range e.Runs {
		if r.Assumed != "" {
			fmt.Fprintf(w, "  note: %s: %s\n", r.Phase, r.Assumed)
		}
	}
	if len(e.Unknown) > 0 {
		fmt.Fprintf(w, "  note: no price for %s: those runs are left out of the totals; add them under prices: in the loop file or with --price NAME=CACHE_WRITE,CACHE_READ,OUTPUT\n", strings.Join(e.Unknown, ", "))
	}
	fmt.Fprintf(w, "\nTypical (%s): %s\n", e.TypicalOf, cost.USD(e.Typical))
	fmt.Fprintf(w, "Worst case, every budgeted run at max_turns: %s\n", cost.USD(e.WorstCase))
	if e.Cap > 0 {
		fmt.Fprintf(w, "budget.cost_usd stops the loop at $%.2f, so it spends at most %s\n", e.Cap, cost.USD(e.Bound))
	}
	if len(e.Commands) > 0 {
		fmt.Fprintf(w, "  note: %s run by a command agent: not in the totals (its spend is what it reports)\n", strings.Join(e.Commands, ", "))
	}
	title := "Cost per task = cost per attempt ÷ success rate"
	if l.Shape == spec.ShapeCycle {
		title = "Cost per task = cost per build run ÷ success rate"
	}
	printPerTask(w, title, e.PerAttempt, o.successRate)
	fmt.Fprintln(w, "  These are estimates from max_turns; `looprinter cost` shows what a loop has spent.")
}

// runCounts says how many runs of each kind the budgets allow.
func runCounts(e cost.LoopEstimate) string {
	var parts []string
	for _, r := range e.Runs {
		parts = append(parts, fmt.Sprintf("%s %d", r.Phase, r.Count))
	}
	return strings.Join(parts, ", ")
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
