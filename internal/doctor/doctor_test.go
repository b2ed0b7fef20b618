package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/sandbox"
)

func find(r *Report, level, area, text string) *Finding {
	for i, f := range r.Findings {
		if f.Level == level && f.Area == area && strings.Contains(f.Message, text) {
			return &r.Findings[i]
		}
	}
	return nil
}

// Run returns findings as data: levels, areas, messages and fixes.
func TestRunFindings(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", "/usr/bin:/bin")
	testkit.WriteFileMode(t, filepath.Join(dir, "loop.yaml"), `objective: "x passes"
sandbox: "off"
agent: {backend: command, command: ./agent.sh}
verify: ["sh check.sh || true", "./missing.sh"]
objective_verify: ["sh check.sh"]
`, 0o644)
	testkit.WriteFileMode(t, filepath.Join(dir, "agent.sh"), "#!/bin/sh\n", 0o755)
	testkit.WriteFileMode(t, filepath.Join(dir, "check.sh"), "exit 0\n", 0o644)
	r := Run(context.Background(), Options{File: filepath.Join(dir, "loop.yaml"), Wd: dir})
	if r.Loop == nil || !r.Blocked || r.Problems != 1 {
		t.Fatalf("loop %v blocked %v problems %d: %+v", r.Loop != nil, r.Blocked, r.Problems, r.Findings)
	}
	for _, f := range r.Findings {
		if f.Area == AreaCLIs && !strings.Contains(f.Message, "command backend") {
			t.Errorf("a CLI the loop does not use: %+v", f)
		}
	}
	if f := find(r, Warn, AreaLoop, `verify check "sh check.sh || true" cannot fail`); f == nil || f.Fix == "" {
		t.Errorf("vacuous check: %+v", f)
	}
	if f := find(r, Fail, AreaLoop, `verify check "./missing.sh": ./missing.sh does not exist`); f == nil || !strings.Contains(f.Fix, "create it") {
		t.Errorf("missing program: %+v", f)
	}
	f := find(r, OK, AreaProtected, "2 protected files")
	if f == nil || len(f.Notes) != 2 || !strings.Contains(f.Notes[0], "check.sh   ← gate program: `sh check.sh` runs check.sh") {
		t.Errorf("protected: %+v", f)
	}
	if find(r, Warn, AreaSandbox, "off: in force") == nil {
		t.Errorf("sandbox: %+v", r.Findings)
	}
	if !strings.HasPrefix(r.Summary, "1 problem: the loop cannot run") {
		t.Error(r.Summary)
	}
}

// A folder whose protected files cannot be listed blocks the loop.
func TestRunProtectedUnlistable(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFileMode(t, filepath.Join(dir, "loop.yaml"), "objective: x\nsandbox: \"off\"\nagent: {backend: command, command: ./a}\nverify: [\"sh 'x\"]\n", 0o644)
	testkit.WriteFileMode(t, filepath.Join(dir, "a"), "#!/bin/sh\n", 0o755)
	r := Run(context.Background(), Options{File: filepath.Join(dir, "loop.yaml")})
	if f := find(r, Fail, AreaProtected, "verify[0]"); f == nil || !r.Blocked {
		t.Errorf("%+v", r.Findings)
	}
}

func TestCannotRunAndVacuous(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFileMode(t, filepath.Join(dir, "x.sh"), "exit 0\n", 0o644)
	if why, fix, ok := CannotRun("./x.sh", dir, "verify"); !ok || why != "./x.sh is not executable" || !strings.HasPrefix(fix, "chmod +x ./x.sh") {
		t.Errorf("%q %q %v", why, fix, ok)
	}
	if why, fix, ok := CannotRun("no-such-program-xyz --all", dir, "objective_verify"); !ok || !strings.Contains(why, "not found on PATH") || !strings.Contains(fix, "objective_verify:") {
		t.Errorf("%q %q %v", why, fix, ok)
	}
	if _, _, ok := CannotRun("sh x.sh", dir, "verify"); ok {
		t.Error("sh x.sh cannot run")
	}
	if why, ok := VacuousCheck("make test; exit 0"); !ok || !strings.Contains(why, "`exit 0`") {
		t.Errorf("%q %v", why, ok)
	}
}

