package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/detect"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/internal/doctor"
	"github.com/looprinter/looprinter/internal/initwiz"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/spec"
)

func init() { register(newInitCmd) }

type initOptions struct {
	file       string
	yes        bool
	force      bool
	skipChecks bool
	noCommit   bool
	a          initwiz.Answers
}

func newInitCmd(stdio *IO) *cobra.Command {
	o := &initOptions{a: initwiz.Defaults()}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a loop file by answering a few questions",
		Long: `Interview you in four stages (the objective, the deliverables, the
verification, the constraints), then about the sandbox (default auto) and an
audit before DONE (default off), the agent, the budgets and the stop
conditions; show a summary to confirm; then write a commented loop.yaml and add
output/ and working-records/ to .gitignore, with the build output of the
project's ecosystems (node_modules/ for package.json, __pycache__/ and
.pytest_cache/ for Python, target/ for Cargo.toml): a loop's commits take the
whole folder.

With no --verify and no --objective-verify, init reads the project for its
test command and proposes it (the interview shows it to edit): go.mod: go test;
package.json's test script, with the package manager of the lockfile (npm,
pnpm, yarn, bun); pytest (pytest.ini, conftest.py, pyproject.toml, setup.cfg,
tox.ini) with the interpreter that can import it, or unittest; Cargo.toml:
cargo test; a Makefile test target: make test. The summary says where it came
from. A plain go test is written with -v, and the summary says so: without it
the passing count cannot be read.

Every question has a flag, so init also runs without a terminal (scripts, CI):
with --yes, or when there is no terminal, it takes the flags and the defaults,
and says which flag to pass for an answer that is missing. In a terminal the
flags fill in the interview's answers.

init runs the checks once (a command under both gates once; 3 minutes at most
each), shows each one's exit, time and test counts, and
warns when a runner cannot start (No module named pytest, a missing npm script),
when the test counts cannot be read (and which flags make them readable), when
they already pass (the loop would stop
ALREADY PASSING before any agent run) or cannot run (--skip-checks skips
that). It warns when the verification is weak: no checks at all, only checks that a
file exists, or an objective a machine cannot judge. It never replaces an
existing loop file unless --force is given.

--holdout 20% (or a count, --holdout 2; the interview asks when the project
has tests) sets that share of the project's test files aside as holdout tests:
whole files (Go *_test.go, Python test_*.py and *_test.py), picked evenly from
their sorted list, left where they are, named in holdout: with holdout_verify:
commands that run only them, and added to .git/info/exclude. The agent never
sees them; only the clean room that decides DONE runs them. Files git tracks or
ever tracked are taken too, and init says so: git keeps every version of them,
so while the loop runs the agent sees no repository at all (see
docs/stopping.md, "Holdout checks").`,
		Example: `  # the interview, in a terminal
  looprinter init

  # without a terminal: make a package's failing tests pass
  looprinter init --yes \
      --objective "go test ./calc/... passes without changing the tests" \
      --deliverable "calc/calc.go fixed" \
      --verify "go build ./..." --verify "go test ./..." \
      --objective-verify ./scripts/objective.sh \
      --protect "**/*_test.go" --backend claude --model sonnet \
      --iterations 20 --cost 10 --wall 2h

  # set 20% of the project's test files aside as holdout tests
  looprinter init --yes --objective "go test ./... passes" \
      --objective-verify "go test ./..." --holdout 20%

  # a ralph loop with your own agent program
  looprinter init --yes --shape ralph --objective "make lint passes" \
      --verify "make lint" --backend command --command ./my-agent.sh`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(stdio, o, cmd)
		},
	}
	f := cmd.Flags()
	a := &o.a
	f.StringVarP(&o.file, "file", "f", "loop.yaml", "loop file to write")
	f.BoolVarP(&o.yes, "yes", "y", false, "no interview and no confirmation: take the flags and the defaults")
	f.BoolVar(&o.force, "force", false, "replace an existing loop file")
	f.BoolVar(&o.noCommit, "no-commit", false, "do not commit the loop file and .gitignore (init commits them, and nothing else, in a git work tree)")
	f.BoolVar(&o.skipChecks, "skip-checks", false, "do not run the checks once to see whether they already pass or cannot run")
	f.StringVar(&a.Objective, "objective", "", "1. the key objective: one sentence a machine can judge")
	f.StringVar(&a.Shape, "shape", a.Shape, "1. loop shape: cycle, ralph or review")
	f.StringArrayVar(&a.Deliverables, "deliverable", nil, "2. what a cycle must deliver (repeatable)")
	f.StringArrayVar(&a.Verify, "verify", nil, "3. cycle gate check, a shell command that exits 0 on success (repeatable)")
	f.StringArrayVar(&a.ObjectiveVerify, "objective-verify", nil, "3. objective gate check: exits 0 only when the objective is met (repeatable)")
	f.StringArrayVar(&a.Setup, "setup", nil, "3. command run once before the first cycle (repeatable)")
	f.StringVar(&a.HoldoutShare, "holdout", "", "3. set this share of the project's test files aside as holdout tests the agent never sees, like 20% or 2 (when git tracks them, the agent sees no repository while the loop runs)")
	f.StringArrayVar(&a.Protect, "protect", nil, "4. glob of files the agent must not change (repeatable)")
	f.StringArrayVar(&a.Constraints, "constraint", nil, "4. a rule for the agent, carried to the prompts (repeatable)")
	f.StringVar(&a.Sandbox, "sandbox", a.Sandbox, "4. how agent runs are confined: "+strings.Join(initwiz.SandboxModes, ", "))
	f.BoolVar(&a.Audit, "audit", false, "4. a fresh auditor looks for test gaming before DONE (one more agent run per DONE gate)")
	f.StringVar(&a.Backend, "backend", a.Backend, "agent backend: "+strings.Join(spec.Backends, ", "))
	f.StringVar(&a.Model, "model", "", "the agent CLI's model name (default: the CLI's own)")
	f.StringVar(&a.Command, "command", "", "command backend: the program to run")
	f.IntVar(&a.Iterations, "iterations", a.Iterations, "budget: agent runs in build (ralph: attempts)")
	f.IntVar(&a.Cycles, "cycles", a.Cycles, "budget: plan/build/gate cycles")
	f.Float64Var(&a.CostUSD, "cost", a.CostUSD, "budget: USD for the whole loop")
	f.StringVar(&a.Wall, "wall", a.Wall, "budget: wall-clock time for the whole loop, like 90m or 4h")
	f.IntVar(&a.SameFailure, "same-failure", a.SameFailure, "stop after the same failure this many times in a row")
	_ = cmd.RegisterFlagCompletionFunc("shape", cobra.FixedCompletions([]string{spec.ShapeCycle, spec.ShapeRalph, spec.ShapeReview}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("backend", cobra.FixedCompletions(spec.Backends, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// canAsk reports whether the command can interview: its input and output
// are both terminals (a real tty, not /dev/null, which is a character device
// too).
func canAsk(stdio *IO) bool {
	in, ok := stdio.In.(*os.File)
	if !ok || !term.IsTerminal(in.Fd()) {
		return false
	}
	if out, ok := stdio.Out.(*os.File); ok {
		return term.IsTerminal(out.Fd())
	}
	return stdio.IsTerm
}

func runInit(stdio *IO, o *initOptions, cmd *cobra.Command) error {
	path := o.file
	if path == "" {
		path = "loop.yaml"
	}
	path = spec.ExpandHome(path)
	if _, err := os.Stat(path); err == nil && !o.force {
		return &ExitError{Code: ExitUsage, Err: initwiz.ErrExists{Path: path}}
	}
	a := o.a
	a.Clean()

	interactive := !o.yes && canAsk(stdio)
	dir := filepath.Dir(path)
	// With no check given, the project's own test command is proposed.
	a.DetectChecks(dir, detect.System)
	if interactive {
		if a.HoldoutShare == "" {
			// The interview offers a holdout set when the project has tests.
			a.TestFiles, _ = initwiz.TestFiles(dir)
		}
		answers, ok, err := initwiz.Interview(a, path, stdio.In, stdio.Out)
		if err != nil {
			if errors.Is(err, initwiz.ErrAborted) {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			return err
		}
		if !ok {
			fmt.Fprintln(stdio.Out, "Nothing written.")
			return nil
		}
		a = answers
	}

	if ms := a.Check(); len(ms) > 0 {
		var b strings.Builder
		invalid := 0
		for _, m := range ms {
			if m.Invalid {
				invalid++
			}
		}
		switch {
		case interactive:
			b.WriteString("the answers are incomplete:")
		case o.yes || invalid == len(ms):
			// The flags were meant to be complete: name what is wrong.
			b.WriteString("cannot write the loop file; fix these flags:")
		default:
			b.WriteString("cannot write the loop file without a terminal to ask in; give these answers as flags:")
		}
		for _, m := range ms {
			fmt.Fprintf(&b, "\n  %s: pass %s", m.What, m.Flag)
		}
		b.WriteString("\n(see looprinter init --help)")
		return &ExitError{Code: ExitUsage, Err: errors.New(b.String())}
	}

	var ran *checkRun
	if !interactive {
		if a.HoldoutShare != "" && !o.skipChecks {
			// The checks run once first: a test file their failure names
			// holds the loop's target and is never set aside.
			if pre, err := initwiz.Load(path, a); err == nil {
				ran = runChecksOnce(cmd.Context(), pre)
				a.FailingOutput = ran.failing
			}
		}
		if err := initwiz.PlanHoldout(dir, &a); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		fmt.Fprint(stdio.Out, a.Summary(path))
	}
	weak := a.Weaknesses()
	l, err := initwiz.Write(path, a, o.force)
	if err != nil {
		var ee initwiz.ErrExists
		if errors.As(err, &ee) {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		return err
	}
	if !interactive { // the interview showed them before the confirmation
		for _, w := range weak {
			fmt.Fprintln(stdio.Err, "warning: weak verification:", w)
		}
	}
	fmt.Fprintf(stdio.Out, "\nWrote %s\n", path)
	if len(a.Holdout) > 0 {
		added, err := initwiz.ExcludeHoldout(dir, a.Holdout)
		if err != nil {
			return fmt.Errorf("keeping the holdout tests out of git: %w; add them to .git/info/exclude yourself (the loop stops BLOCKED while git can carry them)", err)
		}
		fmt.Fprintf(stdio.Out, "Set aside %d holdout test file(s): %s\n", len(a.Holdout), strings.Join(a.Holdout, ", "))
		for _, n := range a.HoldoutNotes {
			fmt.Fprintf(stdio.Out, "Holdout: %s\n", n)
		}
		if len(added) > 0 {
			fmt.Fprintf(stdio.Out, "Added %s to .git/info/exclude\n", strings.Join(added, ", "))
		}
	}
	failing := ""
	if !o.skipChecks {
		if ran == nil {
			ran = runChecksOnce(cmd.Context(), l)
		}
		failing = ran.failing
		lines, warns := ran.lines, ran.warns
		hl, hw := holdoutChecksOnce(cmd.Context(), l)
		lines, warns = append(lines, hl...), append(warns, hw...)
		for _, s := range lines {
			fmt.Fprintln(stdio.Out, s)
		}
		for _, w := range warns {
			fmt.Fprintln(stdio.Err, "warning:", w)
		}
	}
	printInitProtected(stdio, l, failing)
	added, err := initwiz.UpdateGitignore(filepath.Dir(l.Path))
	if err != nil {
		fmt.Fprintf(stdio.Err, "warning: could not update .gitignore: %v; add output/ and working-records/ to it yourself\n", err)
	} else if len(added) > 0 {
		fmt.Fprintf(stdio.Out, "Added %s to %s\n", strings.Join(added, ", "), filepath.Join(filepath.Dir(path), ".gitignore"))
	}
	fileArg := ""
	if filepath.Clean(path) != "loop.yaml" {
		fileArg = " -f " + path
	}
	commit := ""
	if o.noCommit {
		commit = initwiz.CommitHint(filepath.Dir(l.Path), l.Path)
	} else {
		commit = initwiz.CommitLoopFile(filepath.Dir(l.Path), l.Path)
	}
	if commit != "" {
		fmt.Fprintln(stdio.Out, commit)
	}
	fmt.Fprintf(stdio.Out, "Next:\n  looprinter validate%s       see what the loop will do\n  looprinter doctor%s         check the agent CLI and the check commands\n  looprinter cost estimate%s  what it may cost\n  looprinter run%s            run it\n", fileArg, fileArg, fileArg, fileArg)
	return nil
}

// checkRun is what running the checks once found.
type checkRun struct {
	lines, warns []string
	failing      string // the failing checks' signals
}

func runChecksOnce(ctx context.Context, l *spec.Loop) *checkRun {
	lines, warns, failing := checkWarnings(ctx, l)
	return &checkRun{lines: lines, warns: warns, failing: failing}
}

// holdoutChecksOnce runs the holdout checks once, as the clean room will
// (the holdout files in view), and says what each found, with a warning
// for one that cannot start, could not collect, ran no test, or failed
// without naming a failing test: a holdout check that can never pass
// would keep the loop from DONE.
func holdoutChecksOnce(ctx context.Context, l *spec.Loop) (lines, warns []string) {
	if len(l.HoldoutVerify) == 0 {
		return nil, nil
	}
	once := *l
	once.Verify, once.ObjectiveVerify, once.Holdout, once.HoldoutVerify = l.HoldoutVerify, nil, nil, nil
	if once.CheckTimeout.D() > initwiz.ProbeTimeout {
		once.CheckTimeout = spec.Duration(initwiz.ProbeTimeout)
	}
	for _, r := range loop.ProbeChecks(ctx, &once) {
		line, ws := initwiz.RanReport(initwiz.Ran{Command: r.Command, Exit: r.ExitCode, Duration: time.Duration(r.DurationMS) * time.Millisecond,
			TimedOut: r.TimedOut, Tests: r.Tests, Output: r.Signal, Dir: l.Dir, Objective: l.Objective})
		lines = append(lines, "holdout: "+line)
		warns = append(warns, ws...)
		if w := initwiz.HoldoutRunWarning(r.Command, r.ExitCode, r.Tests, len(r.Failed), r.Signal); w != "" {
			warns = append(warns, w)
		}
	}
	return lines, warns
}

// checkWarnings runs the new loop's checks once (a command listed under
// both verify and objective_verify runs once; each for at most
// initwiz.ProbeTimeout) and returns what each found
// (exit, time, test counts) and what would stop the loop before any agent
// run: checks that cannot run, or checks that already pass (ALREADY
// PASSING, exit 5, unless allow_passing).
func checkWarnings(ctx context.Context, l *spec.Loop) (lines, out []string, failing string) {
	once := *l
	once.ObjectiveVerify = nil
	if once.CheckTimeout.D() > initwiz.ProbeTimeout {
		once.CheckTimeout = spec.Duration(initwiz.ProbeTimeout)
	}
	seen := map[string]bool{}
	for _, c := range l.Verify {
		seen[c] = true
	}
	for _, c := range l.ObjectiveVerify {
		if !seen[c] {
			seen[c] = true
			once.ObjectiveVerify = append(once.ObjectiveVerify, c)
		}
	}
	results := loop.ProbeChecks(ctx, &once)
	if len(results) == 0 {
		return nil, nil, ""
	}
	pass := true
	var failed strings.Builder
	for _, r := range results {
		pass = pass && r.Pass
		if !r.Pass {
			failed.WriteString(r.Signal + "\n")
		}
		line, warns := initwiz.RanReport(initwiz.Ran{Command: r.Command, Exit: r.ExitCode, Duration: time.Duration(r.DurationMS) * time.Millisecond,
			TimedOut: r.TimedOut, Tests: r.Tests, Output: r.Signal, Dir: l.Dir, Objective: l.Objective})
		lines = append(lines, line)
		out = append(out, warns...)
		if (r.ExitCode == 126 || r.ExitCode == 127) && !judge.FailuresAsExit(r) && len(warns) == 0 {
			out = append(out, fmt.Sprintf("the check `%s` cannot run (exit %d): `looprinter run` would stop BLOCKED; `looprinter doctor` says how to fix it", r.Command, r.ExitCode))
		}
	}
	if pass && !l.AllowPassing {
		out = append(out, "the checks already pass: either the objective is met or the checks cannot fail. `looprinter run` would stop ALREADY PASSING (exit 5) without an agent run; sharpen the checks so they fail until the work is done (or set allow_passing: true to keep a passing loop green)")
	} else if !pass && !l.AllowPassing && len(l.ObjectiveVerify) > 0 {
		objective := map[string]bool{}
		for _, c := range l.ObjectiveVerify {
			objective[c] = true
		}
		objPass := true
		for _, r := range results {
			if objective[r.Command] && !r.Pass {
				objPass = false
			}
		}
		if objPass {
			out = append(out, "the objective checks already pass (only the cycle gate's fail): they cannot show that the agent's work met the objective, so after paid agent runs the loop would end NOT VERIFIED; sharpen objective_verify so it fails until the objective is met")
		}
	}
	return lines, out, failed.String()
}

// printInitProtected says how many files each rule protects (validate
// lists them) and warns of a protected file the objective or a failing
// check's output names.
func printInitProtected(stdio *IO, l *spec.Loop, failing string) {
	ps, err := guard.ResolveProtected(l.Dir, l)
	if err != nil {
		fmt.Fprintf(stdio.Err, "warning: the protected files cannot be listed, so the loop will not start: %v\n", err)
		return
	}
	fmt.Fprintf(stdio.Out, "Protected: %s the agent may not change, by rule (looprinter validate lists them):\n", count(len(ps), "file"))
	for _, line := range doctor.ProtectedByRule(ps) {
		fmt.Fprintln(stdio.Out, line)
	}
	printInlineTests(stdio.Out, l, "", 20)
	warns := doctor.NamedProtected(ps, "the objective", l.Objective)
	warns = append(warns, doctor.NamedProtected(ps, "the failing checks' output", failing)...)
	for _, w := range warns {
		fmt.Fprintln(stdio.Err, "warning:", w)
	}
}
