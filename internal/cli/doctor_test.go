package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/doctor"
	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/sandbox"
)

// doctorEnv is a directory with a bin/ that is the whole PATH, a home
// directory, and no agent login in the environment.
type doctorEnv struct {
	t              *testing.T
	dir, bin, home string
}

func newDoctorEnv(t *testing.T) *doctorEnv {
	t.Helper()
	dir := t.TempDir()
	e := &doctorEnv{t: t, dir: dir, bin: filepath.Join(dir, "bin"), home: filepath.Join(dir, "home")}
	os.MkdirAll(e.bin, 0o755)
	os.MkdirAll(e.home, 0o755)
	t.Setenv("PATH", e.bin)
	t.Setenv("HOME", e.home)
	for _, c := range doctor.AgentCLIs {
		for _, k := range c.Keys {
			t.Setenv(k, "")
		}
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	return e
}

// tool puts a real program from the system on the test PATH.
func (e *doctorEnv) tool(name string) {
	e.t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		for _, d := range []string{"/usr/bin", "/bin"} {
			if _, err2 := os.Stat(filepath.Join(d, name)); err2 == nil {
				p, err = filepath.Join(d, name), nil
				break
			}
		}
	}
	if err != nil {
		e.t.Skipf("%s is not installed", name)
	}
	if err := os.Symlink(p, filepath.Join(e.bin, name)); err != nil {
		e.t.Fatal(err)
	}
}

// fakeCLI writes a stand-in agent CLI that answers --version.
func (e *doctorEnv) fakeCLI(name, version string) {
	e.t.Helper()
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '" + version + "'; exit 0; fi\necho 'a paid call!' >&2\nexit 9\n"
	if err := os.WriteFile(filepath.Join(e.bin, name), []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

func (e *doctorEnv) file(rel, data string, mode os.FileMode) {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		e.t.Fatal(err)
	}
}

func (e *doctorEnv) run(args ...string) (string, int) {
	e.t.Helper()
	var out, errb bytes.Buffer
	stdio := &IO{In: strings.NewReader(""), Out: &out, Err: &errb}
	root := NewRoot(stdio)
	root.SetArgs(append([]string{"doctor"}, args...))
	wd, _ := os.Getwd()
	os.Chdir(e.dir)
	defer os.Chdir(wd)
	code := exitCode(stdio, root.Execute())
	return out.String() + errb.String(), code
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

const healthyLoop = `objective: "go test ./... passes"
agent: {backend: claude, model: sonnet}
sandbox: "off"
setup: ["FOO=1 mytool --setup"]
verify:
  - mytool check ./...
  - test -s out.txt
objective_verify:
  - sh objective.sh
  - ./scripts/gate.sh --strict
`

func TestDoctorHealthy(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.tool("git")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")
	e.fakeCLI("mytool", "mytool 1.0")
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	e.file("loop.yaml", healthyLoop, 0o644)
	e.file("objective.sh", "exit 0\n", 0o644)
	e.file("scripts/gate.sh", "#!/bin/sh\nexit 0\n", 0o755)
	testkit.Git(t, e.dir, "init", "-q")

	out, code := e.run()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out,
		"ok    claude 2.1.328 (Claude Code): "+filepath.Join(e.bin, "claude")+" (the loop uses it for plan, replan, build)",
		"login: ANTHROPIC_API_KEY is set",
		"ok    git ",
		"loop.yaml is valid: shape cycle, backend claude",
		`ok    setup check "FOO=1 mytool --setup": mytool`,
		`ok    verify check "mytool check ./...": mytool`,
		`ok    verify check "test -s out.txt": test`,
		`ok    objective_verify check "sh objective.sh": sh`,
		`ok    objective_verify check "./scripts/gate.sh --strict": ./scripts/gate.sh`,
		"ok    objective gate: 2 checks",
		"Ready: the loop can run",
	)
	// CLIs the loop does not use are not checked at all.
	if strings.Contains(out, "FAIL") || strings.Contains(out, "a paid call") || strings.Contains(out, "codex") || strings.Contains(out, "gemini") {
		t.Errorf("unexpected:\n%s", out)
	}
}

func TestDoctorMissingCLI(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")
	e.file("loop.yaml", `objective: "go test ./... passes"
agent: {backend: claude}
agents:
  build: {backend: codex, model: gpt-5}
verify: ["sh -c true"]
objective_verify: ["sh -c true"]
`, 0o644)
	out, code := e.run()
	if code != ExitBlocked {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitBlocked, out)
	}
	mustContain(t, out,
		"FAIL  codex: codex not found (the loop uses it for build)",
		"fix: npm install -g @openai/codex@0.169.0 (the version looprinter is tested with), or set agent.command to the path of the codex program",
		"ok    claude 2.1.328 (Claude Code)",
		// No key and no credentials file: said honestly.
		"warn  claude login: could not check: no API key in the environment and no credentials file",
		"warn  git: not found on PATH",
		"1 problem: the loop cannot run until it is fixed.",
	)

	// A credentials file is evidence of a login.
	e.file("home/.claude/.credentials.json", `{"claudeAiOauth":{}}`, 0o600)
	out, _ = e.run()
	mustContain(t, out, "login: credentials found in "+filepath.Join(e.home, ".claude/.credentials.json"))

	// agent.command naming a program that is not there.
	e.file("cmd.yaml", `objective: "x passes"
agent: {backend: claude, command: ./vendor/claude}
verify: ["sh -c true"]
`, 0o644)
	out, code = e.run("-f", "cmd.yaml")
	if code != ExitBlocked {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "FAIL  claude: ./vendor/claude not found", "agent.command names ./vendor/claude")
}

