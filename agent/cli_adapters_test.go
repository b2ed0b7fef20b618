package agent

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The streams in testdata/streams were recorded from the genuine CLIs
// (Claude Code 2.1.328, Codex 0.169.0, Gemini CLI 0.61.0) run against the
// fake API with scripted replies; stdout and the tail of stderr as the
// runner keeps them.
func replay(t *testing.T, backend, name string, exit Exit, req Request) (Result, []ToolEvent) {
	t.Helper()
	ad, err := Lookup(backend)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join("testdata", "streams", backend+"-"+name+".stdout"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "streams", backend+"-"+name+".stderr")); err == nil && exit.StderrTail == "" {
		exit.StderrTail = string(b)
	}
	p := ad.NewParser(req)
	var evs []ToolEvent
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, MaxLine), MaxLine)
	for sc.Scan() {
		evs = append(evs, p.Line(sc.Bytes())...)
	}
	return p.Finish(exit), evs
}

// The recorded "ok" replies put the promise after prose on the same line
// ("Wrote it. <promise>DONE</promise>"): a promise counts only alone on its
// line, so none of them promises anything (TestSignals; the end-to-end
// tests see a promise on a line of its own through each genuine CLI).
func TestRecordedStreams(t *testing.T) {
	cases := []struct {
		backend, name string
		exit          int
		killed        Status
		want          Status
		retry         bool   // RetryAfter > 0
		fix           string // substring of Fix
		check         func(t *testing.T, r Result, evs []ToolEvent)
	}{
		{backend: "claude", name: "ok", want: StatusOK, check: func(t *testing.T, r Result, evs []ToolEvent) {
			if r.Promise != "" || r.Turns != 2 || r.SessionID == "" || r.CostUSD != 0.00522 ||
				r.InputTokens != 2400 || r.CachedTokens != 200 || r.OutputTokens != 80 || r.CostEstimated {
				t.Errorf("%+v", r)
			}
			if len(evs) != 1 || evs[0].Tool != "Write" || !strings.HasSuffix(evs[0].Summary, "hello.txt") {
				t.Errorf("tool events %+v", evs)
			}
		}},
		{backend: "claude", name: "turns", exit: 1, want: StatusCapped},
		{backend: "claude", name: "budget", exit: 1, want: StatusCapped, check: func(t *testing.T, r Result, _ []ToolEvent) {
			if r.CostUSD != 2 || r.InputTokens != 500000 || r.OutputTokens != 100000 {
				t.Errorf("a budget stop keeps the usage from modelUsage: %+v", r)
			}
		}},
		{backend: "claude", name: "e401", exit: 1, want: StatusBlocked, fix: "ANTHROPIC_API_KEY"},
		{backend: "claude", name: "e403", exit: 1, want: StatusBlocked, fix: "ANTHROPIC_API_KEY"},
		{backend: "claude", name: "nokey", exit: 1, want: StatusBlocked, fix: "/login"},
		{backend: "claude", name: "e404b", exit: 1, want: StatusBlocked, fix: "agent.model"},
		{backend: "claude", name: "e429", exit: 1, want: StatusRateLimited},
		{backend: "claude", name: "e529", exit: 1, want: StatusRateLimited},
		{backend: "claude", name: "e500", exit: 1, want: StatusAPIError},
		{backend: "claude", name: "e400b", exit: 1, want: StatusAPIError}, // its retries ended on a 500
		{backend: "claude", name: "down", exit: 1, want: StatusAPIError},
		{backend: "claude", name: "badflag", exit: 1, want: StatusBlocked, fix: "agent.args"},

		{backend: "codex", name: "ok", want: StatusOK, check: func(t *testing.T, r Result, evs []ToolEvent) {
			if r.Promise != "" || r.Turns != 3 || r.SessionID == "" || r.InputTokens != 3300 ||
				r.CachedTokens != 500 || r.OutputTokens != 130 || !r.CostEstimated || r.CostUSD <= 0 {
				t.Errorf("%+v", r)
			}
			if len(evs) != 2 || evs[0].Tool != "exec_command" || evs[0].Summary != "echo hi > a.txt && cat a.txt" ||
				evs[1].Tool != "apply_patch" || !strings.Contains(evs[1].Summary, "add ") {
				t.Errorf("tool events %+v", evs)
			}
			if strings.Join(r.Tools, ",") != "exec_command,apply_patch" {
				t.Errorf("tools %v", r.Tools)
			}
		}},
		{backend: "codex", name: "e401", exit: 1, want: StatusBlocked, fix: "OPENAI_API_KEY"},
		{backend: "codex", name: "e404", exit: 1, want: StatusBlocked, fix: "agent.model"},
		{backend: "codex", name: "e429", exit: 1, want: StatusRateLimited},
		{backend: "codex", name: "e429u", exit: 1, want: StatusRateLimited, retry: true},
		{backend: "codex", name: "e429q", exit: 1, want: StatusBlocked, fix: "quota"},
		{backend: "codex", name: "e500", exit: 1, want: StatusAPIError},
		{backend: "codex", name: "nokey", exit: 1, want: StatusBlocked, fix: "LOOPRINTER_CODEX_API_KEY_ENV"},
		{backend: "codex", name: "badflag", exit: 2, want: StatusBlocked, fix: "agent.args"},
		{backend: "codex", name: "e400", exit: 1, want: StatusFailed},
		{backend: "codex", name: "down", exit: -1, killed: StatusIdle, want: StatusIdle, check: func(t *testing.T, r Result, _ []ToolEvent) {
			if !strings.Contains(r.Error, "waiting for network") {
				t.Errorf("error %q should carry the CLI's last error", r.Error)
			}
		}},

		{backend: "gemini", name: "ok", want: StatusOK, check: func(t *testing.T, r Result, evs []ToolEvent) {
			if r.Promise != "" || r.Turns != 3 || r.SessionID == "" || r.InputTokens != 3300 ||
				r.CachedTokens != 500 || r.OutputTokens != 130 || !r.CostEstimated || r.CostUSD <= 0 ||
				r.FinalMessage != "All done. <promise>DONE</promise>" {
				t.Errorf("%+v", r)
			}
			if len(evs) != 2 || evs[0].Tool != "run_shell_command" || evs[1].Tool != "write_file" || evs[1].Summary != "b.txt" {
				t.Errorf("tool events %+v", evs)
			}
		}},
		{backend: "gemini", name: "e401", exit: 145, want: StatusBlocked, fix: "GEMINI_API_KEY"},
		{backend: "gemini", name: "e400", exit: 144, want: StatusBlocked, fix: "GEMINI_API_KEY"}, // Google's invalid key is a 400
		{backend: "gemini", name: "e404", exit: 1, want: StatusBlocked, fix: "agent.model"},
		{backend: "gemini", name: "e429", exit: 173, want: StatusRateLimited, check: func(t *testing.T, r Result, _ []ToolEvent) {
			if r.RetryAfter != 30*time.Second {
				t.Errorf("retry after %s, want 30s", r.RetryAfter)
			}
		}},
		{backend: "gemini", name: "e500", exit: 244, want: StatusAPIError},
		{backend: "gemini", name: "down", exit: 1, want: StatusAPIError},
		{backend: "gemini", name: "turns", exit: 53, want: StatusCapped},
		{backend: "gemini", name: "badflag", exit: 1, want: StatusBlocked, fix: "agent.args"},
		{backend: "gemini", name: "noauth", exit: 41, want: StatusBlocked, fix: "selectedType"},
	}
	for _, c := range cases {
		t.Run(c.backend+"-"+c.name, func(t *testing.T) {
			r, evs := replay(t, c.backend, c.name, Exit{Code: c.exit, Killed: c.killed}, Request{Prompt: "do the thing"})
			if r.Status != c.want {
				t.Errorf("status %s, want %s (error %q)", r.Status, c.want, r.Error)
			}
			if r.ExitCode != c.exit {
				t.Errorf("exit code %d", r.ExitCode)
			}
			if c.want != StatusOK && r.Error == "" {
				t.Errorf("no error text for a %s run", r.Status)
			}
			if c.fix != "" && !strings.Contains(r.Fix, c.fix) {
				t.Errorf("fix %q, want it to mention %q", r.Fix, c.fix)
			}
			if c.retry && r.RetryAfter <= 0 {
				t.Errorf("no retry time")
			}
			if c.check != nil {
				c.check(t, r, evs)
			}
		})
	}
}

