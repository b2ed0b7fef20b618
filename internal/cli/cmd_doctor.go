package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/shlex"
	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/spec"
)

func init() { register(newDoctorCmd) }

func newDoctorCmd(stdio *IO) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the agent CLIs, their login, git, the loop file and its checks",
		Long: `Check what a loop needs before it runs:

  - the agent CLIs (claude, codex, gemini): on PATH, their version, and whether
    they are logged in where that can be told without a paid call (an API key
    in the environment, a credentials file); otherwise it says it could not check
  - git
  - the loop file: that it is valid
  - every setup, verify and objective_verify command: that its program exists
    (on PATH, or a file in the loop's directory)
  - that the objective gate is configured

Every problem comes with a fix. doctor exits 4 (BLOCKED) when the loop cannot
run: its agent CLI is missing, the loop file is invalid, or a check's program
is missing. A CLI that the loop does not use is only a warning.`,
		Example: `  looprinter doctor
  looprinter doctor -f loops/docs/loop.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), stdio, file, cmd.Flags().Changed("file"))
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "loop.yaml", "the loop file")
	return cmd
}

type docLevel int

const (
	docOK docLevel = iota
	docInfo
	docWarn
	docFail
)

func (l docLevel) String() string {
	return [...]string{"ok", "info", "warn", "FAIL"}[l]
}

type doctor struct {
	w        io.Writer
	problems int // FAIL findings
	warnings int
}

func (d *doctor) section(title string) { fmt.Fprintf(d.w, "\n%s\n", title) }

func (d *doctor) add(l docLevel, msg, fix string) {
	fmt.Fprintf(d.w, "  %-4s  %s\n", l, msg)
	if fix != "" {
		fmt.Fprintf(d.w, "        fix: %s\n", fix)
	}
	switch l {
	case docFail:
		d.problems++
	case docWarn:
		d.warnings++
	}
}

func (d *doctor) note(msg string) { fmt.Fprintf(d.w, "        %s\n", msg) }

// agentCLI is one of the agent CLIs looprinter drives.
type agentCLI struct {
	backend, program, npm string
	keys                  []string // environment variables that log it in
	files                 []string // credential files, relative to the home directory
	login                 string   // how to log in
}

var agentCLIs = []agentCLI{
	{"claude", "claude", "@anthropic-ai/claude-code",
		[]string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"},
		[]string{"$CLAUDE_CONFIG_DIR/.credentials.json", ".claude/.credentials.json"},
		"run `claude` once and log in with /login, or set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)"},
	{"codex", "codex", "@openai/codex",
		[]string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		[]string{"$CODEX_HOME/auth.json", ".codex/auth.json"},
		"run `codex login`, or set OPENAI_API_KEY"},
	{"gemini", "gemini", "@google/gemini-cli",
		[]string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"},
		[]string{".gemini/oauth_creds.json"},
		"run `gemini` once and sign in, or set GEMINI_API_KEY"},
}

func runDoctor(ctx context.Context, stdio *IO, file string, fileGiven bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	d := &doctor{w: stdio.Out}
	fmt.Fprintln(d.w, "looprinter doctor")

	// The loop file first: it says which backends matter.
	var l *spec.Loop
	var loadErr error
	path := file
	if path == "" {
		path = "loop.yaml"
	}
	_, statErr := os.Stat(spec.ExpandHome(path))
	if statErr == nil || fileGiven {
		l, loadErr = loadLoop(path)
	}
	used := map[string][]string{} // backend → phases
	if l != nil {
		for _, ph := range loopPhases(l) {
			a := l.AgentFor(ph.name, ph.post)
			used[a.Backend] = appendUnique(used[a.Backend], ph.name)
		}
	}

	d.section("Agent CLIs")
	for _, c := range agentCLIs {
		d.checkCLI(ctx, c, l, used[c.backend])
	}
	if phases, ok := used["command"]; ok && l != nil {
		d.checkCommandBackend(ctx, l, phases)
	}

	d.section("Tools")
	if p, err := exec.LookPath("git"); err != nil {
		d.add(docWarn, "git: not found on PATH", "install git (apt-get install git, brew install git): the loop's commits and diffs need it")
	} else {
		v := version(ctx, "", p)
		d.add(docOK, "git "+orUnknown(strings.TrimPrefix(v, "git version ")), "")
		if l != nil {
			if err := exec.CommandContext(ctx, p, "-C", l.Dir, "rev-parse", "--git-dir").Run(); err != nil {
				d.add(docWarn, "the loop's directory "+l.Dir+" is not in a git repository", "run `git init` there, so that every change the agent makes can be seen and undone")
			}
		}
	}

	d.section("Loop file")
	switch {
	case l == nil && loadErr == nil:
		d.add(docWarn, "no loop file at "+path+": only the CLIs were checked", "write one with `looprinter init`, or name it with -f")
	case loadErr != nil:
		var se *spec.Error
		if errors.As(loadErr, &se) {
			d.add(docFail, fmt.Sprintf("%s is invalid (%d problem%s)", se.Path, len(se.Problems), plural(len(se.Problems))), "fix each line below; `looprinter validate` shows them again")
			for _, p := range se.Problems {
				d.note(p.String())
			}
		} else {
			d.add(docFail, loadErr.Error(), "write one with `looprinter init`, or name it with -f")
		}
	default:
		d.add(docOK, fmt.Sprintf("%s is valid: shape %s, %s", relTo(mustWd(), l.Path), l.Shape, backendsSummary(used)), "")
		d.checkCommands(l)
		d.checkGates(l)
		for _, w := range l.Warnings() {
			if strings.Contains(w, "objective_verify") || strings.Contains(w, "no verify checks") {
				continue // said above, with a fix
			}
			d.add(docWarn, w, "")
		}
	}

	fmt.Fprintln(d.w)
	switch {
	case d.problems > 0:
		fmt.Fprintf(d.w, "%d problem%s: the loop cannot run until %s fixed. %d warning%s.\n", d.problems, plural(d.problems), itThey(d.problems), d.warnings, plural(d.warnings))
		return &ExitError{Code: ExitBlocked}
	case l == nil:
		fmt.Fprintf(d.w, "No problems with the CLIs; %d warning%s. Write a loop with `looprinter init`.\n", d.warnings, plural(d.warnings))
	default:
		fmt.Fprintf(d.w, "Ready: the loop can run (`looprinter run`). %d warning%s.\n", d.warnings, plural(d.warnings))
	}
	return nil
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

func (d *doctor) checkCLI(ctx context.Context, c agentCLI, l *spec.Loop, phases []string) {
	usedBy := ""
	if len(phases) > 0 {
		usedBy = " (the loop uses it for " + strings.Join(phases, ", ") + ")"
	}
	// The loop may name the program with agent.command.
	program, lead, dir := c.program, []string(nil), ""
	envPath := os.Getenv("PATH")
	var agentEnv map[string]string
	if l != nil && len(phases) > 0 {
		a := l.AgentFor(phases[0], isPost(l, phases[0]))
		agentEnv = a.Env
		if p, ok := a.Env["PATH"]; ok {
			envPath = p
		}
		if strings.TrimSpace(a.Command) != "" {
			if argv, err := shlex.Split(a.Command); err == nil && len(argv) > 0 {
				program, lead, dir = argv[0], argv[1:], l.Dir
			}
		}
	}
	path, err := findProgram(program, dir, envPath)
	if err != nil {
		level, fix := docWarn, fmt.Sprintf("npm install -g %s, if you want to use it", c.npm)
		if len(phases) > 0 {
			level = docFail
			fix = fmt.Sprintf("npm install -g %s, or set agent.command to the path of the %s program", c.npm, c.program)
			if program != c.program {
				fix = fmt.Sprintf("agent.command names %s: correct the path, or install the CLI with npm install -g %s", program, c.npm)
			}
		}
		d.add(level, fmt.Sprintf("%s: %s not found%s", c.backend, program, usedBy), fix)
		return
	}
	v := version(ctx, dir, path, append(lead, "--version")...)
	if v == "" {
		d.add(docWarn, fmt.Sprintf("%s: %s did not answer --version%s", c.backend, path, usedBy), "run `"+path+" --version` yourself: a CLI that cannot start will stop the loop BLOCKED")
	} else {
		d.add(docOK, fmt.Sprintf("%s %s: %s%s", c.backend, v, path, usedBy), "")
	}
	// Login, without a paid call.
	for _, k := range c.keys {
		if agentEnv[k] != "" {
			d.note(fmt.Sprintf("login: %s is set in the loop's agent.env", k))
			return
		}
		if os.Getenv(k) != "" {
			d.note(fmt.Sprintf("login: %s is set", k))
			return
		}
	}
	home, _ := os.UserHomeDir()
	for _, f := range c.files {
		p := f
		if strings.HasPrefix(f, "$") {
			env, rest, _ := strings.Cut(strings.TrimPrefix(f, "$"), "/")
			if os.Getenv(env) == "" {
				continue
			}
			p = filepath.Join(os.Getenv(env), rest)
		} else if home != "" {
			p = filepath.Join(home, f)
		} else {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			d.note("login: credentials found in " + p + " (not checked against the service: that would be a paid call)")
			return
		}
	}
	level := docInfo
	if len(phases) > 0 {
		level = docWarn
	}
	d.add(level, fmt.Sprintf("%s login: could not check: no API key in the environment and no credentials file (they may be in the system keychain)", c.backend),
		"if runs stop BLOCKED with an authentication error: "+c.login)
}

func (d *doctor) checkCommandBackend(ctx context.Context, l *spec.Loop, phases []string) {
	seen := map[string]bool{}
	for _, ph := range phases {
		a := l.AgentFor(ph, isPost(l, ph))
		if a.Backend != "command" || seen[a.Command] {
			continue
		}
		seen[a.Command] = true
		prog, why := checkProgram(a.Command, l.Dir)
		if why != "" {
			d.add(docFail, fmt.Sprintf("command backend (%s): %s", ph, why), "correct agent.command, or install the program")
			continue
		}
		d.add(docOK, fmt.Sprintf("command backend: %s (%s)", prog, strings.Join(phases, ", ")), "")
	}
}

func (d *doctor) checkCommands(l *spec.Loop) {
	groups := []struct {
		key  string
		cmds []string
	}{{"setup", l.Setup}, {"verify", l.Verify}, {"objective_verify", l.ObjectiveVerify}}
	for _, g := range groups {
		for _, c := range g.cmds {
			prog, why := checkProgram(c, l.Dir)
			switch {
			case why != "":
				d.add(docFail, fmt.Sprintf("%s check %q: %s", g.key, c, why), fixFor(prog, why, g.key))
			default:
				d.add(docOK, fmt.Sprintf("%s check %q: %s", g.key, c, orUnknown(prog)), "")
			}
		}
	}
}

func fixFor(prog, why, key string) string {
	if strings.Contains(why, "not executable") {
		return "chmod +x " + prog + ", or run it with sh " + prog
	}
	if strings.Contains(why, "does not exist") {
		return fmt.Sprintf("create it (and chmod +x it), or correct the path under %s: in the loop file", key)
	}
	if strings.Contains(why, "cannot be read") {
		return "quote the command so that sh can read it"
	}
	return fmt.Sprintf("install %s, or change the check under %s: in the loop file", prog, key)
}

func (d *doctor) checkGates(l *spec.Loop) {
	switch l.Shape {
	case spec.ShapeCycle:
		if len(l.ObjectiveVerify) == 0 {
			d.add(docWarn, "the objective gate is not configured: it passes through and the objective is reported NOT VERIFIED",
				"add objective_verify: commands that exit 0 only when the key objective is met (e.g. ./scripts/objective.sh)")
		} else {
			d.add(docOK, fmt.Sprintf("objective gate: %d check%s", len(l.ObjectiveVerify), plural(len(l.ObjectiveVerify))), "")
		}
		if len(l.Verify) == 0 {
			d.add(docWarn, "the cycle gate has no verify checks: only the plan and progress files are checked",
				`add verify: the project's tests, build, lint (e.g. "go test ./...")`)
		}
	case spec.ShapeRalph:
		d.add(docOK, fmt.Sprintf("verifier: %d check%s", len(l.Verify), plural(len(l.Verify))), "")
	}
}