func TestDoctorBrokenChecks(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")
	e.file("loop.yaml", `objective: "go test ./... passes"
verify:
  - no-such-tool-xyz --all
  - ./scripts/check.sh
  - sh missing.sh
  - env CI=1 timeout 5m also-missing run
`, 0o644)
	e.file("scripts/check.sh", "exit 0\n", 0o644) // not executable
	out, code := e.run()
	if code != ExitBlocked {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out,
		`FAIL  verify check "no-such-tool-xyz --all": program no-such-tool-xyz not found on PATH`,
		"fix: install no-such-tool-xyz, or change the check under verify: in the loop file",
		`FAIL  verify check "./scripts/check.sh": ./scripts/check.sh is not executable`,
		"fix: chmod +x ./scripts/check.sh",
		`FAIL  verify check "sh missing.sh": the script missing.sh does not exist`,
		`FAIL  verify check "env CI=1 timeout 5m also-missing run": program also-missing not found on PATH`,
		"warn  the objective gate is not configured",
		"4 problems: the loop cannot run until they are fixed.",
	)
}

func TestDoctorLoopFile(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")

	// No loop.yaml: only the CLIs are checked, and that is not a failure.
	out, code := e.run()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "warn  no loop file at loop.yaml: only the CLIs were checked", "looprinter init")

	// Named but missing: the loop cannot run.
	out, code = e.run("-f", "nope.yaml")
	if code != ExitBlocked {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "FAIL  no loop file at nope.yaml")

	// Invalid: every problem with its line.
	e.file("loop.yaml", "objective: x\nbudget:\n  iterations: many\nshape: spiral\n", 0o644)
	out, code = e.run()
	if code != ExitBlocked {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "is invalid (2 problems)", "3:15: budget.iterations", `4:8: shape: "spiral"`)
}