// cliEnv is a PATH of one folder with no agent login in the environment.
func cliEnv(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	t.Setenv("HOME", t.TempDir())
	for _, c := range AgentCLIs {
		for _, k := range c.Keys {
			t.Setenv(k, "")
		}
	}
	return bin
}

func cliNamed(t *testing.T, backend string) AgentCLI {
	t.Helper()
	for _, c := range AgentCLIs {
		if c.Backend == backend {
			if c.Version == "" || c.NPM == "" {
				t.Fatalf("%s declares no package or version: %+v", backend, c)
			}
			return c
		}
	}
	t.Fatalf("no CLI %s", backend)
	return AgentCLI{}
}

// A missing CLI's install hint pins the version looprinter is tested with,
// whether the loop uses it, only falls back to it, or not at all.
func TestInstallHintPinsTestedVersion(t *testing.T) {
	cliEnv(t)
	c := cliNamed(t, "claude")
	pinned := "npm install -g " + c.NPM + "@" + c.Version
	for _, tc := range []struct {
		name              string
		phases, fallbacks []string
		level             string
	}{
		{"used", []string{"build"}, nil, Fail},
		{"fallback", nil, []string{"build"}, Warn},
		{"unused", nil, nil, Warn},
	} {
		fs := checkCLI(context.Background(), c, nil, tc.phases, tc.fallbacks)
		if len(fs) != 1 || fs[0].Level != tc.level || !strings.Contains(fs[0].Message, "not found") {
			t.Fatalf("%s: %+v", tc.name, fs)
		}
		if !strings.Contains(fs[0].Fix, pinned+" (the version looprinter is tested with)") {
			t.Errorf("%s: the hint does not pin %s: %q", tc.name, c.Version, fs[0].Fix)
		}
	}
}

// A CLI at another version than the tested one is pointed at the tested
// version; at the tested version it is simply ok.
func TestOtherVersionHintPinsTestedVersion(t *testing.T) {
	bin := cliEnv(t)
	c := cliNamed(t, "codex")
	testkit.WriteFileMode(t, filepath.Join(bin, c.Program), "#!/bin/sh\necho 'codex-cli 0.1.2'\n", 0o755)
	fs := checkCLI(context.Background(), c, nil, []string{"build"}, nil)
	if len(fs) == 0 || fs[0].Level != Warn || !strings.Contains(fs[0].Message, "codex-cli 0.1.2") ||
		!strings.Contains(fs[0].Message, "older than the codex "+c.Version+" looprinter is tested with") {
		t.Fatalf("an older version: %+v", fs)
	}
	if !strings.HasPrefix(fs[0].Fix, "npm install -g "+c.NPM+"@"+c.Version+" to update it to the tested version") {
		t.Errorf("fix: %q", fs[0].Fix)
	}
	testkit.WriteFileMode(t, filepath.Join(bin, c.Program), "#!/bin/sh\necho 'codex-cli 999.0.0'\n", 0o755)
	fs = checkCLI(context.Background(), c, nil, []string{"build"}, nil)
	if fs[0].Level != Warn || !strings.Contains(fs[0].Message, "newer than the codex "+c.Version) ||
		!strings.HasPrefix(fs[0].Fix, "npm install -g "+c.NPM+"@"+c.Version+" to run the tested version") {
		t.Errorf("a newer version: %+v", fs[0])
	}
	testkit.WriteFileMode(t, filepath.Join(bin, c.Program), "#!/bin/sh\necho 'codex-cli 0.1.2'\n", 0o755)
	// Not used by the loop: only information.
	if fs := checkCLI(context.Background(), c, nil, nil, nil); fs[0].Level != Info || fs[0].Fix == "" {
		t.Errorf("unused, another version: %+v", fs[0])
	}
	testkit.WriteFileMode(t, filepath.Join(bin, c.Program), "#!/bin/sh\necho 'codex-cli "+c.Version+"'\n", 0o755)
	fs = checkCLI(context.Background(), c, nil, []string{"build"}, nil)
	if fs[0].Level != OK || fs[0].Fix != "" || strings.Contains(fs[0].Message, "tested with") {
		t.Errorf("the tested version: %+v", fs[0])
	}
}

