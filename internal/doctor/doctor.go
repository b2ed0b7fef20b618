// Package doctor checks what a loop needs before it runs and returns what
// it found as data: the agent CLIs the loop uses (on PATH, their version,
// a login it can see without a paid call), git, the sandbox in force, the
// loop file, every check's program, checks that cannot fail, and the
// protected files with the rule that protects each. `looprinter doctor`
// prints the findings.
package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/detect"
	"github.com/looprinter/looprinter/failover"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/netpolicy"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Levels of a finding.
const (
	OK   = "ok"
	Info = "info"
	Warn = "warn"
	Fail = "FAIL" // the loop cannot run
)

// Areas, in the order doctor checks them.
const (
	AreaCLIs      = "Agent CLIs"
	AreaTools     = "Tools"
	AreaSandbox   = "Sandbox"
	AreaLoop      = "Loop file"
	AreaProtected = "Protected files"
)

// Finding is one thing doctor found.
type Finding struct {
	Level   string // ok, info, warn, FAIL
	Area    string
	Message string
	Fix     string   // what to do, for warn and FAIL
	Notes   []string // more lines that belong to it
}

// Options say what to check.
type Options struct {
	// File is the loop file; "" means loop.yaml. FileGiven says the user
	// named it: then a missing file is a failure, not a warning.
	File      string
	FileGiven bool
	// Wd is the directory paths are shown relative to; "" is the current one.
	Wd string
	// MaxProtected caps the listed protected files; 0 means 20, less than
	// 0 lists every one (--all).
	MaxProtected int
}

// Report is what Run found.
type Report struct {
	Findings []Finding
	Loop     *spec.Loop // nil when there is no valid loop file
	Problems int        // FAIL findings
	Warnings int
	// Summary is the closing line; Blocked says the loop cannot run.
	Summary string
	Blocked bool
}

// Run checks everything and returns the findings. It never starts an
// agent: the CLIs are asked for --version only.
func Run(ctx context.Context, opts Options) *Report {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.File == "" {
		opts.File = "loop.yaml"
	}
	if opts.Wd == "" {
		opts.Wd, _ = os.Getwd()
	}
	if opts.MaxProtected == 0 {
		opts.MaxProtected = 20
	}
	r := &Report{}
	var loadErr error
	if _, err := os.Stat(spec.ExpandHome(opts.File)); err == nil {
		r.Loop, loadErr = spec.Load(opts.File)
	} else if opts.FileGiven {
		loadErr = fmt.Errorf("no loop file at %s", opts.File)
	}
	l := r.Loop

	used := map[string][]string{}      // backend → phases
	fallbacks := map[string][]string{} // backend → phases it is a fallback for
	if l != nil {
		for _, ph := range loopPhases(l) {
			a := l.AgentFor(ph.name, ph.post)
			used[a.Backend] = appendUnique(used[a.Backend], ph.name)
			for _, f := range failover.Candidates(a)[1:] {
				fallbacks[f.Backend] = appendUnique(fallbacks[f.Backend], ph.name)
			}
		}
	}

	// The CLIs: those the loop uses, as an agent or a fallback; every one
	// when there is no loop.
	for _, c := range AgentCLIs {
		if l != nil && len(used[c.Backend]) == 0 && len(fallbacks[c.Backend]) == 0 {
			continue
		}
		r.add(checkCLI(ctx, c, l, used[c.Backend], fallbacks[c.Backend])...)
	}
	if l != nil && (len(used["command"]) > 0 || len(fallbacks["command"]) > 0) {
		r.add(checkCommandBackend(l, used["command"], fallbacks["command"])...)
	}

	r.add(checkGit(ctx, l)...)
	if l != nil {
		r.add(checkSandbox(l)...)
	}

	switch {
	case l == nil && loadErr == nil:
		r.add(Finding{Level: Warn, Area: AreaLoop, Message: "no loop file at " + opts.File + ": only the CLIs were checked",
			Fix: "write one with `looprinter init`, or name it with -f"})
	case loadErr != nil:
		var se *spec.Error
		if errors.As(loadErr, &se) {
			f := Finding{Level: Fail, Area: AreaLoop, Message: fmt.Sprintf("%s is invalid (%d problem%s)", se.Path, len(se.Problems), plural(len(se.Problems))),
				Fix: "fix each line below; `looprinter validate` shows them again"}
			for _, p := range se.Problems {
				f.Notes = append(f.Notes, p.String())
			}
			r.add(f)
		} else {
			r.add(Finding{Level: Fail, Area: AreaLoop, Message: loadErr.Error(), Fix: "write one with `looprinter init`, or name it with -f"})
		}
	default:
		r.add(Finding{Level: OK, Area: AreaLoop, Message: fmt.Sprintf("%s is valid: shape %s, %s", relTo(opts.Wd, l.Path), l.Shape, backendsSummary(used))})
		r.add(checkCommands(l)...)
		r.add(checkGates(l)...)
		for _, w := range l.Warnings() {
			if strings.Contains(w, "objective_verify") || strings.Contains(w, "no verify checks") {
				continue // said above, with a fix
			}
			r.add(Finding{Level: Warn, Area: AreaLoop, Message: w})
		}
		r.add(checkProtected(l, opts.MaxProtected)...)
	}

	switch {
	case r.Problems > 0:
		r.Blocked = true
		r.Summary = fmt.Sprintf("%d problem%s: the loop cannot run until %s fixed. %d warning%s.", r.Problems, plural(r.Problems), itThey(r.Problems), r.Warnings, plural(r.Warnings))
	case l == nil:
		r.Summary = fmt.Sprintf("No problems with the CLIs; %d warning%s. Write a loop with `looprinter init`.", r.Warnings, plural(r.Warnings))
	default:
		r.Summary = fmt.Sprintf("Ready: the loop can run (`looprinter run`). %d warning%s.", r.Warnings, plural(r.Warnings))
	}
	return r
}

