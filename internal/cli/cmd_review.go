package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/spec"
)

func init() { register(newReviewCmd) }

type reviewOptions struct {
	file         string
	base         string
	objective    string
	checks       []string
	bar          string
	maxRounds    int
	requirements []string
	architecture []string
	rules        string
	writer       string
	roles        map[string]*roleFlags // "", writer, reviewer, fixer
	maxCost      float64
	wall         string
	timeout      string
	fresh        bool
	json         bool
	quiet        bool
	builtin      bool // no loop file: the loop was built from the flags
}

type roleFlags struct{ backend, model, command string }

func newReviewCmd(io *IO) *cobra.Command {
	o := &reviewOptions{roles: map[string]*roleFlags{"": {}, "writer": {}, "reviewer": {}, "fixer": {}}}
	cmd := &cobra.Command{
		Use:   "review [--base REF] [-f loop.yaml] [flags]",
		Short: "Review the current change: a fresh reviewer, a fixer, in rounds",
		Long: `Review the current change with the review shape: an adversarial reviewer on
another model reads the diff in a fresh context (the requirements, the
architecture notes, the diff, the evidence of the checks and the review
rules; never a transcript) and grades each finding critical, major or minor;
a fixer fixes the findings at or above the bar; the checks run after each
fix; then the next round. After the last round a fix-verification pass
re-reads only what was fixed, then the final checks run.

With -f (or a loop.yaml of shape review in this directory) the loop file
says everything; flags override it. Without one, the review is built from
the flags: objective "the change is correct", the checks from --check.

The change is git diff BASE against the working tree (committed, staged,
unstaged and untracked files; working-records/ is never part of it). With no
--base: HEAD when the working tree has changes, else HEAD~1 (the last commit).

The report goes to working-records/review-report.md and the terminal.

Exit codes: 0 no finding at or above the bar is open and the checks pass,
1 the rounds ran out with findings open, 2 the same set of findings came
back twice, 3 time or cost budget, 4 blocked, 130 interrupted.`,
		Example: `  looprinter review --check 'go build ./...' --check 'go test ./...'
  looprinter review --base main --reviewer-backend codex --fixer-backend claude
  looprinter review -f review.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReview(cmd, io, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "a loop file of shape review (default: ./loop.yaml when its shape is review)")
	f.StringVar(&o.base, "base", "", "the commit the change starts from (review.base)")
	f.StringVar(&o.objective, "objective", "", "the key objective, in every prompt (default: the change is correct)")
	f.StringArrayVar(&o.checks, "check", nil, "a check command, repeatable (verify)")
	f.StringVar(&o.bar, "bar", "", "the lowest severity the fixer must fix: critical, major, minor (review.bar, default major)")
	f.IntVar(&o.maxRounds, "max-rounds", 0, "review rounds before the fix check (review.max_rounds, default 3)")
	f.StringArrayVar(&o.requirements, "requirements", nil, "a requirements file the reviewer reads, repeatable")
	f.StringArrayVar(&o.architecture, "architecture", nil, "an architecture notes file the reviewer reads, repeatable")
	f.StringVar(&o.rules, "rules", "", "the review rules (review.rules)")
	f.StringVar(&o.writer, "writer", "", "a draft step first: the writer's prompt (review.writer)")
	for _, role := range []string{"", "writer", "reviewer", "fixer"} {
		r, pre, who := o.roles[role], "", "every role"
		if role != "" {
			pre, who = role+"-", "the "+role
		}
		f.StringVar(&r.backend, pre+"backend", "", "backend of "+who+" (claude, codex, gemini, command)")
		f.StringVar(&r.model, pre+"model", "", "model of "+who)
		f.StringVar(&r.command, pre+"command", "", "command of "+who+" (the command backend's program, or the CLI's path)")
	}
	f.Float64Var(&o.maxCost, "max-cost", 0, "budget.cost_usd")
	f.StringVar(&o.wall, "wall", "", "budget.wall (e.g. 1h)")
	f.StringVar(&o.timeout, "timeout", "", "agent.timeout per run (e.g. 10m)")
	f.BoolVar(&o.fresh, "fresh", false, "start a new review even if one was interrupted (the old state is kept beside)")
	f.BoolVar(&o.json, "json", false, "print the outcome as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only the final report")
	return cmd
}

// reviewLoop loads the loop file, or builds one from the flags.
func (o *reviewOptions) reviewLoop() (*spec.Loop, error) {
	file := o.file
	if file == "" {
		if l, err := spec.Load("loop.yaml"); err == nil && l.Shape == spec.ShapeReview {
			file = "loop.yaml"
		}
	}
	var l *spec.Loop
	var err error
	if file != "" {
		if l, err = loadLoop(file); err != nil {
			return nil, err
		}
		if l.Shape != spec.ShapeReview {
			return nil, &ExitError{Code: ExitBadLoopFile, Err: fmt.Errorf("%s is a %s loop; `looprinter review` needs shape: review (or run it without -f)", file, l.Shape)}
		}
	} else {
		if l, err = o.builtinLoop(); err != nil {
			return nil, err
		}
		o.builtin = true
	}
	return l, o.apply(l)
}

// builtinLoop is the loop of a review run without a loop file.
func (o *reviewOptions) builtinLoop() (*spec.Loop, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	r := o.roles[""]
	ag := map[string]any{"backend": "claude"}
	if r.backend != "" {
		ag["backend"] = r.backend
	}
	if r.model != "" {
		ag["model"] = r.model
	}
	if r.command != "" {
		ag["command"] = r.command
	}
	if ag["backend"] == "command" && r.command == "" {
		// Every role that runs has its own program: the fixer's stands in
		// for the default agent's (which then runs nothing of its own).
		if rc, fc := o.roles["reviewer"].command, o.roles["fixer"].command; rc != "" && fc != "" {
			ag["command"] = fc
		} else {
			return nil, &ExitError{Code: ExitUsage, Err: errors.New("--backend command needs --command (the program to run), or both --reviewer-command and --fixer-command")}
		}
	}
	doc := map[string]any{
		"version":   1,
		"shape":     spec.ShapeReview,
		"objective": review.DefaultObjective,
		"agent":     ag,
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return spec.Parse(data, filepath.Join(dir, "(looprinter review)"))
}

func (o *reviewOptions) apply(l *spec.Loop) error {
	if o.objective != "" {
		l.Objective = o.objective
	}
	if len(o.checks) > 0 {
		l.Verify = o.checks
	}
	if o.base != "" {
		l.Review.Base = o.base
	}
	if o.bar != "" {
		switch o.bar {
		case "critical", "major", "minor":
			l.Review.Bar = o.bar
		default:
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--bar %q: want critical, major or minor", o.bar)}
		}
	}
	if o.maxRounds > 0 {
		l.Review.MaxRounds = o.maxRounds
	}
	if len(o.requirements) > 0 {
		l.Review.Requirements = o.requirements
	}
	if len(o.architecture) > 0 {
		l.Review.Architecture = o.architecture
	}
	if o.rules != "" {
		l.Review.Rules = o.rules
	}
	if o.writer != "" {
		l.Review.Writer = o.writer
	}
	if r := o.roles[""]; r.backend != "" || r.model != "" || r.command != "" {
		if r.backend != "" && r.backend != l.Agent.Backend {
			l.Agent.Backend, l.Agent.Model, l.Agent.Command = r.backend, "", ""
		}
		if r.model != "" {
			l.Agent.Model = r.model
		}
		if r.command != "" {
			l.Agent.Command = r.command
		}
	}
	for _, role := range []string{"writer", "reviewer", "fixer"} {
		r := o.roles[role]
		if r.backend == "" && r.model == "" && r.command == "" {
			continue
		}
		agents := map[string]spec.Agent{}
		for k, v := range l.Agents {
			agents[k] = v
		}
		a := agents[role]
		if r.backend != "" {
			a.Backend = r.backend
		} else if r.command != "" && a.Backend == "" && o.roles[""].backend == "" && o.builtin {
			// --reviewer-command alone, without a loop file: a program for
			// that role, i.e. the command backend.
			a.Backend = "command"
		}
		if r.model != "" {
			a.Model = r.model
		}
		if r.command != "" {
			a.Command = r.command
		}
		agents[role] = a
		l.Agents = agents
	}
	o.unusedDefaultAgent(l)
	if o.maxCost != 0 && !spec.ValidMoney(o.maxCost) || o.maxCost < 0 {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--max-cost: want an amount in USD from 0 to %g", spec.MaxMoneyUSD)}
	}
	if o.maxCost > 0 {
		l.Budget.CostUSD = o.maxCost
	}
	if err := applyDurationFlags(l, o.wall, o.timeout); err != nil {
		return err
	}
	for _, role := range []string{"writer", "reviewer", "fixer"} {
		if role == "writer" && l.Review.Writer == "" {
			continue
		}
		a := l.AgentFor(role, false)
		if !contains(spec.Backends, a.Backend) {
			return &ExitError{Code: ExitBadLoopFile, Err: fmt.Errorf("the %s's backend %q is not a backend (%s)", role, a.Backend, strings.Join(spec.Backends, ", "))}
		}
		if a.Backend == "command" && a.Command == "" {
			return &ExitError{Code: ExitBadLoopFile, Err: fmt.Errorf("the %s uses the command backend but has no command (--%scommand)", role, map[bool]string{true: "", false: role + "-"}[o.roles[role].backend == ""])}
		}
	}
	return nil
}

// unusedDefaultAgent: when every role that runs has an agent of its own, the
// loop's default agent never runs; it becomes the reviewer's, so that the
// review's records are named after an agent that runs (…-loop-command.jsonl,
// not …-loop-claude.jsonl) and nothing checks an agent that never runs.
func (o *reviewOptions) unusedDefaultAgent(l *spec.Loop) {
	for _, role := range []string{"writer", "reviewer", "fixer"} {
		if role == "writer" && l.Review.Writer == "" {
			continue
		}
		if a, ok := l.Agents[role]; !ok || a.Backend == "" {
			return
		}
	}
	l.Agent = l.AgentFor("reviewer", false)
}

func runReview(cmd *cobra.Command, io *IO, o *reviewOptions) error {
	l, err := o.reviewLoop()
	if err != nil {
		return err
	}
	// A review that reached a verdict is not resumed: running again reviews
	// the change as it is now. An interrupted or blocked one resumes.
	fresh := o.fresh
	if st, err := loop.LoadState(l.Dir); err == nil && st.Shape != "" {
		switch {
		case st.Shape != spec.ShapeReview && !fresh:
			return &ExitError{Code: ExitBlocked, Err: fmt.Errorf("%s holds the state of a %s loop; run the review from another directory, or pass --fresh (the old state is kept beside it)",
				loopdir.Dir(l.Dir).Records(), st.Shape)}
		case st.Outcome == loop.ReasonDone || st.Outcome == loop.ReasonBudget || st.Outcome == loop.ReasonNoProgress:
			fresh = true
		}
	}
	opts := loop.Options{Fresh: fresh}
	if !o.quiet && !o.json {
		opts.Subscribers = append(opts.Subscribers, consolePrinter(io))
	}
	engineGC()
	out, err := loop.Run(cmd.Context(), l, opts)
	return reportOutcome(io, l, out, err, o.json, printReviewReport)
}

// printReviewReport prints the outcome and the table of rounds.
func printReviewReport(io *IO, l *spec.Loop, o *loop.Outcome) {
	// Findings are the reviewer agent's text: the whole report goes
	// through termtext.Clean.
	w := &strings.Builder{}
	defer func() { fmt.Fprint(io.Out, termtext.Clean(w.String())) }()
	st := o.State
	fmt.Fprintf(w, "\n== looprinter review: %s (exit %d) ==\n", loop.Title(o.Reason), o.ExitCode)
	fmt.Fprintf(w, "why:       %s\n", o.Summary)
	rs := st.Review
	if rs != nil {
		fmt.Fprintf(w, "change:    git diff %s in %s\n", rs.Base, l.Dir)
		fmt.Fprintf(w, "roles:     reviewer %s, fixer %s", rs.Reviewer, rs.Fixer)
		if rs.Writer != "" {
			fmt.Fprintf(w, ", writer %s", rs.Writer)
		}
		fmt.Fprintln(w)
	}
	wall := time.Duration(st.WallMS) * time.Millisecond
	rounds := 0
	if rs != nil {
		rounds = len(rs.Rounds)
	}
	fmt.Fprintf(w, "spent:     %d round(s) of %d, bar %s, %s, $%.2f of $%.2f, %s of %s\n",
		rounds, l.Review.MaxRounds, l.Review.Bar, count(st.AgentRuns, "agent run"), st.CostUSD, l.Budget.CostUSD, wall.Round(time.Millisecond), l.Budget.Wall)
	if rs != nil && len(rs.Rounds) > 0 {
		fmt.Fprintln(w)
		for _, line := range strings.Split(strings.TrimRight(review.Table(rs, l.Review.Bar), "\n"), "\n") {
			fmt.Fprintln(w, "  "+line)
		}
		fmt.Fprintln(w)
		if len(rs.Open) > 0 {
			fmt.Fprintln(w, "still open:")
			for _, f := range rs.Open {
				fmt.Fprintf(w, "  - %s %s %s: %s\n", f.ID, f.Severity, f.File, f.Title)
			}
		}
	}
	printList(w, "NOT VERIFIED:", o.NotVerified)
	if o.Reason != loop.ReasonBudget && o.Reason != loop.ReasonNoProgress {
		printList(w, "next:", o.Next)
	}
	fmt.Fprintf(w, "report:    %s\n", filepath.Join(loopdir.RecordsDir, loopdir.ReviewReportFile))
	fmt.Fprintf(w, "records:   %s\n", relTo(l.Dir, o.Records))
}