// shell words that are not programs on PATH.
var shellBuiltins = map[string]bool{
	"test": true, "[": true, "[[": true, "cd": true, "echo": true, "printf": true, "true": true, "false": true,
	"exit": true, "export": true, "set": true, "unset": true, "source": true, ".": true, "eval": true, ":": true,
	"if": true, "for": true, "while": true, "until": true, "case": true, "!": true, "{": true, "(": true,
	"read": true, "shift": true, "trap": true, "wait": true, "type": true, "umask": true, "ulimit": true,
}

// wrappers run the program named after their own options.
var wrappers = map[string]bool{"env": true, "exec": true, "command": true, "time": true, "nice": true, "nohup": true, "timeout": true, "sudo": true}

// interpreters whose first non-option argument is a script file.
var interpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "python": true, "python3": true, "node": true, "ruby": true, "perl": true}

var assignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// checkProgram finds the program a shell command starts, and the script an
// interpreter runs. It returns the program and, when something is missing,
// why.
func checkProgram(command, dir string) (string, string) {
	words, err := shlex.Split(command)
	if err != nil {
		return "", "cannot be read: " + err.Error()
	}
	i := 0
	for i < len(words) && assignRe.MatchString(words[i]) {
		i++
	}
	for i < len(words) && wrappers[words[i]] {
		w := words[i]
		i++
		for i < len(words) && (strings.HasPrefix(words[i], "-") || assignRe.MatchString(words[i])) {
			i++
		}
		if w == "timeout" && i < len(words) {
			i++ // the duration
		}
	}
	if i >= len(words) {
		return "", ""
	}
	prog := words[i]
	if shellBuiltins[prog] || strings.ContainsAny(prog, "$`(") {
		return prog, ""
	}
	if _, err := findProgram(prog, dir, os.Getenv("PATH")); err != nil {
		if strings.Contains(prog, "/") {
			p := prog
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if st, serr := os.Stat(p); serr == nil && !st.IsDir() {
				return prog, prog + " is not executable"
			}
			return prog, prog + " does not exist (relative to " + dir + ")"
		}
		return prog, "program " + prog + " not found on PATH"
	}
	// sh script.sh: the script must be there.
	base := filepath.Base(prog)
	if interpreters[base] || interpreters[strings.TrimRight(base, "0123456789.")] {
		for _, a := range words[i+1:] {
			if a == "-c" || a == "-m" || a == "-e" {
				break
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			p := a
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if _, err := os.Stat(p); err != nil {
				return prog, fmt.Sprintf("the script %s does not exist (relative to %s)", a, dir)
			}
			break
		}
	}
	return prog, ""
}

// findProgram finds a program: a path (relative to dir) or a name on path.
func findProgram(prog, dir, path string) (string, error) {
	if strings.Contains(prog, "/") {
		p := prog
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not executable", p)
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, prog)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// version runs a program's --version (or the given arguments) with a short
// timeout and returns the first line of its output, or "".
func version(ctx context.Context, dir, path string, args ...string) string {
	if len(args) == 0 {
		args = []string{"--version"}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, path, args...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	return strings.TrimSpace(line)
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

func mustWd() string {
	wd, _ := os.Getwd()
	return wd
}