func (r *Report) add(fs ...Finding) {
	for _, f := range fs {
		switch f.Level {
		case Fail:
			r.Problems++
		case Warn:
			r.Warnings++
		}
		r.Findings = append(r.Findings, f)
	}
}

// VacuousCheck tells whether a check command cannot fail, and why (the
// part that makes it pass). The engine uses the same words.
func VacuousCheck(cmd string) (why string, vacuous bool) { return checkcmd.VacuousCheck(cmd) }

// Importable says whether a Python interpreter, as a check names it, can
// import a module: `PYTHON -c 'import MODULE'`, 10 seconds at most, outside
// the project's folder. An interpreter inside the loop's folder (a
// project's .venv) is the agent's to change: doctor does not start it
// outside the sandbox, and says nothing about it (true).
func Importable(dir string) func(python, module string) bool {
	return func(python, module string) bool {
		py, err := detect.Interpreter(dir, python)
		if err != nil {
			return true // CheckRunnable said where it is
		}
		if inside(dir, py) {
			return true
		}
		return detect.System.HasModule(dir, py, module)
	}
}

// inside says whether path is in dir, symbolic links resolved.
func inside(dir, path string) bool {
	for _, f := range []func(string) (string, error){filepath.Abs, filepath.EvalSymlinks} {
		d, err1 := f(dir)
		p, err2 := f(path)
		if err1 != nil || err2 != nil {
			continue
		}
		if r, err := filepath.Rel(d, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			return true
		}
	}
	return false
}

// CannotRun tells whether a check cannot start (the shell would exit 127 or
// 126), why, and the fix; key is where the check is listed (verify,
// objective_verify, setup).
func CannotRun(cmd, dir, key string) (why, fix string, cannot bool) {
	prog, why := checkcmd.CheckRunnable(cmd, dir, os.Getenv("PATH"))
	if why == "" {
		return "", "", false
	}
	return why, checkcmd.RunFix(prog, why, key), true
}

type phaseRef struct {
	name string
	post bool
}

// loopPhases are the phases whose agent the loop will start.
func loopPhases(l *spec.Loop) []phaseRef {
	var ps []phaseRef
	switch l.Shape {
	case spec.ShapeRalph:
		ps = append(ps, phaseRef{"ralph", false})
	case spec.ShapeReview:
		if l.Review.Writer != "" {
			ps = append(ps, phaseRef{"writer", false})
		}
		ps = append(ps, phaseRef{"reviewer", false}, phaseRef{"fixer", false})
	default:
		ps = append(ps, phaseRef{"plan", false}, phaseRef{"replan", false}, phaseRef{"build", false})
	}
	for _, p := range l.PostPhases {
		ps = append(ps, phaseRef{p.Name, true})
	}
	return ps
}