// A command-backend loop needs no agent CLI: doctor does not warn that
// claude, codex and gemini are missing.
func TestDoctorCommandBackendOnly(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.file("loop.yaml", "objective: \"x passes\"\nsandbox: \"off\"\nagent: {backend: command, command: ./agent.sh}\nverify: [\"sh -c true\"]\n", 0o644)
	e.file("agent.sh", "#!/bin/sh\nexit 0\n", 0o755)
	out, code := e.run()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "ok    command backend: ./agent.sh (plan, replan, build)", "backend command")
	for _, cli := range []string{"claude", "codex", "gemini"} {
		if strings.Contains(out, cli) {
			t.Errorf("doctor mentions %s for a command-backend loop:\n%s", cli, out)
		}
	}
}

// A CLI's warning on stderr is not its version: the version is the first
// line of stdout with a version number.
func TestDoctorVersionFromStdout(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	script := "#!/bin/sh\necho 'Warning: Node.js 18.2 is deprecated' >&2\necho 'Claude Code'\necho '2.1.328 (Claude Code)'\n"
	e.file("bin/claude", script, 0o755)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	e.file("loop.yaml", "objective: \"x passes\"\nsandbox: \"off\"\nverify: [\"sh -c true\"]\n", 0o644)
	out, _ := e.run()
	mustContain(t, out, "ok    claude 2.1.328 (Claude Code): ")
	if strings.Contains(out, "Warning") || strings.Contains(out, "Node.js") {
		t.Errorf("stderr shown as the version:\n%s", out)
	}

	// Nothing that looks like a version: said so, not made up.
	e.file("bin/claude", "#!/bin/sh\necho 'Claude Code'\n", 0o755)
	out, _ = e.run()
	mustContain(t, out, "warn  claude: "+filepath.Join(e.bin, "claude")+" printed no version for --version")
}

// Checks that cannot fail are warnings that name the part that makes them
// pass.
func TestDoctorVacuousChecks(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.tool("grep")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")
	e.fakeCLI("mytool", "mytool 1.0")
	e.file("loop.yaml", `objective: "x passes"
sandbox: "off"
setup: ["mytool install || true"]
verify:
  - mytool test || true
  - "true"
  - grep -q "" out.txt
  - mytool test | tail -n 5
objective_verify: ["mytool objective; exit 0"]
`, 0o644)
	out, code := e.run()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out,
		"warn  verify check \"mytool test || true\" cannot fail: `|| true` turns every failure of `mytool test` into a pass",
		"fix: a check must exit non-zero when what it checks is wrong",
		"warn  verify check \"true\" cannot fail: `true` always succeeds",
		"warn  verify check \"grep -q \\\"\\\" out.txt\" cannot fail: `grep -q \"\" out.txt` greps for the empty string",
		"warn  verify check \"mytool test | tail -n 5\" cannot fail: the pipe into `tail`",
		"warn  objective_verify check \"mytool objective; exit 0\" cannot fail: `exit 0` ends the check with status 0",
		// setup may ignore its failures.
		"ok    setup check \"mytool install || true\": mytool",
	)
}

// doctor lists the protected files with their rules, capped.
func TestDoctorProtectedFiles(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")
	e.file("loop.yaml", "objective: \"x passes\"\nsandbox: \"off\"\nverify: [\"sh check.sh\", \"go test ./...\"]\n", 0o644)
	e.file("go.mod", "module x\n", 0o644)
	e.file("check.sh", "exit 0\n", 0o644)
	for i := 0; i < 25; i++ {
		e.file(fmt.Sprintf("t%02d_test.go", i), "package x\n", 0o644)
	}
	out, _ := e.run()
	mustContain(t, out,
		"Protected files",
		"ok    28 protected files: the agent may not change them",
		"go.mod       ← go build configuration the tests run with (default rule go-test-config)",
		"check.sh     ← gate program: `sh check.sh` runs check.sh",
		"loop.yaml    ← the loop file",
		"t00_test.go  ← go test files (default rule go-tests)",
		"… and 8 more",
	)
}

