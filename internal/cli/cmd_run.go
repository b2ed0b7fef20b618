package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	_ "github.com/looprinter/looprinter/agent" // the backends register themselves
	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/rollback"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

func init() { register(newRunCmd) }

type runOptions struct {
	file          string
	backend       string
	model         string
	command       string
	maxIterations int
	maxCycles     int
	maxCost       float64
	allowPassing  bool
	wall          string
	timeout       string
	fresh         bool
	json          bool
	quiet         bool
	issue         int
	nextIssue     bool
	objective     string
}

func newRunCmd(io *IO) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run [-f loop.yaml]",
		Short: "Run the loop in the foreground until it stops",
		Long: `Run the loop described by the loop file until it stops: DONE, a budget,
no progress, or blocked. State lives in working-records/, so running again
after a crash, a kill or an interrupt resumes where the loop stopped, with
every counter kept.

Exit codes: 0 DONE, 1 BUDGET SPENT, 2 NO PROGRESS, 3 TIME OR COST BUDGET,
4 BLOCKED, 5 ALREADY PASSING (every check passed before any agent run),
6 NOT VERIFIED (the objective checks never failed), 75 another run holds
the loop, 78 invalid loop file, 130 interrupted.`,
		Example: `  looprinter run
  looprinter run -f loops/fix-tests.yaml --max-iterations 10
  looprinter run --backend codex --model gpt-5.5
  looprinter run --issue 42`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, io, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "loop.yaml", "the loop file")
	f.StringVar(&o.backend, "backend", "", "override agent.backend (claude, codex, gemini, command)")
	f.StringVar(&o.model, "model", "", "override agent.model")
	f.StringVar(&o.command, "command", "", "override agent.command")
	f.IntVar(&o.maxIterations, "max-iterations", 0, "override budget.iterations")
	f.IntVar(&o.maxCycles, "max-cycles", 0, "override budget.cycles")
	f.Float64Var(&o.maxCost, "max-cost", 0, "override budget.cost_usd")
	f.BoolVar(&o.allowPassing, "allow-passing", false, "checks that already pass end the loop DONE at once (keep it green) instead of ALREADY PASSING")
	f.StringVar(&o.wall, "wall", "", "override budget.wall (e.g. 2h)")
	f.StringVar(&o.timeout, "timeout", "", "override agent.timeout (e.g. 10m)")
	f.BoolVar(&o.fresh, "fresh", false, "start the counters again (the old state.json is kept beside it)")
	f.BoolVar(&o.json, "json", false, "print the final report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only the final report")
	f.BoolVar(&o.nextIssue, "next-issue", false, "work on the oldest open issue labelled forge.github.label (default looprinter) that no run took yet; nothing runs when none waits")
	f.StringVar(&o.objective, "objective", "", "this run's objective instead of the loop file's (the HTTP API's start action passes it)")
	f.IntVar(&o.issue, "issue", 0, "work on this issue of the loop file's forge: its title and body join the objective as untrusted text; the branch goes to one pull request (docs/forge.md)")
	return cmd
}

// checkBudgetFlags refuses a budget override below 0 on the command line:
// 0 leaves the loop file's budget as it is, and a negative budget has no
// meaning (before, it was ignored without a word and the loop ran).
func checkBudgetFlags(iterations, cycles int, cost float64) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"--max-iterations", float64(iterations)}, {"--max-cycles", float64(cycles)}, {"--max-cost", cost}} {
		if f.v < 0 {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s %v: a budget cannot be negative (0 keeps the loop file's)", f.name, f.v)}
		}
	}
	return nil
}

func (o *runOptions) apply(l *spec.Loop) error {
	if err := checkBudgetFlags(o.maxIterations, o.maxCycles, o.maxCost); err != nil {
		return err
	}
	if o.backend != "" {
		if o.backend != l.Agent.Backend {
			l.Agent.Model, l.Agent.Command = "", ""
		}
		l.Agent.Backend = o.backend
	}
	if o.model != "" {
		l.Agent.Model = o.model
	}
	if o.command != "" {
		l.Agent.Command = o.command
	}
	if o.maxIterations > 0 {
		l.Budget.Iterations = o.maxIterations
	}
	if o.maxCycles > 0 {
		l.Budget.Cycles = o.maxCycles
	}
	if o.maxCost != 0 && !spec.ValidMoney(o.maxCost) || o.maxCost < 0 {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--max-cost: want an amount in USD from 0 to %g", spec.MaxMoneyUSD)}
	}
	if o.maxCost > 0 {
		l.Budget.CostUSD = o.maxCost
	}
	if o.allowPassing {
		l.AllowPassing = true
	}
	if strings.TrimSpace(o.objective) != "" {
		l.Objective = strings.TrimSpace(o.objective)
	}
	if err := applyDurationFlags(l, o.wall, o.timeout); err != nil {
		return err
	}
	if !contains(spec.Backends, l.Agent.Backend) {
		return &ExitError{Code: ExitBadLoopFile, Err: fmt.Errorf("--backend %q: not a backend (%s)", l.Agent.Backend, strings.Join(spec.Backends, ", "))}
	}
	if l.Agent.Backend == "command" && l.Agent.Command == "" {
		return &ExitError{Code: ExitBadLoopFile, Err: errors.New("the command backend needs agent.command (or --command)")}
	}
	return nil
}