// A stream that ends without a result is a failure, never a success, even
// when the CLI exits 0 and the last message carried the promise.
func TestNoResultLineIsFailure(t *testing.T) {
	streams := map[string]string{
		"claude": `{"type":"system","subtype":"init","session_id":"s1"}
{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"<promise>DONE</promise>"}],"usage":{"input_tokens":5}},"parent_tool_use_id":null,"session_id":"s1"}`,
		"codex": `{"type":"thread.started","thread_id":"t1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"<promise>DONE</promise>"}}`,
		"gemini": `{"type":"init","session_id":"s1","model":"gemini-2.5-flash"}
{"type":"message","role":"assistant","content":"<promise>DONE</promise>","delta":true}`,
	}
	for backend, s := range streams {
		ad, _ := Lookup(backend)
		p := ad.NewParser(Request{})
		for _, l := range strings.Split(s, "\n") {
			p.Line([]byte(l))
		}
		r := p.Finish(Exit{Code: 0})
		if r.Status != StatusFailed || r.Promise != "" {
			t.Errorf("%s: status %s promise %q, want failed and no signal", backend, r.Status, r.Promise)
		}
	}
}

// Claude's is_error under subtype success is a failure.
func TestClaudeIsErrorUnderSuccess(t *testing.T) {
	p := claudeAdapter{}.NewParser(Request{})
	p.Line([]byte(`{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"something broke <promise>DONE</promise>","terminal_reason":"completed","session_id":"s"}`))
	r := p.Finish(Exit{Code: 1})
	if r.Status == StatusOK || r.Promise != "" {
		t.Errorf("status %s promise %q", r.Status, r.Promise)
	}
}