// doctor shows the sandbox in force, as the sandbox package describes it.
func TestDoctorSandbox(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")
	e.file("loop.yaml", "objective: \"x passes\"\nverify: [\"sh -c true\"]\n", 0o644)
	out, _ := e.run()
	mustContain(t, out, "\nSandbox\n")
	if _, err := sandbox.Resolve("auto"); err != nil {
		mustContain(t, out, "FAIL  "+err.Error())
	} else {
		kind, _ := sandbox.Resolve("auto")
		for _, line := range append(sandbox.Describe("auto"), sandbox.Guarantees(kind)...) {
			mustContain(t, out, line)
		}
	}
	e.file("loop.yaml", "objective: \"x passes\"\nsandbox: \"off\"\nverify: [\"sh -c true\"]\n", 0o644)
	out, _ = e.run()
	mustContain(t, out, "warn  off: in force", "fix: remove `sandbox: off`")
}

// The fallback agents (agent.fallback) are checked as the main agent is:
// found, version, login; one that is missing is a warning (the loop runs, but
// cannot fail over to it), never silence.
func TestDoctorFallbackCLIs(t *testing.T) {
	e := newDoctorEnv(t)
	e.tool("sh")
	e.tool("git")
	e.fakeCLI("claude", "2.1.328 (Claude Code)")
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	e.file("loop.yaml", `objective: "go test ./... passes"
agent:
  backend: claude
  fallback:
    - {backend: codex, model: gpt-5}
    - {backend: gemini, command: ./vendor/gemini}
    - {backend: command, command: ./fallback-agent.sh}
sandbox: "off"
verify: ["sh -c false"]
objective_verify: ["sh -c false"]
`, 0o644)
	out, code := e.run()
	if code != 0 {
		t.Fatalf("exit %d: a missing fallback must not block the loop:\n%s", code, out)
	}
	mustContain(t, out,
		"ok    claude 2.1.328 (Claude Code): "+filepath.Join(e.bin, "claude")+" (the loop uses it for plan, replan, build)",
		"warn  codex: codex not found (a fallback for plan, replan, build)",
		"fix: npm install -g @openai/codex@0.169.0 (the version looprinter is tested with), or correct the fallback's command: until then the loop cannot fail over to codex",
		// The fallback's own command is the program looked for.
		"warn  gemini: ./vendor/gemini not found (a fallback for plan, replan, build)",
		"warn  command backend (a fallback for plan): ./fallback-agent.sh does not exist",
		"Ready: the loop can run",
	)

	// Installed, the fallbacks are checked like the main agent: version and
	// login.
	e.fakeCLI("codex", "codex-cli 0.169.0")
	e.file("vendor/gemini", "#!/bin/sh\necho 0.61.0\n", 0o755)
	e.file("fallback-agent.sh", "#!/bin/sh\n", 0o755)
	out, code = e.run()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out,
		"ok    codex codex-cli 0.169.0: "+filepath.Join(e.bin, "codex")+" (a fallback for plan, replan, build)",
		"warn  codex login: could not check",
		"ok    gemini 0.61.0: "+filepath.Join(e.dir, "vendor/gemini")+" (a fallback for plan, replan, build)",
		"warn  gemini login: could not check",
		"ok    command backend: ./fallback-agent.sh (a fallback for plan, replan, build)",
	)
	if strings.Contains(out, "a paid call") {
		t.Errorf("doctor ran a CLI beyond --version:\n%s", out)
	}

	// A CLI that is both an agent and a fallback says so; a missing main
	// agent still blocks.
	e.file("both.yaml", `objective: "x passes"
agent: {backend: claude, fallback: [{backend: codex}]}
agents:
  build: {backend: codex, fallback: [{backend: claude}]}
sandbox: "off"
verify: ["sh -c false"]
`, 0o644)
	os.Remove(filepath.Join(e.bin, "codex"))
	out, code = e.run("-f", "both.yaml")
	if code != ExitBlocked {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitBlocked, out)
	}
	mustContain(t, out,
		"FAIL  codex: codex not found (the loop uses it for build; a fallback for plan, replan)",
		"(the loop uses it for plan, replan; a fallback for build)",
	)
}
