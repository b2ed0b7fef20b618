package initwiz

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/looprinter/looprinter/detect"
	"github.com/looprinter/looprinter/spec"
)

// q writes a string as a double-quoted YAML scalar.
func q(s string) string {
	n := yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	out, err := yaml.Marshal(&n)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimRight(string(out), "\n")
}

// Render writes the commented loop file for the answers. The result always
// passes spec.Parse for valid answers (see Check).
func Render(a Answers) []byte {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	list := func(key string, items []string, indent string) {
		if len(items) == 0 {
			p("%s%s: []\n", indent, key)
			return
		}
		p("%s%s:\n", indent, key)
		for _, it := range items {
			p("%s  - %s\n", indent, q(it))
		}
	}

	p("# loop.yaml: one loop for looprinter, written by `looprinter init`.\n")
	p("#   looprinter validate        check this file and see what the loop will do\n")
	p("#   looprinter doctor          check the agent CLI, its login and every check command\n")
	p("#   looprinter cost estimate   what it may cost before it runs\n")
	p("#   looprinter run             run it in the foreground (exit 0 = DONE)\n")
	p("# Files the loop writes: output/ (plan.json, progress.txt) and working-records/.\n\n")

	p("version: 1\n")
	p("# cycle:  plan -> build one task per agent run -> cycle gate (verify) -> objective gate\n")
	p("#         (objective_verify) -> re-plan with the errors or the gap, until both gates pass.\n")
	p("# ralph:  the same prompt, a fresh agent each attempt, the last failure fed back, until verify passes.\n")
	p("# review: writer -> reviewer (fresh context, another model) -> fixer, in rounds.\n")
	p("shape: %s\n\n", a.Shape)

	p("# The key objective: one sentence a machine can judge. It goes into every prompt.\n")
	p("objective: %s\n\n", q(a.Objective))

	p("# The agent that runs each step: a fresh process every time, state on disk.\n")
	p("agent:\n")
	p("  backend: %s%s# %s\n", a.Backend, pad(a.Backend, 16), strings.Join(spec.Backends, " | "))
	if a.Model != "" {
		p("  model: %s%s# the CLI's model name\n", q(a.Model), pad(q(a.Model), 18))
	} else if ModelApplies(a.Backend) {
		if ex := ModelExamples(a.Backend); len(ex) > 0 {
			p("  # model: %s%s# the CLI's model name; unset: the CLI's default\n", ex[0], pad(ex[0], 17))
		} else {
			p("  # model: ...             # the CLI's model name; unset: the CLI's default\n")
		}
	}
	if a.Backend == "command" {
		p("  # the program and its arguments; it gets the prompt on stdin and in $LOOPRINTER_PROMPT_FILE\n")
		p("  command: %s\n", q(a.Command))
	}
	p("  timeout: 20m             # per run; the agent's whole process group is killed after it\n")
	p("  idle_timeout: 5m         # no output for this long: killed as hung\n")
	p("  max_turns: %d%s# per run, where the CLI supports it; a capped run is still verified\n", spec.DefaultMaxTurns, pad(strconv.Itoa(spec.DefaultMaxTurns), 14))
	p("  # max_budget_usd: 3      # per run, where the CLI supports it\n\n")

	p("# Stop conditions in three layers (attempts, cost and time, no progress). They survive restarts.\n")
	p("budget:\n")
	p("  iterations: %d%s# agent runs in build (ralph: attempts); never unlimited: exit 1 when spent\n", a.Iterations, pad(strconv.Itoa(a.Iterations), 13))
	p("  cycles: %d%s# plan -> build -> gates cycles: exit 1 when spent\n", a.Cycles, pad(strconv.Itoa(a.Cycles), 17))
	cost := strconv.FormatFloat(a.CostUSD, 'f', -1, 64)
	p("  cost_usd: %s%s# whole loop, in USD: exit 3 when reached\n", cost, pad(cost, 15))
	p("  wall: %s%s# whole loop, wall-clock time: exit 3 when reached\n", a.Wall, pad(a.Wall, 19))
	p("  same_failure: %d%s# the same failure this many times in a row: exit 2 (NO PROGRESS)\n\n", a.SameFailure, pad(strconv.Itoa(a.SameFailure), 11))

	p("# Commands run once, before the first cycle (not again on restart).\n")
	list("setup", a.Setup, "")
	p("\n")
	if a.Shape == spec.ShapeRalph {
		p("# The verifier: run outside the agent after every attempt; all exit 0 = DONE.\n")
	} else {
		p("# Cycle gate: run outside the agent when a cycle's tasks are done; all must exit 0.\n")
		p("# The engine first checks output/plan.json and output/progress.txt itself.\n")
	}
	list("verify", a.Verify, "")
	p("\n")
	if a.Shape == spec.ShapeCycle {
		p("# Objective gate: is the key objective truly met? All must exit 0. With none, the gate\n")
		p("# passes with a warning and the final report lists the objective as NOT VERIFIED.\n")
		list("objective_verify", a.ObjectiveVerify, "")
		p("\n")
	}
	if len(a.Holdout) > 0 {
		p("# Holdout tests, set aside by `looprinter init --holdout`: the agent can neither read\n")
		p("# nor list them, and only the clean room that decides DONE runs them. git never carries\n")
		p("# them (.git/info/exclude): the agent reads the repository.\n")
		list("holdout", a.Holdout, "")
		list("holdout_verify", a.HoldoutVerify, "")
		p("holdout_feedback: count   # what a failing one tells the agent: count | names | full\n\n")
	}
	if a.Shape == spec.ShapeReview {
		p("# The review shape: a reviewer in a fresh context grades findings, a fixer addresses them.\n")
		p("review:\n")
		p("  bar: major               # findings at or above this stop DONE: critical | major | minor\n")
		p("  max_rounds: 3            # reviewer + fixer rounds, then a fix-verification pass\n")
		p("  # base: main             # the diff to review: changes since this git ref\n\n")
	}
	p("# Files the agent must not change (globs, relative to this file's directory).\n")
	p("# The engine also protects its own files; a change is reported as a violation.\n")
	list("protect", a.Protect, "")
	p("\n")

	sandbox := a.Sandbox
	if sandbox == "" {
		sandbox = "auto"
	}
	p("# How agent runs are confined: auto (bubblewrap, else Landlock; Seatbelt on macOS) | bwrap |\n")
	p("# landlock | seatbelt | off (no confinement: the agent can reach all you can).\n")
	p("sandbox: %s\n\n", sandbox)
	if a.Shape != spec.ShapeReview {
		p("# A fresh auditor (agents.auditor; by default another model than the builder's) reads the\n")
		p("# change for test gaming before DONE; a finding at or above bar keeps the loop from DONE.\n")
		p("audit:\n")
		p("  on: %t%s# costs one more agent run per DONE gate\n", a.Audit, pad(strconv.FormatBool(a.Audit), 21))
		p("  bar: major               # critical | major | minor\n\n")
	}

	p("# Prompts are Go text/template; empty means looprinter's built-in prompt.\n")
	p("# prompts:\n#   plan: \"\"\n#   build: \"\"\n#   replan: \"\"\n\n")

	if len(a.Deliverables) > 0 || len(a.Constraints) > 0 {
		p("# Your answers about what a cycle must deliver and what the agent must respect.\n")
		p("# Prompt templates can use them as {{.Vars.deliverables}} and {{.Vars.constraints}}.\n")
		p("vars:\n")
		block := func(key, comment string, items []string) {
			if len(items) == 0 {
				return
			}
			p("  %s: |%s# %s\n", key, pad(key, 16), comment)
			for _, it := range items {
				p("    - %s\n", it)
			}
		}
		block("deliverables", "what each cycle must produce", a.Deliverables)
		block("constraints", "rules the agent must keep", a.Constraints)
		p("\n")
	}

	p("# Phases that run after both gates pass, each until the agent prints <promise>WORD</promise>.\n")
	p("# post_phases:\n")
	p("#   - name: docs\n")
	p("#     prompt: \"Update README.md for what changed; see output/progress.txt. Print <promise>DOCS_DONE</promise> when done.\"\n")
	p("#     done: DOCS_DONE\n")
	p("#     max_steps: 5\n")
	return []byte(b.String())
}

