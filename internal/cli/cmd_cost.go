package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/spend"
)

func init() { register(newCostCmd) }

type costOptions struct {
	file string
	dir  string
	json bool
}

// newCostCmd is `looprinter cost`: spend so far from the records; its
// subcommand `estimate` prices a loop before it runs.
func newCostCmd(stdio *IO) *cobra.Command {
	o := &costOptions{}
	cmd := &cobra.Command{
		Use:   "cost [NAME] [-f loop.yaml | --dir DIR]",
		Short: "What a loop has spent so far, from its records; `cost estimate` before a run",
		Long: `Add up what a loop has spent so far from its records (working-records/*.jsonl),
across every run of it: by phase, task, backend and model, with tokens.
NAME is a loop as ` + "`looprinter list`" + ` shows it (or its directory or loop
file); without NAME, ./loop.yaml, else the only loop started so far.

It also gives the cost per passed task (docs/cost.md):

  cost per passed task = cost per attempt ÷ success rate

where an attempt is a build run (ralph: an attempt) and a success is a task
that passed (ralph: an attempt whose verify checks passed). The "all in"
figure charges every run (plan, re-plan, post phases) to the passed tasks.

Costs are what the agent CLIs reported; where a CLI reports only tokens the
engine estimates the cost from list prices, and the line is marked "~".`,
		Example: `  looprinter cost
  looprinter cost fix-tests
  looprinter cost -f loops/fix-tests.yaml --json
  looprinter cost estimate`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCost(stdio, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "the loop file; its directory holds the records (default ./loop.yaml)")
	f.StringVar(&o.dir, "dir", "", "the loop's directory (instead of -f)")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	cmd.AddCommand(newCostEstimateCmd(stdio))
	return cmd
}

// costDir finds the directory whose records `cost` adds up: --dir, NAME,
// -f or ./loop.yaml (in the registry when it has run, else its folder), or
// the only loop known.
func costDir(o *costOptions, args []string) (string, error) {
	switch {
	case o.dir != "":
		abs, err := filepath.Abs(o.dir)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(loopdir.Dir(abs).Records()); err != nil {
			if _, err := os.Stat(filepath.Join(abs, "loop.yaml")); err != nil {
				return "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("no loop in %s: it has no loop.yaml and no %s", abs, loopdir.RecordsDir)}
			}
		}
		return abs, nil
	case len(args) > 0:
		e, err := resolveLoop(args, "")
		return runDir(e), err
	}
	file := o.file
	if file == "" {
		if _, err := os.Stat("loop.yaml"); err == nil {
			file = "loop.yaml"
		}
	}
	if file == "" {
		e, err := resolveLoop(nil, "")
		return runDir(e), err
	}
	abs, err := filepath.Abs(spec.ExpandHome(file))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("no loop file at %s", abs)}
	}
	if e, err := ops.Find(abs); err == nil {
		return runDir(e), nil
	}
	return filepath.Dir(abs), nil
}

func runCost(stdio *IO, o *costOptions, args []string) error {
	abs, err := costDir(o, args)
	if err != nil {
		if len(args) > 0 && o.dir == "" && o.file == "" {
			return remoteCost(stdio, o, args, err)
		}
		return err
	}
	records := loopdir.Dir(abs).Records()
	if files, _ := filepathGlob(records); len(files) == 0 {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("no records in %s: the loop has not run yet (`looprinter cost estimate` prices it before it runs)", records)}
	}
	// The running tally in the engine's private folder: only the records
	// written since the last `cost` are read.
	var r *spend.Report
	if dirExists(string(loopdir.PrivateOf(abs))) {
		r, err = loopdir.Dir(abs).Spend()
	} else {
		r, err = loopdir.Dir(abs).SpendUncached()
	}
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Dir string `json:"dir"`
			*spend.Report
		}{abs, r})
	}
	printSpend(stdio, abs, r)
	return nil
}

func filepathGlob(dir string) ([]string, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return filepath.Glob(filepath.Join(dir, "*.jsonl"))
}

func usd(v float64, estimated bool) string {
	if estimated {
		return fmt.Sprintf("~$%.4f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func printSpend(stdio *IO, dir string, r *spend.Report) {
	w := stdio.Out
	t := r.Total
	fmt.Fprintf(w, "spend so far in %s (%d run invocations)\n", dir, r.Invocations)
	fmt.Fprintf(w, "total:     %s over %d agent runs", usd(t.CostUSD, t.Estimated), t.Runs)
	if t.Retries > 0 {
		fmt.Fprintf(w, " and %d retried tries", t.Retries)
	}
	fmt.Fprintf(w, "; tokens: %d in, %d out, %d cached; %d turns\n", t.InputTokens, t.OutputTokens, t.CachedTokens, t.Turns)
	if r.Unfinished > 0 {
		fmt.Fprintf(w, "note:      %d agent runs started but have no end record (a crash?): their spend is not counted\n", r.Unfinished)
	}
	for _, g := range []struct {
		title string
		lines []spend.Line
	}{{"phase", r.ByPhase}, {"task", r.ByTask}, {"backend", r.ByBackend}, {"model", r.ByModel}} {
		fmt.Fprintf(w, "\nby %s:\n", g.title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  %s\truns\tretries\tcost\tin\tout\tcached\tturns\t\n", g.title)
		for _, l := range g.lines {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t\n", l.Key, l.Runs, l.Retries, usd(l.CostUSD, l.Estimated), l.InputTokens, l.OutputTokens, l.CachedTokens, l.Turns)
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "\ncost per passed task = cost per attempt ÷ success rate (docs/cost.md)")
	if r.CostPerAttempt == nil {
		fmt.Fprintln(w, "  no attempts yet (an attempt is a build run; ralph: an attempt)")
		return
	}
	fmt.Fprintf(w, "  attempts:             %s (ralph: attempts), $%.4f\n", count(r.Attempts, "build run"), r.AttemptCostUSD)
	fmt.Fprintf(w, "  cost per attempt:     $%.4f\n", *r.CostPerAttempt)
	fmt.Fprintf(w, "  success rate:         %d passed of %d attempts = %.0f%%\n", r.Passed, r.Attempts, *r.SuccessRate*100)
	if r.CostPerPassedTask == nil {
		fmt.Fprintln(w, "  cost per passed task: unknown: no task has passed yet")
		return
	}
	fmt.Fprintf(w, "  cost per passed task: $%.4f ÷ %.0f%% = $%.4f\n", *r.CostPerAttempt, *r.SuccessRate*100, *r.CostPerPassedTask)
	fmt.Fprintf(w, "  all in per passed task (every run ÷ tasks passed): $%.4f\n", *r.AllInPerPassedTask)
}