func runRun(cmd *cobra.Command, io *IO, o *runOptions) error {
	l, err := loadLoop(o.file)
	if err != nil {
		return err
	}
	if err := o.apply(l); err != nil {
		return err
	}
	var issue *issueRun
	if l.Forge.On() {
		// The webhook's secret is serve's, never a run's.
		forge.WithholdSecret(l.Forge.GitHub.SecretEnv())
	}
	// A loop file with a source takes the next issue with its label, as
	// --next-issue does, unless --issue names one.
	next := (o.nextIssue || l.Source.On()) && !cmd.Flags().Changed("issue")
	onIssue := cmd.Flags().Changed("issue") || next
	if l.Forge.On() && !onIssue {
		// The forge's token is the engine's even when it is not used.
		forge.Withhold()
	}
	if onIssue {
		// The forge's token is in the engine's memory from here on: no
		// other process of the user reads it from /proc.
		sandbox.Undumpable()
		if issue, err = openIssue(cmd.Context(), l, o.issue, next); err != nil {
			var none errNoIssue
			if errors.As(err, &none) {
				fmt.Fprintln(io.Err, "looprinter: "+none.Error())
				return nil
			}
			return err
		}
	}
	run, after, err := prepareRun(io, l)
	if err != nil {
		return err
	}
	if issue != nil {
		if err := issue.started(cmd.Context(), io, l, run); err != nil {
			return err
		}
	}
	l = run
	opts := loop.Options{Fresh: o.fresh, Hooks: runHooks(l)}
	if !o.quiet && !o.json {
		opts.Subscribers = append(opts.Subscribers, consolePrinter(io))
	}
	engineGC()
	// No other process of the user reads the engine's environment (its API
	// keys) from /proc: not an agent, not another loop's.
	sandbox.Undumpable()
	out, err := loop.Run(cmd.Context(), l, opts)
	if issue != nil && err == nil {
		out, err = issue.deliver(cmd.Context(), io, l, opts, out)
	}
	if after != nil {
		after(out)
	}
	var forgeErr error
	switch {
	case issue != nil && err != nil:
		issue.failed(cmd.Context(), io, l, err)
	case issue != nil:
		forgeErr = issue.finish(cmd.Context(), io, l, out)
	}
	if err := reportOutcome(io, l, out, err, o.json, printReport); err != nil || forgeErr == nil {
		return err
	}
	return forgeErr
}

// reportText is the final report as printReport prints it, redacted: the
// body of a pull request.
func reportText(l *spec.Loop, out *loop.Outcome) string {
	var b strings.Builder
	printReport(&IO{Out: &b, Err: io.Discard}, l, out)
	return loop.Redactor(l).String(b.String())
}

// reportOutcome prints how a run ended (JSON or the report) and turns it
// into the command's exit code.
func reportOutcome(io *IO, l *spec.Loop, out *loop.Outcome, err error, asJSON bool, report func(*IO, *spec.Loop, *loop.Outcome)) error {
	if err != nil {
		var locked *loopdir.ErrLocked
		if errors.As(err, &locked) {
			return &ExitError{Code: ExitLocked, Err: err}
		}
		return &ExitError{Code: ExitBlocked, Err: err}
	}
	if asJSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		report(io, l, out)
	}
	if out.ExitCode != 0 {
		return &ExitError{Code: out.ExitCode}
	}
	return nil
}

// prepareRun readies a loop before it runs (the registry of loops, a git
// branch or worktree, which may move the loop elsewhere) and returns what
// to do once it has stopped (out is nil if it never started); other files
// set it.
var prepareRun = func(io *IO, l *spec.Loop) (*spec.Loop, func(out *loop.Outcome), error) { return l, nil, nil }

// runHooks returns the hooks that act on a loop's records and may fail it
// (git commits, notifications); other files set it.
var runHooks = func(l *spec.Loop) []loop.Hook { return nil }

// consolePrinter prints one readable line per record.
func consolePrinter(io *IO) func(record.Event) {
	return func(e record.Event) {
		switch e.Event {
		case record.LoopStop:
			return // the final report says it
		case record.ToolCall:
			fmt.Fprintf(io.Err, "         → %s\n", termtext.Line(e.Tool+" "+e.Message))
			return
		}
		fmt.Fprintln(io.Err, ops.Summarize(e))
	}
}

