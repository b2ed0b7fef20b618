package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The recipe in CONTRIBUTING.md ("Adding an agent backend") says a backend
// is one file under agent/ plus its tests. This file is such a backend,
// "fakecli", declared and registered the way claude.go declares claude; no
// other file knows it, and the tests below find it wherever the built-in
// ones are read: the names, doctor's list of CLIs and their logins, the
// install hint, the review's other model, the adapter, the usage limit.

func init() { RegisterBackend(fakeBackend) }

var fakeBackend = Backend{
	Name: "fakecli", Label: "fakecli (a test CLI)",
	New:     func() Adapter { return fakeAdapter{} },
	Program: "fakecli", NPMPackage: "@example/fakecli", Version: "1.2.3",
	Login: Login{
		Env:   []string{"FAKECLI_API_KEY"},
		Files: []string{"$FAKECLI_HOME/auth.json", ".fakecli/auth.json"},
		Hint:  "run `fakecli login`, or set FAKECLI_API_KEY",
	},
	HomePaths:  []string{".fakecli"},
	HomeEnv:    []string{"FAKECLI_HOME"},
	Families:   []ModelFamily{{Match: "large", Model: "fake-large"}, {Match: "medium", Model: "fake-medium"}, {Match: "small", Model: "fake-small"}},
	LimitReset: retryAfterIn,
}

// fakeAdapter runs `fakecli --json` with the prompt on standard input; the
// program prints its final message, or "error: TEXT" for an API error.
type fakeAdapter struct{}

func (fakeAdapter) Name() string { return "fakecli" }

func (fakeAdapter) Invocation(req Request) (Invocation, error) {
	path, lead, err := resolveProgram(fakeBackend, req)
	if err != nil {
		return Invocation{}, err
	}
	return Invocation{Path: path, Args: append(lead, "--json"), Env: ChildEnv(req), Stdin: req.Prompt}, nil
}

func (fakeAdapter) NewParser(req Request) Parser { return &fakeParser{prompt: req.Prompt} }

type fakeParser struct{ prompt, last, apiErr string }

func (p *fakeParser) Line(line []byte) []ToolEvent {
	if msg, ok := strings.CutPrefix(string(line), "error: "); ok {
		p.apiErr = msg
	} else if strings.TrimSpace(string(line)) != "" {
		p.last = string(line)
	}
	return nil
}

func (p *fakeParser) Finish(exit Exit) Result {
	res := Result{ExitCode: exit.Code, FinalMessage: p.last}
	switch {
	case exit.StartErr != nil:
		startFailure(&res, exit)
	case p.apiErr != "":
		classifyAPIErrorWith(&res, httpStatusIn(p.apiErr), p.apiErr, fakeBackend.Login.Hint, fakeBackend.LimitReset)
		res.Error = "fakecli: " + p.apiErr
	case exit.Code == 0:
		res.Status = StatusOK
		finishSignals(&res, p.prompt)
	default:
		res.Status = StatusFailed
	}
	return res
}

// The built-in backends keep today's order, and a new CLI backend joins the
// CLIs by name, ahead of command.
func TestFakeBackendIsListed(t *testing.T) {
	want := []string{"claude", "codex", "fakecli", "gemini", "command"}
	var got []string
	for _, n := range Names() {
		if slices.Contains(want, n) { // other tests register more
			got = append(got, n)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("names %v", got)
	}
	if b, ok := Find("fakecli"); !ok || b.Label != "fakecli (a test CLI)" || !slices.Equal(b.VersionArgs, []string{"--version"}) {
		t.Errorf("declaration %+v %v: the label, and --version by default", b, ok)
	}
	if got := Backends(); !slices.Contains(got, "fakecli") || !slices.IsSorted(got) {
		t.Errorf("Backends() %v", got)
	}
}

// What doctor reads: the CLIs to check, each one's login and install.
func TestFakeBackendForDoctor(t *testing.T) {
	var found *Backend
	for _, b := range CLIs() {
		if b.Name == "fakecli" {
			found = &b
		}
		if b.Name == "command" {
			t.Error("command runs no CLI of its own: doctor does not check it")
		}
	}
	if found == nil {
		t.Fatal("doctor's list of CLIs lacks fakecli")
	}
	if !slices.Equal(found.Login.Env, []string{"FAKECLI_API_KEY"}) || found.Login.Files[1] != ".fakecli/auth.json" || found.HomeEnv[0] != "FAKECLI_HOME" {
		t.Errorf("login and folders %+v", found)
	}
	if c, ok := CLIFor("fakecli"); !ok || c.NPMPackage != "@example/fakecli" || c.Version != "1.2.3" || c.Program != "fakecli" {
		t.Errorf("CLIFor: %+v %v", c, ok)
	}
	// Not installed: the run is blocked with the pinned install hint.
	ad, err := Lookup("fakecli")
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Dir: t.TempDir(), Env: map[string]string{"PATH": t.TempDir()}}
	_, err = ad.Invocation(req)
	res := ad.NewParser(req).Finish(Exit{StartErr: err})
	if res.Status != StatusBlocked || !strings.Contains(res.Fix, "npm install -g @example/fakecli@1.2.3") {
		t.Errorf("not installed: %+v", res)
	}
}

// The review's other model walks the declared families.
func TestFakeBackendOtherModel(t *testing.T) {
	for model, want := range map[string]string{"": "fake-large", "Fake-Large-2": "fake-medium", "fake-medium": "fake-small", "fake-small": "fake-large", "other": "fake-large"} {
		if got := OtherModel("fakecli", model); got != want {
			t.Errorf("OtherModel(fakecli, %q) = %q, want %q", model, got, want)
		}
	}
}

// The adapter runs through the runner like any other, and its usage limit
// waits as long as the CLI says.
func TestFakeBackendRuns(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = --json ] || exit 9\ncat >/dev/null\n" +
		"if [ -n \"$FAKECLI_LIMIT\" ]; then echo 'error: 429 usage limit reached, try again in 2h'; exit 1; fi\n" +
		"echo '<promise>DONE</promise>'\n"
	if err := os.WriteFile(filepath.Join(bin, "fakecli"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env map[string]string) Result {
		dir := t.TempDir()
		env["PATH"] = bin + string(os.PathListSeparator) + os.Getenv("PATH")
		req := Request{Phase: "build", Dir: dir, Prompt: "go\n", Backend: "fakecli", Env: env,
			Transcript: filepath.Join(dir, "t.log"), Timeout: 20 * time.Second, Grace: 200 * time.Millisecond}
		ad, err := Lookup(req.Backend)
		if err != nil {
			t.Fatal(err)
		}
		return Run(context.Background(), req, ad, nil)
	}
	if r := run(map[string]string{}); r.Status != StatusOK || r.Promise != "DONE" {
		t.Errorf("run: %+v", r)
	}
	if r := run(map[string]string{"FAKECLI_LIMIT": "1"}); r.Status != StatusRateLimited || r.RetryAfter != 2*time.Hour {
		t.Errorf("usage limit: status %s, retry after %s", r.Status, r.RetryAfter)
	}
}
