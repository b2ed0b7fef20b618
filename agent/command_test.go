package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func feedCommand(prompt, out string, exit Exit) Result {
	p := commandAdapter{}.NewParser(Request{Prompt: prompt})
	for _, l := range strings.Split(out, "\n") {
		p.Line([]byte(l))
	}
	return p.Finish(exit)
}

// Signals are read from the final message only: the last CommandSignalLines
// non-empty lines of output.
func TestCommandSignalsOnlyFromTheLastLines(t *testing.T) {
	mid := "starting\n<promise>DONE</promise> not yet\nstep 1\nstep 2\nstep 3\nstep 4\n"
	if r := feedCommand("", mid, Exit{}); r.Promise != "" {
		t.Errorf("a promise in the middle of the output counted: %q", r.Promise)
	}
	if r := feedCommand("", "working\n<blocked>need a key</blocked>\na\nb\nc\n", Exit{}); r.Blocked != "" || r.Status != StatusOK {
		t.Errorf("a blocked tag in the middle of the output counted: %+v", r)
	}
	end := "working\nall done\n<promise>DONE</promise>\n\n\n"
	if r := feedCommand("", end, Exit{}); r.Promise != "DONE" {
		t.Errorf("the final promise was missed: %+v", r)
	}
	// ::looprinter lines are not part of the final message.
	end2 := "working\n<promise>DONE</promise>\n::looprinter cost_usd=0.1\n::looprinter turns=1\n::looprinter turns=1\n::looprinter turns=1\n"
	if r := feedCommand("", end2, Exit{}); r.Promise != "DONE" || r.Turns != 3 {
		t.Errorf("usage lines pushed the promise out: %+v", r)
	}
	three := "x\n<promise>A</promise>\ny\nz\n"
	if r := feedCommand("", three, Exit{}); r.Promise != "A" {
		t.Errorf("third-last non-empty line not read: %+v", r)
	}
	if r := feedCommand("", "<blocked>no credentials</blocked>\n", Exit{}); r.Status != StatusBlocked || r.Blocked != "no credentials" {
		t.Errorf("blocked: %+v", r)
	}
}

func TestCommandReportsRateLimitAndAPIError(t *testing.T) {
	r := feedCommand("", "calling the model\n::looprinter rate_limited retry_after=45 quota reset at noon\n", Exit{Code: 1})
	if r.Status != StatusRateLimited || r.RetryAfter != 45*time.Second || r.Error != "quota reset at noon" {
		t.Errorf("rate limit: %+v", r)
	}
	r = feedCommand("", "::looprinter rate_limited retry_after=2m\n", Exit{Code: 0})
	if r.Status != StatusRateLimited || r.RetryAfter != 2*time.Minute {
		t.Errorf("rate limit with a duration: %+v", r)
	}
	r = feedCommand("", "::looprinter api_error\n", Exit{Code: 3})
	if r.Status != StatusAPIError {
		t.Errorf("api error: %+v", r)
	}
	r = feedCommand("", "::looprinter cost_usd=NaN input_tokens=-5 turns=2\n", Exit{})
	if r.CostUSD != 0 || r.InputTokens != 0 || r.Turns != 2 || r.Status != StatusOK {
		t.Errorf("bad usage values: %+v", r)
	}
	r = feedCommand("", "oops\n", Exit{Code: 2, StderrTail: "boom\n"})
	if r.Status != StatusFailed || !strings.Contains(r.Error, "code 2: boom") {
		t.Errorf("non-zero exit: %+v", r)
	}
}

// A relative agent.command is found in the loop's folder (Request.Dir),
// wherever looprinter was started from.
func TestCommandRelativeToTheLoopFolder(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "bin", "agent.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for _, c := range []string{"./bin/agent.sh", "bin/agent.sh --flag"} {
		inv, err := commandAdapter{}.Invocation(Request{Dir: dir, Command: c})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if inv.Path != filepath.Join(dir, "bin", "agent.sh") {
			t.Errorf("%s resolved to %s", c, inv.Path)
		}
	}
	if _, err := (claudeAdapter{}).Invocation(Request{Dir: dir, Command: "./bin/agent.sh"}); err != nil {
		t.Errorf("a CLI's relative agent.command: %v", err)
	}
}

// A model API whose host name does not resolve is BLOCKED at once, with a
// fix about the network and the endpoint, never retried as transient.
func TestDNSFailureIsBlocked(t *testing.T) {
	for _, text := range []string{
		"API Error: Unable to connect to API (ENOTFOUND) getaddrinfo ENOTFOUND api.anthropc.com",
		"getaddrinfo EAI_AGAIN generativelanguage.googleapis.com",
		"error sending request for url (https://api.openai.example/v1/responses): dns error: failed to lookup address information",
	} {
		var r Result
		classifyAPIError(&r, 0, text, "auth")
		if r.Status != StatusBlocked || !strings.Contains(r.Fix, "DNS") {
			t.Errorf("%q: %+v", text, r)
		}
	}
	var r Result
	classifyAPIError(&r, 0, "API Error: Connection refused (ECONNREFUSED)", "auth")
	if r.Status != StatusAPIError {
		t.Errorf("connection refused stays transient: %+v", r)
	}
}

// `looprinter …` as agent.command (the demo's agent) is this very program
// when no looprinter is on PATH: the demo folder runs again after `go run`.
func TestCommandLooprinterFallsBackToSelf(t *testing.T) {
	inv, err := commandAdapter{}.Invocation(Request{Dir: t.TempDir(), Command: "looprinter fake-agent --script a.txt",
		Env: map[string]string{"PATH": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	if inv.Path != self || strings.Join(inv.Args, " ") != "fake-agent --script a.txt" {
		t.Errorf("%s %v", inv.Path, inv.Args)
	}
	if _, err := (commandAdapter{}).Invocation(Request{Dir: t.TempDir(), Command: "no-such-agent-xyz", Env: map[string]string{"PATH": t.TempDir()}}); err == nil {
		t.Error("a missing program was found")
	}
}
