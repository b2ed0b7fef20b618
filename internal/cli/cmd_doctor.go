package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/doctor"
)

func init() { register(newDoctorCmd) }

func newDoctorCmd(stdio *IO) *cobra.Command {
	var file string
	var all bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the agent CLIs, their login, git, the sandbox, the loop file, its checks and protected files",
		Long: `Check what a loop needs before it runs:

  - the agent CLIs the loop uses (all of claude, codex, gemini when there is
    no loop file): on PATH, their version, and whether they are logged in
    where that can be told without a paid call (an API key in the
    environment, a credentials file); otherwise it says it could not check
  - git
  - the sandbox that will confine the agent runs (sandbox: in the loop file)
  - the loop file: that it is valid
  - every setup, verify and objective_verify command: that its program exists
    (on PATH, or a file in the loop's directory), that its test runner can
    start (python3 -m pytest: that python3 can import pytest; npm test: that
    package.json has the script and its program is installed), and that a
    gate check can fail at all (not "|| true", "; exit 0", a bare "true")
  - that the objective gate is configured
  - the protected files, each with the rule that protects it (the first 20
    and a count per rule; --all lists every one)

Every problem comes with a fix. doctor exits 4 (BLOCKED) when the loop cannot
run: its agent CLI is missing, the loop file is invalid, a check's program
is missing, no sandbox can run, or the protected files cannot be listed.`,
		Example: `  looprinter doctor
  looprinter doctor -f loops/docs/loop.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := doctor.Options{File: file, FileGiven: cmd.Flags().Changed("file")}
			if all {
				opts.MaxProtected = -1
			}
			r := doctor.Run(cmd.Context(), opts)
			printDoctor(stdio, r)
			if r.Blocked {
				return &ExitError{Code: ExitBlocked}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "loop.yaml", "the loop file")
	cmd.Flags().BoolVar(&all, "all", false, "list every protected file, not the first 20")
	return cmd
}

func printDoctor(stdio *IO, r *doctor.Report) {
	w := stdio.Out
	fmt.Fprintln(w, "looprinter doctor")
	// What the user must act on comes first, then every finding by area.
	fmt.Fprintf(w, "%s\n", r.Summary)
	first := true
	for _, f := range r.Findings {
		if f.Level != doctor.Fail && f.Level != doctor.Warn {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nTo act on:")
			first = false
		}
		fmt.Fprintf(w, "  %-4s  %s: %s\n", f.Level, f.Area, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "        fix: %s\n", f.Fix)
		}
	}
	fmt.Fprint(w, "\nThe details:\n")
	area := ""
	for _, f := range detailsOrder(r.Findings) {
		if f.Area != area {
			area = f.Area
			fmt.Fprintf(w, "\n%s\n", area)
		}
		fmt.Fprintf(w, "  %-4s  %s\n", f.Level, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "        fix: %s\n", f.Fix)
		}
		for _, n := range f.Notes {
			fmt.Fprintf(w, "        %s\n", n)
		}
	}
	fmt.Fprintf(w, "\n%s\n", r.Summary)
}

// detailsOrder is the order doctor's details are printed in: the loop file
// and its protected files first (what the user wrote), then the agent
// CLIs, the tools and the sandbox (the machine, whose view is long); the
// findings of an area keep their order.
func detailsOrder(fs []doctor.Finding) []doctor.Finding {
	rank := map[string]int{doctor.AreaLoop: 0, doctor.AreaProtected: 1, doctor.AreaCLIs: 2, doctor.AreaTools: 3, doctor.AreaSandbox: 4}
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b doctor.Finding) int {
		ra, oka := rank[a.Area]
		rb, okb := rank[b.Area]
		if !oka {
			ra = len(rank)
		}
		if !okb {
			rb = len(rank)
		}
		return ra - rb
	})
	return out
}