// Signals come from the final assistant message only: not from tool output,
// a subagent's text, the echoed prompt, or text before the last tool call.
func TestSignalsFromFinalMessageOnly(t *testing.T) {
	prompt := "When done print <promise>DONE</promise>"
	t.Run("claude", func(t *testing.T) {
		p := claudeAdapter{}.NewParser(Request{Prompt: prompt})
		for _, l := range []string{
			`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"<promise>EARLY</promise>"},{"type":"tool_use","name":"Bash","input":{"command":"echo '<promise>DONE</promise>'"}}]},"parent_tool_use_id":null}`,
			`{"type":"user","message":{"content":[{"type":"tool_result","content":"<promise>DONE</promise>"}]},"parent_tool_use_id":null}`,
			`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"<promise>SUB</promise>"}]},"parent_tool_use_id":"toolu_1"}`,
		} {
			p.Line([]byte(l))
		}
		p.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Not finished.","session_id":"s"}`))
		if r := p.Finish(Exit{}); r.Promise != "" || r.Status != StatusOK {
			t.Errorf("promise %q status %s", r.Promise, r.Status)
		}
	})
	t.Run("codex", func(t *testing.T) {
		p := codexAdapter{}.NewParser(Request{Prompt: prompt})
		for _, l := range []string{
			`{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"<promise>EARLY</promise>"}}`,
			`{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"echo '<promise>DONE</promise>'"}}`,
			`{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"echo","aggregated_output":"<promise>DONE</promise>\n","exit_code":0}}`,
			`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}`,
		} {
			p.Line([]byte(l))
		}
		if r := p.Finish(Exit{}); r.Promise != "" || r.Status != StatusOK {
			t.Errorf("promise %q status %s", r.Promise, r.Status)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		p := geminiAdapter{}.NewParser(Request{Prompt: prompt})
		for _, l := range []string{
			`{"type":"message","role":"user","content":"When done print <promise>DONE</promise>"}`,
			`{"type":"message","role":"assistant","content":"<promise>EAR","delta":true}`,
			`{"type":"message","role":"assistant","content":"LY</promise>","delta":true}`,
			`{"type":"tool_use","tool_name":"run_shell_command","tool_id":"x","parameters":{"command":"echo"}}`,
			`{"type":"tool_result","tool_id":"x","status":"success","output":"<promise>DONE</promise>"}`,
			`{"type":"message","role":"assistant","content":"Not ","delta":true}`,
			`{"type":"message","role":"assistant","content":"finished.","delta":true}`,
			`{"type":"result","status":"success","stats":{"input_tokens":10,"output_tokens":2}}`,
		} {
			p.Line([]byte(l))
		}
		r := p.Finish(Exit{})
		if r.Promise != "" || r.Status != StatusOK || r.FinalMessage != "Not finished." {
			t.Errorf("promise %q status %s final %q", r.Promise, r.Status, r.FinalMessage)
		}
	})
}

func TestInvocations(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"claude", "codex", "gemini"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := Request{Prompt: "PROMPT", Model: "m1", MaxTurns: 7, MaxBudgetUSD: 1.5, Args: []string{"--extra"},
		Env: map[string]string{"PATH": dir, "HOME": dir}}
	join := func(inv Invocation) string { return strings.Join(inv.Args, " ") }

	inv, err := claudeAdapter{}.Invocation(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := join(inv); got != "-p --output-format stream-json --verbose --model m1 --max-turns 7 --max-budget-usd 1.5 --permission-mode bypassPermissions --extra" {
		t.Errorf("claude args: %s", got)
	}
	if inv.Path != filepath.Join(dir, "claude") || inv.Stdin != "PROMPT" {
		t.Errorf("claude path %q stdin %q", inv.Path, inv.Stdin)
	}
	env := envList(inv.Env)
	if v, _ := env.get("CLAUDE_CODE_MAX_RETRIES"); v != "0" {
		t.Errorf("CLAUDE_CODE_MAX_RETRIES=%q", v)
	}
	if v, _ := env.get("IS_SANDBOX"); os.Geteuid() == 0 && v != "1" {
		t.Errorf("as root, bypass needs IS_SANDBOX=1; got %q", v)
	}
	// The loop file's env wins over the adapter's defaults.
	own := base
	own.Env = map[string]string{"PATH": dir, "CLAUDE_CODE_MAX_RETRIES": "4"}
	inv, _ = claudeAdapter{}.Invocation(own)
	if v, _ := envList(inv.Env).get("CLAUDE_CODE_MAX_RETRIES"); v != "4" {
		t.Errorf("agent.env CLAUDE_CODE_MAX_RETRIES=4 overridden: %q", v)
	}
	tools := base
	tools.Permissions = []string{"Edit", "Bash(go test:*)"}
	inv, _ = claudeAdapter{}.Invocation(tools)
	if got := join(inv); !strings.Contains(got, "--allowedTools Edit Bash(go test:*) --extra") || strings.Contains(got, "bypass") {
		t.Errorf("claude with allowed tools: %s", got)
	}

	codex := base
	codex.Env = map[string]string{"PATH": dir, CodexBaseURLEnv: "http://127.0.0.1:9/v1/", CodexKeyEnvEnv: "MY_KEY",
		"CODEX_HOME": filepath.Join(dir, "codex-home")}
	inv, err = codexAdapter{}.Invocation(codex)
	if err != nil {
		t.Fatal(err)
	}
	want := `exec --json --skip-git-repo-check -m m1 -c model_provider=looprinter -c model_providers.looprinter={name="looprinter",base_url="http://127.0.0.1:9/v1",env_key="MY_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0} --dangerously-bypass-approvals-and-sandbox --extra -`
	if got := join(inv); got != want {
		t.Errorf("codex args:\n got %s\nwant %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "codex-home")); err != nil {
		t.Errorf("CODEX_HOME not created: %v", err)
	}
	codex.Permissions = []string{"mode=workspace-write"}
	inv, _ = codexAdapter{}.Invocation(codex)
	if got := join(inv); !strings.Contains(got, "--sandbox workspace-write") || strings.Contains(got, "dangerously") {
		t.Errorf("codex sandbox mode: %s", got)
	}
	codex.Permissions = []string{"Edit"}
	if _, err := (codexAdapter{}).Invocation(codex); err == nil {
		t.Errorf("codex with a tool list must be refused")
	}

	inv, err = geminiAdapter{}.Invocation(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := join(inv); got != "--output-format stream-json --skip-trust -m m1 --yolo --extra" {
		t.Errorf("gemini args: %s", got)
	}
	// agent.command may name the program with leading words.
	cmd := base
	cmd.Command = "node " + filepath.Join(dir, "gemini")
	cmd.Env = map[string]string{"PATH": os.Getenv("PATH")}
	if inv, err := (geminiAdapter{}).Invocation(cmd); err == nil {
		if filepath.Base(inv.Path) != "node" || inv.Args[0] != filepath.Join(dir, "gemini") {
			t.Errorf("gemini via node: %s %v", inv.Path, inv.Args)
		}
	}
}

func TestNotInstalled(t *testing.T) {
	req := Request{Env: map[string]string{"PATH": t.TempDir()}}
	for _, ad := range []Adapter{claudeAdapter{}, codexAdapter{}, geminiAdapter{}} {
		_, err := ad.Invocation(req)
		if err == nil {
			t.Fatalf("%s: found a program on an empty PATH", ad.Name())
		}
		r := ad.NewParser(req).Finish(Exit{Code: -1, StartErr: err})
		if r.Status != StatusBlocked || !strings.Contains(r.Fix, "npm install -g @") {
			t.Errorf("%s: %s %q", ad.Name(), r.Status, r.Fix)
		}
	}
}

func TestRetryAfterIn(t *testing.T) {
	now := time.Date(2026, 11, 30, 2, 0, 30, 0, time.Local)
	cases := map[string]time.Duration{
		"Please retry in 30s.":                          30 * time.Second,
		"Suggested retry after 1m30s.":                  90 * time.Second,
		"Rate limit reached. Please try again in 20ms.": 20 * time.Millisecond,
		"try again in 12 seconds":                       12 * time.Second,
		"retryDelayMs: 4500":                            4500 * time.Millisecond,
		`"retryDelay": "7s"`:                            7 * time.Second,
		"or try again at 2:02 AM.":                      90 * time.Second,
		"or try again at 1:00 AM.":                      23*time.Hour - 30*time.Second,
		"or try again at 2:00 AM.":                      time.Minute, // this minute
		"or try again at Dec 1st, 2026 2:00 AM.":        24*time.Hour - 30*time.Second,
		"try again in a moment":                         0,
		"API Error: 500 Internal Server Error":          0,
	}
	for text, want := range cases {
		if got := retryAfterIn(text, now); got != want {
			t.Errorf("%q: %s, want %s", text, got, want)
		}
	}
}

func TestPrices(t *testing.T) {
	p, ok := LookupPrice("gpt-5.5", nil)
	if !ok || p != DefaultPrices["gpt-5"] {
		t.Errorf("gpt-5.5 priced as %+v %v, want gpt-5's", p, ok)
	}
	if p, _ := LookupPrice("gpt-5-mini-2025", nil); p != DefaultPrices["gpt-5-mini"] {
		t.Errorf("longest prefix should win: %+v", p)
	}
	over := map[string]Price{"gpt-5.5": {Input: 10, Output: 20}}
	if p, _ := LookupPrice("gpt-5.5", over); p.Input != 10 {
		t.Errorf("override ignored: %+v", p)
	}
	if _, ok := LookupPrice("my-local-model", nil); ok {
		t.Errorf("an unknown model has no price")
	}
	// 1M fresh input at 1, 1M cached at 0.1, 1M output at 2.
	if c := EstimateCost(Price{Input: 1, Output: 2, CacheRead: 0.1}, 2e6, 1e6, 0, 1e6); c < 3.0999 || c > 3.1001 {
		t.Errorf("cost %v, want 3.1", c)
	}
	// Codex run with an override: the estimate uses it.
	p2 := codexAdapter{}.NewParser(Request{Model: "gpt-5.5", Prices: over})
	p2.Line([]byte(`{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":0,"output_tokens":1000000}}`))
	if r := p2.Finish(Exit{}); r.CostUSD != 30 || !r.CostEstimated {
		t.Errorf("cost %v estimated %v, want 30 from the override", r.CostUSD, r.CostEstimated)
	}
}

func TestParsePermissions(t *testing.T) {
	if p := parsePermissions(nil); !p.bypass {
		t.Error("the default is bypass")
	}
	if p := parsePermissions([]string{"Edit"}); p.bypass || len(p.tools) != 1 {
		t.Errorf("%+v", p)
	}
	if p := parsePermissions([]string{"mode=acceptEdits"}); p.bypass || p.mode != "acceptEdits" {
		t.Errorf("%+v", p)
	}
}

// A rejected rate_limit_event (subscription logins) gives the reset time.
func TestClaudeRateLimitEventResetTime(t *testing.T) {
	reset := time.Now().Add(10 * time.Minute).Unix()
	p := claudeAdapter{}.NewParser(Request{})
	p.Line([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":` + strconv.FormatInt(reset, 10) + `,"rateLimitType":"five_hour"},"session_id":"s"}`))
	p.Line([]byte(`{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":429,"result":"limit reached","session_id":"s"}`))
	r := p.Finish(Exit{Code: 1})
	if r.Status != StatusRateLimited || r.RetryAfter < 9*time.Minute || r.RetryAfter > 10*time.Minute {
		t.Errorf("status %s retry after %s, want rate_limited for about 10m", r.Status, r.RetryAfter)
	}
}

// Without a rate_limit_event (an API key), the reset comes from the API's
// message, where it says one.
func TestClaudeUsageLimitMessageResetTime(t *testing.T) {
	p := claudeAdapter{}.NewParser(Request{})
	p.Line([]byte(`{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":429,"result":"API Error: Request rejected (429) · usage limit reached, try again in 3h","session_id":"s"}`))
	r := p.Finish(Exit{Code: 1})
	if r.Status != StatusRateLimited || r.RetryAfter != 3*time.Hour {
		t.Errorf("status %s retry after %s, want rate_limited for 3h", r.Status, r.RetryAfter)
	}
	p = claudeAdapter{}.NewParser(Request{})
	p.Line([]byte(`{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":429,"result":"API Error: Request rejected (429) · rate limited","session_id":"s"}`))
	if r := p.Finish(Exit{Code: 1}); r.Status != StatusRateLimited || r.RetryAfter != 0 {
		t.Errorf("status %s retry after %s, want rate_limited with no reset", r.Status, r.RetryAfter)
	}
}

func TestCLIFor(t *testing.T) {
	c, ok := CLIFor("codex")
	if !ok || c.NPMPackage != "@openai/codex" || c.Version != "0.169.0" || c.Program != "codex" {
		t.Errorf("%+v %v", c, ok)
	}
	if _, ok := CLIFor("command"); ok {
		t.Error("command is not a CLI")
	}
}

// max_turns for Gemini: a copy of the system settings with
// model.maxSessionTurns, used only where Gemini CLI would read it.
func TestGeminiTurnsSettings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gemini"), []byte("#!/bin/sh\n"), 0o755)
	sys := filepath.Join(dir, "system.json")
	os.WriteFile(sys, []byte(`{"security":{"disableYoloMode":true},"model":{"name":"x"}}`), 0o644)
	req := Request{MaxTurns: 7, Env: map[string]string{"PATH": dir, "GEMINI_CLI_SYSTEM_SETTINGS_PATH": sys}}
	inv, err := geminiAdapter{}.Invocation(req)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := envList(inv.Env).get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	cache, _ := os.UserCacheDir()
	if os.Geteuid() != 0 || rootOwnedChain(cache) != nil {
		if p != sys {
			t.Errorf("settings path %q: without root the user's own must stay", p)
		}
		return
	}
	b, err := os.ReadFile(p)
	if err != nil || p == sys {
		t.Fatalf("settings %q: %v", p, err)
	}
	s := string(b)
	if !strings.Contains(s, `"maxSessionTurns": 7`) || !strings.Contains(s, `"disableYoloMode": true`) || !strings.Contains(s, `"name": "x"`) {
		t.Errorf("settings do not merge the system file:\n%s", s)
	}
}
