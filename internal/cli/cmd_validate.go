package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/internal/doctor"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/netpolicy"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

func init() { register(newValidateCmd) }

func newValidateCmd(io *IO) *cobra.Command {
	var file string
	var all bool
	cmd := &cobra.Command{
		Use:   "validate [-f loop.yaml]",
		Short: "Check the loop file and print what the loop would do",
		Long: `Check the loop file: every problem is printed with its line and column
(exit 78). A valid file is printed as the effective loop: shape, agents,
budgets, gates, and the first line of each prompt, with the defaults filled in,
and the protected files with the rule that protects each: the first 20 and a
count per rule, or every one with --all.`,
		Example: `  looprinter validate
  looprinter validate -f examples/go-tests/loop.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := loadLoop(file)
			if err != nil {
				return err
			}
			if err := loopdir.StateInside(l.Dir); err != nil {
				return &ExitError{Code: ExitBlocked, Err: err}
			}
			max := 20
			if all {
				max = -1
			}
			printActFirst(io.Out, func(w *IO) { printEffective(w, l, max) })
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "loop.yaml", "the loop file")
	cmd.Flags().BoolVar(&all, "all", false, "list every protected file, not the first 20")
	return cmd
}

// printEffective prints the effective loop; maxProtected caps the protected
// files listed (less than 0: every one).
func printEffective(io *IO, l *spec.Loop, maxProtected int) {
	w := io.Out
	fmt.Fprintf(w, "%s is valid.\n\n", relTo(".", l.Path))
	fmt.Fprintf(w, "loop:       %s\n", l.Name)
	fmt.Fprintf(w, "shape:      %s\n", l.Shape)
	if o := strings.TrimSpace(l.Objective); o != "" {
		fmt.Fprintf(w, "objective:  %s\n", o)
	} else {
		fmt.Fprintln(w, "objective:  (none)")
	}
	fmt.Fprintf(w, "agent:      %s\n", agentLine(l.Agent))
	for _, phase := range []string{"plan", "replan", "build", "ralph", "post", "writer", "reviewer", "fixer", "supervisor"} {
		if _, ok := l.Agents[phase]; ok {
			fmt.Fprintf(w, "  %-9s %s\n", phase+":", agentLine(l.AgentFor(phase, phase == "post")))
		}
	}
	b := l.Budget
	fmt.Fprintf(w, "budget:     %d iterations, %d cycles, $%.2f, %s wall; stop after the same failure %d times, objective gap unchanged %d cycles\n",
		b.Iterations, b.Cycles, b.CostUSD, b.Wall, b.SameFailure, b.GapStall)
	list := func(label string, items []string, none string) {
		if len(items) == 0 {
			fmt.Fprintf(w, "%-11s %s\n", label, none)
			return
		}
		fmt.Fprintf(w, "%-11s\n", label)
		for _, c := range items {
			fmt.Fprintf(w, "  - %s\n", c)
		}
	}
	list("setup:", l.Setup, "(none)")
	switch l.Shape {
	case spec.ShapeCycle:
		list("cycle gate:", append([]string{"every task of the plan (output/plan.json) marked done, none targeting a protected file", "output/progress.txt non-empty"}, l.Verify...), "")
		list("objective:", l.ObjectiveVerify, "(none: the objective gate passes through; reported NOT VERIFIED)")
	default:
		list("verify:", l.Verify, "(none)")
	}
	fmt.Fprintf(w, "baseline:   %s\n", map[string]string{"all": "every failure blocks", "new-only": "only failures that were not there before the loop block"}[l.VerifyBaseline])
	printProtected(w, l, maxProtected)
	printRedaction(w, l)
	printForge(w, l)
	printNetwork(w, l)
	printView(w, l)
	fmt.Fprintln(w, "prompts:")
	phases := []string{"plan", "build", "replan"}
	user := map[string]string{"plan": l.Prompts.Plan, "build": l.Prompts.Build, "replan": l.Prompts.Replan, "ralph": l.Prompts.Ralph}
	if l.Shape == spec.ShapeRalph {
		phases = []string{"ralph"}
		if user["ralph"] == "" {
			user["ralph"] = l.Prompts.Build
		}
	}
	for _, p := range phases {
		src, origin := user[p], "yours"
		if src == "" {
			src, origin = loop.Builtin(p), "built-in"
		}
		fmt.Fprintf(w, "  %-7s (%s) %s\n", p+":", origin, firstContentLine(src))
	}
	for _, p := range l.PostPhases {
		fmt.Fprintf(w, "post phase: %s until <promise>%s</promise>, at most %d steps: %s\n", p.Name, p.Done, p.MaxSteps, firstContentLine(p.Prompt))
	}
	for _, warn := range l.Warnings() {
		fmt.Fprintf(w, "warning:    %s\n", warn)
	}
}

// printProtected lists the protected files, each with the rule that
// protects it, at most 20.
func printProtected(w io.Writer, l *spec.Loop, maxProtected int) {
	defaults := l.ProtectDefaults == nil || *l.ProtectDefaults
	switch {
	case len(l.Protect) > 0:
		fmt.Fprintf(w, "protect:    %s (new files that match too)\n", strings.Join(l.Protect, ", "))
	case !defaults:
		fmt.Fprintf(w, "protect:    only the loop file (protect_defaults: false)\n")
	}
	if len(l.ProtectExcept) > 0 {
		fmt.Fprintf(w, "except:     %s (freed from the default rules)\n", strings.Join(l.ProtectExcept, ", "))
	}
	ps, err := guard.ResolveProtected(l.Dir, l)
	if err != nil {
		fmt.Fprintf(w, "protected:  cannot be listed, so the loop will not start: %v\n", err)
		return
	}
	fmt.Fprintf(w, "protected:  %s the agent may not change\n", count(len(ps), "file"))
	for _, line := range doctor.ProtectedLines(ps, maxProtected) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	for _, why := range doctor.RuleReasons(ps) {
		fmt.Fprintf(w, "  why: %s\n", why)
	}
	warns := doctor.NamedProtected(ps, "the objective", l.Objective)
	if st, err := loop.LoadState(l.Dir); err == nil && st.BaselineSignal != "" {
		// The loop ran: the checks that failed at its baseline name the
		// failing tests, and the files their failure points at.
		warns = append(warns, doctor.NamedProtected(ps, "the baseline's failing checks' output", st.BaselineSignal)...)
	}
	for _, warn := range warns {
		fmt.Fprintf(w, "warning:    %s\n", warn)
	}
	printInlineTests(w, l, "", maxProtected)
}

func agentLine(a spec.Agent) string {
	s := a.Backend
	if a.Model != "" {
		s += " / " + a.Model
	}
	if a.Command != "" {
		s += fmt.Sprintf(" (command: %s)", a.Command)
	}
	s += fmt.Sprintf(", timeout %s, idle %s", a.Timeout, a.IdleTimeout)
	if a.Backend != "command" { // a command agent has no turns to cap
		s += fmt.Sprintf(", max %d turns", a.MaxTurns)
	}
	if a.MaxBudgetUSD > 0 {
		s += fmt.Sprintf(", $%.2f per run", a.MaxBudgetUSD)
	}
	if len(a.Permissions) > 0 {
		s += ", permissions " + strings.Join(a.Permissions, ",")
	}
	return s
}

// headerLines are the lines every built-in prompt starts with.
var headerLines = map[string]bool{"# Key objective": true, "# Each cycle must deliver": true, "# Rules you must keep": true}

// checksHeader starts the section that names the checks, which every
// built-in prompt carries: not what tells one prompt from another.
const checksHeader = "# The checks that judge the work"

func firstContentLine(s string) string {
	inChecks := false
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "# ") {
			inChecks = l == checksHeader
		}
		if l != "" && !inChecks && !strings.HasPrefix(l, "{{") && !headerLines[l] {
			if len(l) > 100 {
				l = l[:100] + "…"
			}
			return l
		}
	}
	return ""
}

// printNetwork says what agents may reach and what is masked from them
// under the sandbox in force here.
func printNetwork(w io.Writer, l *spec.Loop) {
	kind, err := sandbox.Resolve(l.Sandbox)
	if err != nil {
		kind = sandbox.Off
	}
	home, _ := os.UserHomeDir()
	lines, warns := netpolicy.Describe(l, kind, home)
	for _, line := range lines {
		fmt.Fprintf(w, "%-11s %s\n", line.Label+":", line.Text)
	}
	for _, warn := range warns {
		fmt.Fprintf(w, "warning:    %s\n", warn)
	}
	layered := kind == sandbox.Bwrap && sandbox.LayerProbe() == nil
	for _, warn := range []string{l.ParallelWarning(kind, layered), l.BestOfWarning(kind, layered)} {
		if warn != "" {
			fmt.Fprintf(w, "warning:    %s\n", warn)
		}
	}
}

// printRedaction says what is redacted and where notifications go (masked).
func printRedaction(w io.Writer, l *spec.Loop) {
	if l.Redact.Off {
		fmt.Fprintln(w, "redact:     OFF: secrets are written and sent as printed (reported NOT VERIFIED)")
	} else {
		line := fmt.Sprintf("secret-named variables (%d set here), known credential shapes", len(loop.Redactor(l).Names()))
		if n := len(l.Redact.Names); n > 0 {
			line += ", " + strings.Join(l.Redact.Names, ", ")
		}
		if n := len(l.Redact.Patterns); n > 0 {
			line += fmt.Sprintf(", %d pattern(s)", n)
		}
		fmt.Fprintf(w, "redact:     %s\n", line)
	}
	if l.Notify.Webhook != "" {
		fmt.Fprintf(w, "notify:     webhook %s\n", redact.URL(l.Notify.Webhook))
	}
	if l.Notify.Command != "" {
		fmt.Fprintf(w, "notify:     command %s\n", redact.Command(l.Notify.Command))
	}
}

// printActFirst prints what print writes with its warnings first: after
// the opening line, what the user must act on, then the details.
func printActFirst(out io.Writer, print func(*IO)) {
	var buf strings.Builder
	print(&IO{Out: &buf})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	var warns, rest []string
	for _, l := range lines {
		if strings.HasPrefix(l, "warning:") {
			warns = append(warns, l)
		} else {
			rest = append(rest, l)
		}
	}
	if len(rest) > 0 {
		fmt.Fprintln(out, rest[0])
		rest = rest[1:]
	}
	if len(warns) > 0 {
		fmt.Fprintf(out, "\nTo act on (%d):\n", len(warns))
		for _, w := range warns {
			fmt.Fprintln(out, w)
		}
		fmt.Fprint(out, "\nThe loop:\n")
		for len(rest) > 0 && rest[0] == "" {
			rest = rest[1:]
		}
	}
	for _, l := range rest {
		fmt.Fprintln(out, l)
	}
}

// printView says what an agent run (and, with the tree for the loop
// folder, a check) sees of the machine: the manifest its view is built
// from, and a warning for each host socket let in.
func printView(w io.Writer, l *spec.Loop) {
	kind, err := sandbox.Resolve(l.Sandbox)
	if err != nil || kind == sandbox.Off {
		fmt.Fprintf(w, "%-11s %s\n", "view:", "the whole machine (no sandbox in force)")
		return
	}
	fmt.Fprintf(w, "%-11s %s\n", "view:", "built from this manifest, with the loop folder and HOME's layer (bwrap) or a private HOME (landlock); nothing else of the machine is visible (bwrap) or readable (landlock); add a path with sandbox.allow_read")
	for _, line := range confine.ViewOf(l).Lines() {
		fmt.Fprintf(w, "%-11s %s\n", "", termtext.Clean(line))
	}
	for _, warn := range l.SocketWarnings() {
		fmt.Fprintf(w, "warning:    %s\n", warn)
	}
	if gap := sandbox.SocketGap(kind, l.SandboxOpts.AllowSockets); gap != "" {
		fmt.Fprintf(w, "warning:    %s\n", gap)
	}
}