func checkGit(ctx context.Context, l *spec.Loop) []Finding {
	p, err := exec.LookPath("git")
	if err != nil {
		return []Finding{{Level: Warn, Area: AreaTools, Message: "git: not found on PATH",
			Fix: "install git (apt-get install git, brew install git): the loop's commits and diffs need it"}}
	}
	out := []Finding{{Level: OK, Area: AreaTools, Message: "git " + orUnknown(strings.TrimPrefix(Version(ctx, "", p), "git version "))}}
	if l != nil {
		if err := exec.CommandContext(ctx, p, "-C", l.Dir, "rev-parse", "--git-dir").Run(); err != nil {
			out = append(out, Finding{Level: Warn, Area: AreaTools, Message: "the loop's directory " + l.Dir + " is not in a git repository",
				Fix: "run `git init` there, so that every change the agent makes can be seen and undone"})
		}
	}
	return out
}

// checkSandbox says which sandbox confines the agent runs.
func checkSandbox(l *spec.Loop) []Finding {
	mode := l.Sandbox
	if _, err := sandbox.Resolve(mode); err != nil {
		return []Finding{{Level: Fail, Area: AreaSandbox, Message: err.Error(), Notes: sandbox.Describe(mode),
			Fix: sandbox.Hint()}}
	}
	var out []Finding
	kind, _ := sandbox.Resolve(mode)
	for _, line := range append(sandbox.Describe(mode), sandbox.Guarantees(kind)...) {
		level := Info
		if strings.Contains(line, ": in force") {
			level = OK
			if strings.HasPrefix(line, "off:") {
				level = Warn
			}
		}
		f := Finding{Level: level, Area: AreaSandbox, Message: line}
		if level == Warn {
			f.Fix = "remove `sandbox: off` from the loop file, so that agent runs are confined to the loop's folder"
		}
		out = append(out, f)
	}
	home, _ := os.UserHomeDir()
	lines, warns := netpolicy.Describe(l, kind, home)
	for _, line := range lines {
		out = append(out, Finding{Level: Info, Area: AreaSandbox, Message: line.Label + ": " + line.Text})
	}
	for _, w := range warns {
		out = append(out, Finding{Level: Warn, Area: AreaSandbox, Message: w,
			Fix: "use bubblewrap (apt-get install bubblewrap), which confines the network and masks credentials, or a kernel with Landlock ABI 4 (Linux 6.7) for TCP"})
	}
	out = append(out, viewFindings(l, kind)...)
	return append(out, checkFindings(kind, string(l.Checks.Network))...)
}

// viewFindings say what an agent run and a check see of the machine: the
// manifest their views are built from (one note an entry), and a warning
// for each host socket the loop file lets in.
func viewFindings(l *spec.Loop, kind string) []Finding {
	if kind == sandbox.Off {
		return nil
	}
	out := []Finding{{Level: Info, Area: AreaSandbox, Message: "view: agents and checks see only this manifest, the loop folder and HOME's layer (nothing else of the machine: other projects and loops, the rest of HOME, the host's /tmp, /var/tmp and /run); a command that needs more names it in sandbox.allow_read",
		Notes: confine.ViewOf(l).Lines()}}
	for _, w := range l.SocketWarnings() {
		out = append(out, Finding{Level: Warn, Area: AreaSandbox, Message: w, Fix: "remove it from sandbox.allow_sockets unless the checks need that service"})
	}
	if gap := sandbox.SocketGap(kind, l.SandboxOpts.AllowSockets); gap != "" {
		out = append(out, Finding{Level: Warn, Area: AreaSandbox, Message: gap, Fix: "use `sandbox: bwrap` (apt-get install bubblewrap), which lets only the listed sockets in, or a kernel with Landlock ABI 9"})
	}
	return out
}

// checkFindings say what the checks' own sandbox guarantees, and what it
// does not, for the kind in force and the loop's checks.network.
func checkFindings(kind, network string) []Finding {
	var out []Finding
	if g := sandbox.CheckGuarantee(kind, network); g != "" {
		out = append(out, Finding{Level: Info, Area: AreaSandbox, Message: "checks: guaranteed: " + g})
	}
	for _, gap := range sandbox.CheckGaps(kind, network) {
		f := Finding{Level: Info, Area: AreaSandbox, Message: "checks: not guaranteed: " + gap}
		switch {
		case strings.HasPrefix(gap, "checks.network is host"):
			f.Level, f.Fix = Warn, "write `checks: {network: none}` in the loop file unless the integration tests need a host service"
		case kind == sandbox.Off:
			f.Level = Warn
		}
		out = append(out, f)
	}
	return out
}