func pad(s string, width int) string {
	n := width - len(s)
	if n < 1 {
		n = 1
	}
	return strings.Repeat(" ", n)
}

// Write renders the answers, checks the result with the loop file loader,
// and writes it to path. It refuses to replace an existing file unless
// force is set.
// Load is the loop the answers would write to path, not written.
func Load(path string, a Answers) (*spec.Loop, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return spec.Parse(Render(a), abs)
}

func Write(path string, a Answers, force bool) (*spec.Loop, error) {
	data := Render(a)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	l, err := spec.Parse(data, abs)
	if err != nil {
		return nil, fmt.Errorf("the loop file written from these answers does not load (a bug in looprinter init, please report it): %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(abs, flags, 0o644)
	if err != nil {
		if os.IsExist(err) {
			return nil, ErrExists{Path: path}
		}
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	return l, f.Close()
}

// ErrExists is a loop file that init will not replace without --force.
type ErrExists struct{ Path string }

func (e ErrExists) Error() string {
	return fmt.Sprintf("%s already exists; pass --force to replace it, or -f to write another file", e.Path)
}

// GitignoreLines are what init adds to .gitignore: the loop's own folders.
var GitignoreLines = []string{"output/", "working-records/"}

// BuildOutputLines are the build output init also ignores in dir, for the
// ecosystems the folder shows (node_modules/ for package.json,
// __pycache__/ for Python, target/ for Cargo.toml): a loop's commits take
// the whole folder, and these should not be in them.
func BuildOutputLines(dir string) []string { return detect.BuildOutput(detect.Ecosystems(dir)) }

// UpdateGitignore adds GitignoreLines and BuildOutputLines to
// dir/.gitignore, creating it when missing and adding only the lines that
// are not there. It returns the lines added.
func UpdateGitignore(dir string) ([]string, error) {
	path := filepath.Join(dir, ".gitignore")
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimPrefix(line, "/")
		line = strings.TrimSuffix(line, "/")
		have[line] = true
	}
	missing := func(lines []string) []string {
		var add []string
		for _, l := range lines {
			if !have[strings.TrimSuffix(l, "/")] {
				add = append(add, l)
			}
		}
		return add
	}
	own, build := missing(GitignoreLines), missing(BuildOutputLines(dir))
	if len(own)+len(build) == 0 {
		return nil, nil
	}
	var b strings.Builder
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		b.WriteString("\n")
	}
	for _, block := range []struct {
		title string
		lines []string
	}{{"# looprinter: the loop's outputs and records", own}, {"# build output, kept out of the loop's commits", build}} {
		if len(block.lines) == 0 {
			continue
		}
		b.WriteString(block.title + "\n")
		for _, l := range block.lines {
			b.WriteString(l + "\n")
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return nil, err
	}
	return append(own, build...), f.Close()
}