// printReport prints the final report: outcome, counters, evidence, what
// was not verified, and where the records are.
func printReport(io *IO, l *spec.Loop, o *loop.Outcome) {
	// The summary, the evidence and what was ruled out quote agents and
	// checks: the whole report goes through termtext.Clean.
	w := &strings.Builder{}
	defer func() { fmt.Fprint(io.Out, termtext.Clean(w.String())) }()
	st := o.State
	fmt.Fprintf(w, "\n== looprinter: %s (exit %d) ==\n", loop.Title(o.Reason), o.ExitCode)
	fmt.Fprintf(w, "loop:      %s (%s shape) in %s\n", l.Name, l.Shape, l.Dir)
	fmt.Fprintf(w, "why:       %s\n", o.Summary)
	wall := time.Duration(st.WallMS) * time.Millisecond
	switch l.Shape {
	case spec.ShapeRalph:
		fmt.Fprintf(w, "spent:     %s of %d, $%.2f of $%.2f, %s of %s\n",
			count(st.Iterations, "attempt"), l.Budget.Iterations, st.CostUSD, l.Budget.CostUSD, wall.Round(time.Millisecond), l.Budget.Wall)
	case spec.ShapeReview:
		fmt.Fprintf(w, "spent:     %s, $%.2f of $%.2f, %s of %s\n",
			count(st.AgentRuns, "agent run"), st.CostUSD, l.Budget.CostUSD, wall.Round(time.Millisecond), l.Budget.Wall)
		if st.Review != nil {
			fmt.Fprintf(w, "rounds (bar: %s; report: %s):\n%s", l.Review.Bar, loopdir.RecordsDir+"/"+loopdir.ReviewReportFile, review.Table(st.Review, l.Review.Bar))
		}
	default:
		fmt.Fprintf(w, "spent:     cycle %d of %d, %s of %d, %s, $%.2f of $%.2f, %s of %s\n",
			st.Cycle, l.Budget.Cycles, count(st.Iterations, "build run"), l.Budget.Iterations, count(st.AgentRuns, "agent run"), st.CostUSD, l.Budget.CostUSD, wall.Round(time.Millisecond), l.Budget.Wall)
		if o.Plan != nil {
			fmt.Fprintf(w, "tasks:     %d of %d in the current plan pass (%d passed over all cycles)\n", o.Plan.Done(), len(o.Plan.Tasks), st.TasksPassed)
		}
		fmt.Fprintf(w, "gates:     cycle gate %s, objective gate %s\n", st.CycleGate, st.ObjectiveGate)
	}
	if p := loop.ParallelSaving(st); p != "" {
		fmt.Fprintf(w, "parallel:  %s\n", p)
	}
	printList(w, "evidence:", o.Evidence)
	printList(w, "NOT VERIFIED:", o.NotVerified)
	var flaky []string
	for _, f := range loop.FlakyLines(st) {
		flaky = append(flaky, termtext.Clean(f))
	}
	printList(w, "flaky checks (a result that changed on the same tree; never trusted):", flaky)
	var strength []string
	for _, l := range loop.StrengthLines(st, 20) {
		strength = append(strength, termtext.Clean(l))
	}
	printList(w, "verifier strength (mutants of the changed lines):", strength)
	var esc []string
	for _, l := range loop.EscalationLines(st) {
		esc = append(esc, termtext.Clean(l))
	}
	printList(w, "escalated (agent.escalate):", esc)
	printList(w, "tried without success (ruled out):", o.RuledOut)
	printList(w, "network refused (add a host to network.allow in the loop file if the agent needs it):", st.NetRefused)
	printList(w, "kept off the branch (git refs):", rollback.KeptLines(o.Kept))
	printList(w, "next:", o.Next)
	fmt.Fprintf(w, "records:   %s\n", relTo(l.Dir, o.Records))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// applyDurationFlags applies --wall and --timeout to a loop.
func applyDurationFlags(l *spec.Loop, wall, timeout string) error {
	for _, d := range []struct {
		s   string
		dst *spec.Duration
		n   string
	}{{wall, &l.Budget.Wall, "--wall"}, {timeout, &l.Agent.Timeout, "--timeout"}} {
		if d.s == "" {
			continue
		}
		v, err := spec.ParseDuration(d.s)
		if err != nil || v == 0 {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s %q: want a duration like 30m", d.n, d.s)}
		}
		*d.dst = v
	}
	return nil
}

// printList prints a titled list of the final report; nothing when empty.
func printList(w io.Writer, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintln(w, title)
	for _, e := range items {
		fmt.Fprintf(w, "  - %s\n", e)
	}
}

// engineGC keeps a waiting engine small: its heap is a few MB and it
// spends its life waiting for an agent, so a tighter GC target costs little
// CPU and takes about 2 MB (30–40%) off each engine's private memory
// (measured: 6.2 MB → 3.7–4.4 MB anonymous). GOGC, when set, wins.
func engineGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
}