func checkCommandBackend(l *spec.Loop, phases, fallbackFor []string) []Finding {
	var out []Finding
	seen := map[string]bool{}
	check := func(ph string, a spec.Agent, fallback bool) {
		if a.Backend != "command" || seen[a.Command] {
			return
		}
		seen[a.Command] = true
		prog, why := checkcmd.CheckRunnable(a.Command, l.Dir, os.Getenv("PATH"))
		if why != "" && prog == "looprinter" {
			// The engine runs `looprinter …` as itself when it is not on PATH.
			if self, err := os.Executable(); err == nil {
				prog, why = self, ""
			}
		}
		switch {
		case why != "" && fallback:
			out = append(out, Finding{Level: Warn, Area: AreaCLIs, Message: fmt.Sprintf("command backend (a fallback for %s): %s", ph, why),
				Fix: "correct the fallback's command, or install the program: until then the loop waits for a usage limit to reset instead of failing over"})
		case why != "":
			out = append(out, Finding{Level: Fail, Area: AreaCLIs, Message: fmt.Sprintf("command backend (%s): %s", ph, why), Fix: "correct agent.command, or install the program"})
		case fallback:
			out = append(out, Finding{Level: OK, Area: AreaCLIs, Message: fmt.Sprintf("command backend: %s (a fallback for %s)", prog, strings.Join(fallbackFor, ", "))})
		default:
			out = append(out, Finding{Level: OK, Area: AreaCLIs, Message: fmt.Sprintf("command backend: %s (%s)", prog, strings.Join(phases, ", "))})
		}
	}
	for _, ph := range phases {
		check(ph, l.AgentFor(ph, isPost(l, ph)), false)
	}
	for _, ph := range fallbackFor {
		for _, c := range failover.Candidates(l.AgentFor(ph, isPost(l, ph)))[1:] {
			check(ph, c, true)
		}
	}
	return out
}

// checkCommands: every check's program must start; a gate check must be
// able to fail.
func checkCommands(l *spec.Loop) []Finding {
	var out []Finding
	groups := []struct {
		key  string
		cmds []string
	}{{"setup", l.Setup}, {"verify", l.Verify}, {"objective_verify", l.ObjectiveVerify}}
	for _, g := range groups {
		for _, c := range g.cmds {
			prog, why := checkcmd.CheckRunnable(c, l.Dir, os.Getenv("PATH"))
			if why != "" {
				out = append(out, Finding{Level: Fail, Area: AreaLoop, Message: fmt.Sprintf("%s check %q: %s", g.key, c, why), Fix: checkcmd.RunFix(prog, why, g.key)})
				continue
			}
			if why, fix := checkcmd.CheckStart(c, l.Dir, os.Getenv("PATH"), Importable(l.Dir)); why != "" {
				out = append(out, Finding{Level: Fail, Area: AreaLoop, Message: fmt.Sprintf("%s check %q: %s", g.key, c, why), Fix: fix})
				continue
			}
			if g.key != "setup" {
				if vwhy, ok := checkcmd.VacuousCheck(c); ok {
					out = append(out, Finding{Level: Warn, Area: AreaLoop, Message: fmt.Sprintf("%s check %q cannot fail: %s", g.key, c, vwhy),
						Fix: "a check must exit non-zero when what it checks is wrong: drop the part named above"})
					continue
				}
			}
			out = append(out, Finding{Level: OK, Area: AreaLoop, Message: fmt.Sprintf("%s check %q: %s", g.key, c, orUnknown(prog))})
		}
	}
	return out
}

func checkGates(l *spec.Loop) []Finding {
	var out []Finding
	switch l.Shape {
	case spec.ShapeCycle:
		if len(l.ObjectiveVerify) == 0 {
			out = append(out, Finding{Level: Warn, Area: AreaLoop, Message: "the objective gate is not configured: it passes through and the objective is reported NOT VERIFIED",
				Fix: "add objective_verify: commands that exit 0 only when the key objective is met (e.g. ./scripts/objective.sh)"})
		} else {
			out = append(out, Finding{Level: OK, Area: AreaLoop, Message: fmt.Sprintf("objective gate: %d check%s", len(l.ObjectiveVerify), plural(len(l.ObjectiveVerify)))})
		}
		if len(l.Verify) == 0 {
			out = append(out, Finding{Level: Warn, Area: AreaLoop, Message: "the cycle gate has no verify checks: only the plan and progress files are checked",
				Fix: fmt.Sprintf("add verify: the project's tests, build, lint (e.g. %q)", detect.Suggest(l.Dir))})
		}
	case spec.ShapeRalph:
		out = append(out, Finding{Level: OK, Area: AreaLoop, Message: fmt.Sprintf("verifier: %d check%s", len(l.Verify), plural(len(l.Verify)))})
	}
	return out
}