// A check whose runner cannot start is a problem with what to install:
// python3 -m pytest where python3 has no pytest (a fake python3 that fails
// every import of pytest), npm run with a script package.json lacks. The
// probe never runs the project's files: neither a pytest.py planted in the
// loop's folder (it is imported only from there) nor an interpreter inside
// it (an agent could write either).
func TestRunnerCannotStart(t *testing.T) {
	dir := t.TempDir()
	bin := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	testkit.WriteFileMode(t, filepath.Join(bin, "python3"), "#!/bin/sh\n[ -f pytest.py ] && touch "+marker+"\nexit 1\n", 0o755)
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	testkit.WriteFileMode(t, filepath.Join(dir, "loop.yaml"), `objective: "x passes"
sandbox: "off"
agent: {backend: command, command: ./agent.sh}
verify: ["python3 -m pytest -q", "npm run unit", ".venv/bin/python -m pytest"]
`, 0o644)
	testkit.WriteFileMode(t, filepath.Join(dir, "agent.sh"), "#!/bin/sh\n", 0o755)
	testkit.WriteFileMode(t, filepath.Join(dir, "package.json"), `{"scripts":{"test":"mocha"}}`, 0o644)
	testkit.WriteFileMode(t, filepath.Join(dir, "pytest.py"), "open('"+marker+"', 'w')\n", 0o644)
	testkit.WriteFileMode(t, filepath.Join(dir, ".venv/bin/python"), "#!/bin/sh\ntouch "+marker+"\nexit 1\n", 0o755)
	r := Run(context.Background(), Options{File: filepath.Join(dir, "loop.yaml"), FileGiven: true})
	if f := find(r, Fail, AreaLoop, `"python3 -m pytest -q": python3 cannot import pytest`); f == nil || !strings.Contains(f.Fix, "pip install pytest") {
		t.Errorf("pytest: %+v", r.Findings)
	}
	if f := find(r, Fail, AreaLoop, `"npm run unit": package.json has no "unit" script`); f == nil {
		t.Errorf("npm: %+v", r.Findings)
	}
	if find(r, Fail, AreaLoop, ".venv/bin/python") != nil || !r.Blocked {
		t.Errorf("venv: %+v", r.Findings)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("doctor ran a file of the loop's folder")
	}
}

// What the checks' own sandbox gives and gives up is listed, and
// `checks.network: host` is a warning that says what it exposes.
func TestCheckFindings(t *testing.T) {
	has := func(fs []Finding, level, part string) bool {
		for _, f := range fs {
			if f.Level == level && strings.Contains(f.Message, part) {
				return true
			}
		}
		return false
	}
	off := checkFindings(sandbox.Off, "none")
	if !has(off, Warn, "checks: not guaranteed: checks run unconfined") {
		t.Errorf("off: %+v", off)
	}
	host := checkFindings(sandbox.Bwrap, "host")
	if !has(host, Warn, "checks.network is host") || !has(host, Info, "checks: guaranteed:") {
		t.Errorf("bwrap, host: %+v", host)
	}
	ll := checkFindings(sandbox.Landlock, "none")
	if !has(ll, Info, "no PID namespace") || !has(ll, Info, "the tree is read-only") {
		t.Errorf("landlock: %+v", ll)
	}
	if has(checkFindings(sandbox.Bwrap, "none"), Warn, "checks.network") {
		t.Error("a warning about the network without host")
	}
}