// checkProtected lists the protected files, each with its rule.
func checkProtected(l *spec.Loop, max int) []Finding {
	ps, err := guard.ResolveProtected(l.Dir, l)
	if err != nil {
		return []Finding{{Level: Fail, Area: AreaProtected, Message: err.Error(),
			Fix: "the engine will not start a run whose protected files it cannot list; see the message for what to change"}}
	}
	f := Finding{Level: OK, Area: AreaProtected, Message: fmt.Sprintf("%d protected file%s: the agent may not change %s", len(ps), plural(len(ps)), itThem(len(ps)))}
	f.Notes = ProtectedLines(ps, max)
	out := []Finding{f}
	for _, w := range NamedProtected(ps, "the objective", l.Objective) {
		out = append(out, Finding{Level: Warn, Area: AreaProtected, Message: w})
	}
	if len(l.Protect) > 0 {
		out = append(out, Finding{Level: Info, Area: AreaProtected, Message: "new files that match protect: " + strings.Join(quoteAll(l.Protect), ", ") + " may not be created either"})
	}
	if !hasDefaultTests(ps) && (l.ProtectDefaults == nil || *l.ProtectDefaults) {
		out = append(out, Finding{Level: Info, Area: AreaProtected, Message: "no test files are protected by a default rule (none found for Go, Python, JS/TS or Rust)",
			Fix: `if the checks read test files or fixtures, protect them: protect: ["tests/**"]`})
	}
	return out
}

func hasDefaultTests(ps []guard.Protected) bool {
	for _, p := range ps {
		if strings.Contains(p.Rule, "(default rule ") {
			return true
		}
	}
	return false
}

// ProtectedLines writes protected files one a line with their rules, at
// most max of them (every one when max < 0); past max, how many more, with
// the count of each rule's files, and the flag that lists every one.
func ProtectedLines(ps []guard.Protected, max int) []string {
	if max < 0 {
		max = len(ps)
	}
	width := 0
	for i, p := range ps {
		if n := len([]rune(p.Path)); i < max && n > width && n <= 40 {
			width = n
		}
	}
	var out []string
	for i, p := range ps {
		if i == max {
			out = append(out, fmt.Sprintf("… and %d more (--all lists every one); by rule, of all %d:", len(ps)-max, len(ps)))
			out = append(out, ruleCounts(ps)...)
			break
		}
		out = append(out, fmt.Sprintf("%-*s  ← %s", width, p.Path, p.Rule))
	}
	return out
}

// ruleCounts is how many protected files each rule protects, most first.
func ruleCounts(ps []guard.Protected) []string {
	n := map[string]int{}
	var rules []string
	for _, p := range ps {
		if n[p.Rule] == 0 {
			rules = append(rules, p.Rule)
		}
		n[p.Rule]++
	}
	sort.SliceStable(rules, func(i, j int) bool { return n[rules[i]] > n[rules[j]] })
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = fmt.Sprintf("  %5d  %s", n[r], r)
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

var versionRe = regexp.MustCompile(`\d+\.\d+`)

// Version runs a program's --version (or the given arguments) with a short
// timeout and returns the first line of its standard output that holds a
// version number, or "". Standard error is not read: a CLI's warnings there
// are not its version.
func Version(ctx context.Context, dir, path string, args ...string) string {
	if len(args) == 0 {
		args = []string{"--version"}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, path, args...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return ""
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if line = strings.TrimSpace(line); versionRe.MatchString(line) {
			return line
		}
	}
	return ""
}

func isPost(l *spec.Loop, name string) bool {
	for _, p := range l.PostPhases {
		if p.Name == name {
			return true
		}
	}
	return false
}

func backendsSummary(used map[string][]string) string {
	var names []string
	for b := range used {
		names = append(names, b)
	}
	sort.Strings(names)
	if len(names) == 1 {
		return "backend " + names[0]
	}
	return "backends " + strings.Join(names, ", ")
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func itThey(n int) string {
	if n == 1 {
		return "it is"
	}
	return "they are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
