//go:build !windows

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/internal/fakeapi"
)

// run is one agent run against the fake API through the real adapter.
type run struct {
	req   agent.Request
	mark  string
	mu    sync.Mutex
	tools []agent.ToolEvent
}

func newRun(t *testing.T, k kit, url, prompt string) *run {
	t.Helper()
	dir := t.TempDir()
	home := t.TempDir()
	env := k.env(t, home, url)
	mark := newMark()
	env[markVar] = mark
	return &run{mark: mark, req: agent.Request{
		Phase: "build", Cycle: 1, Iteration: 1, Task: "T-001",
		Dir: dir, Prompt: prompt, PromptFile: filepath.Join(dir, "prompt.md"),
		Transcript: filepath.Join(t.TempDir(), "transcripts", "run.log"),
		Backend:    k.backend, Model: k.model, Command: k.bin, Env: env,
		// Generous: a Node.js CLI starting on a loaded machine prints
		// nothing for 30s and more. The tests of the timeouts set their own.
		Timeout: 5 * time.Minute, IdleTimeout: 3 * time.Minute, Grace: 2 * time.Second,
	}}
}

func (r *run) do(t *testing.T) agent.Result {
	t.Helper()
	ad, err := agent.Lookup(r.req.Backend)
	if err != nil {
		t.Fatal(err)
	}
	res := agent.Run(context.Background(), r.req, ad, func(ev agent.ToolEvent) {
		r.mu.Lock()
		r.tools = append(r.tools, ev)
		r.mu.Unlock()
	})
	t.Logf("%s: status=%s exit=%d turns=%d in=%d out=%d cached=%d cost=%.6f est=%v tools=%v retry=%s dur=%s\nerror: %s\nfix: %s\nfinal: %q",
		r.req.Backend, res.Status, res.ExitCode, res.Turns, res.InputTokens, res.OutputTokens, res.CachedTokens,
		res.CostUSD, res.CostEstimated, res.Tools, res.RetryAfter, res.Duration.Round(time.Millisecond), res.Error, res.Fix, res.FinalMessage)
	if t.Failed() || res.Status != agent.StatusOK {
		if b, err := os.ReadFile(res.Transcript + ".stderr"); err == nil && len(b) > 0 {
			t.Logf("stderr tail: %s", tail(string(b), 1500))
		}
	}
	return res
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// The model writes a file and runs a command through the CLI's real tools;
// the result carries the final message, its signal, turns, tokens, cost,
// the session id and the tools, and the console saw each tool call live.
func TestAdapterWritesFileWithRealTools(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		srv := startAPI(t)
		r := newRun(t, k, srv.URL, "Write out/hello.txt, then say <promise>DONE</promise> when done.")
		abs := filepath.Join(r.req.Dir, "out", "hello.txt")
		srv.Add(
			withUsage(k.write(abs, "out/hello.txt", "hello from "+k.backend+"\n"), 1000, 50, 200),
			withUsage(k.shell("mkdir -p out && echo shell-ran > out/shell.txt"), 1100, 40, 300),
			withUsage(fakeapi.Text("Both files are written.\n<promise>DONE</promise>"), 1200, 30, 0),
		)
		res := r.do(t)
		if res.Status != agent.StatusOK {
			t.Fatalf("status %s, want ok: %s", res.Status, res.Error)
		}
		if b, err := os.ReadFile(abs); err != nil || string(b) != "hello from "+k.backend+"\n" {
			t.Errorf("out/hello.txt = %q, %v; want the model's content", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(r.req.Dir, "out", "shell.txt")); err != nil || strings.TrimSpace(string(b)) != "shell-ran" {
			t.Errorf("out/shell.txt = %q, %v; the shell tool did not run", b, err)
		}
		if res.Promise != "DONE" {
			t.Errorf("promise %q, want DONE", res.Promise)
		}
		if !strings.Contains(res.FinalMessage, "Both files are written.") {
			t.Errorf("final message %q", res.FinalMessage)
		}
		if res.Turns != 3 {
			t.Errorf("turns %d, want 3 (two tool steps and the answer)", res.Turns)
		}
		// Usage: input counts cached tokens too; the fake's numbers add up.
		if res.InputTokens != 3300 || res.OutputTokens != 120 || res.CachedTokens != 500 {
			t.Errorf("tokens in=%d out=%d cached=%d, want 3300/120/500", res.InputTokens, res.OutputTokens, res.CachedTokens)
		}
		if res.CostUSD <= 0 {
			t.Errorf("cost %v, want > 0", res.CostUSD)
		}
		if want := k.backend != "claude"; res.CostEstimated != want {
			t.Errorf("cost_estimated %v, want %v", res.CostEstimated, want)
		}
		if k.backend == "gemini" {
			// gemini-2.5-flash: 2800 fresh in at 0.30, 500 cached at 0.075, 120 out at 2.50 per million.
			if want := (2800*0.3 + 500*0.075 + 120*2.5) / 1e6; abs64(res.CostUSD-want) > 1e-9 {
				t.Errorf("estimated cost %v, want %v", res.CostUSD, want)
			}
		}
		if res.SessionID == "" {
			t.Error("no session id")
		}
		if !contains(res.Tools, k.writeTool) || !contains(res.Tools, k.shellTool) {
			t.Errorf("tools %v, want %s and %s", res.Tools, k.writeTool, k.shellTool)
		}
		if len(r.tools) != 2 || r.tools[0].Tool != k.writeTool || r.tools[1].Tool != k.shellTool ||
			!strings.Contains(r.tools[1].Summary, "echo shell-ran") {
			t.Errorf("live tool events %+v, want %s then %s", r.tools, k.writeTool, k.shellTool)
		}
		// The model saw the tool results: the later requests carry them.
		reqs := srv.ModelRequests()
		if len(reqs) != 3 {
			t.Fatalf("%d model requests, want 3", len(reqs))
		}
		if !strings.Contains(reqs[2].Body, "shell-ran") && k.backend != "gemini" {
			t.Errorf("the third request does not carry the shell output")
		}
		if !strings.Contains(reqs[0].Body, "say <promise>DONE</promise> when done") {
			t.Errorf("the prompt did not reach the model")
		}
		if _, err := os.Stat(r.req.Transcript); err != nil {
			t.Errorf("no transcript: %v", err)
		}
		assertNoLeftovers(t, r.mark)
	})
}

func withUsage(r fakeapi.Reply, in, out, cached int) fakeapi.Reply {
	r.Usage = fakeapi.Usage{Input: in, Output: out, Cached: cached}
	return r
}

func abs64(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// A signal counts only in the final assistant message: not in tool output,
// not in the prompt the CLI echoes back.
func TestAdapterSignalOnlyFromFinalMessage(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		srv := startAPI(t,
			k.shell("echo '<promise>DONE</promise>'; echo '<blocked>fake</blocked>'"),
			fakeapi.Text("I ran the command. The task is not finished yet."),
		)
		r := newRun(t, k, srv.URL, "When the task is finished, print exactly:\n<promise>DONE</promise>\n"+
			"If you need a human, print <blocked>reason</blocked>.")
		res := r.do(t)
		if res.Status != agent.StatusOK {
			t.Fatalf("status %s, want ok: %s", res.Status, res.Error)
		}
		if res.Promise != "" || res.Blocked != "" {
			t.Errorf("promise %q blocked %q: signals were taken from tool output or the prompt", res.Promise, res.Blocked)
		}
		b, _ := os.ReadFile(r.req.Transcript)
		if !strings.Contains(string(b), "<promise>DONE</promise>") {
			t.Errorf("the transcript should show the tool output carrying the tag (else this test proves nothing)")
		}
	})
}

// A <blocked> tag in the final message stops the run as blocked.
func TestAdapterBlockedSignal(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		srv := startAPI(t, fakeapi.Text("I cannot go on.\n<blocked>the database password is missing</blocked>"))
		r := newRun(t, k, srv.URL, "Do the task.")
		res := r.do(t)
		if res.Status != agent.StatusBlocked || res.Blocked != "the database password is missing" {
			t.Errorf("status %s blocked %q, want blocked with the reason", res.Status, res.Blocked)
		}
	})
}

// max_turns caps the run; it is not an error (Codex has no such cap).
func TestAdapterMaxTurnsCapped(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		if k.backend == "codex" {
			t.Skip("codex exec has no max-turns setting; a Codex run is bounded by agent.timeout")
		}
		if ok, why := geminiTurnsSupported(); k.backend == "gemini" && !ok {
			t.Skip(why)
		}
		srv := startAPI(t,
			k.shell("echo 1 >> steps.txt"),
			k.shell("echo 2 >> steps.txt"),
			k.shell("echo 3 >> steps.txt"),
			k.shell("echo 4 >> steps.txt"),
			fakeapi.Text("done"),
		)
		r := newRun(t, k, srv.URL, "Count.")
		r.req.MaxTurns = 2
		res := r.do(t)
		if res.Status != agent.StatusCapped {
			t.Fatalf("status %s, want capped: %s", res.Status, res.Error)
		}
		if n := len(srv.ModelRequests()); n != 2 {
			t.Errorf("%d model requests, want 2 (max_turns 2)", n)
		}
		if res.InputTokens == 0 {
			t.Errorf("a capped run still reports its tokens")
		}
	})
}

// max_budget_usd caps a Claude run.
func TestAdapterClaudeBudgetCapped(t *testing.T) {
	k := kits[0]
	k.bin = findCLI(t, "claude")
	srv := startAPI(t,
		withUsage(k.shell("echo 1"), 400000, 100000, 0),
		k.shell("echo 2"),
		fakeapi.Text("done"),
	)
	r := newRun(t, k, srv.URL, "Spend.")
	r.req.MaxBudgetUSD = 0.5
	res := r.do(t)
	if res.Status != agent.StatusCapped {
		t.Fatalf("status %s, want capped: %s", res.Status, res.Error)
	}
	if res.CostUSD <= 0.5 {
		t.Errorf("cost %v: the budget stop should report what was spent", res.CostUSD)
	}
	if res.InputTokens != 400000 || res.OutputTokens != 100000 {
		t.Errorf("tokens in=%d out=%d: an error result still reports the run's usage", res.InputTokens, res.OutputTokens)
	}
}

// A refused key blocks the run at once, with how to fix it.
func TestAdapterUnauthorizedBlocks(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		srv := startAPI(t, fakeapi.Fail(401, "invalid api key"), fakeapi.Fail(401, "invalid api key"))
		r := newRun(t, k, srv.URL, "Do it.")
		start := time.Now()
		res := r.do(t)
		end := time.Now()
		if res.Status != agent.StatusBlocked {
			t.Fatalf("status %s, want blocked: %s", res.Status, res.Error)
		}
		if d := sinceRefusal(t, srv, start, end); d > 15*time.Second {
			t.Errorf("took %s from the refusal; a 401 must block within seconds", d)
		}
		if res.Fix == "" || !strings.Contains(res.Error, "401") && k.backend != "codex" {
			t.Errorf("error %q fix %q: want the status and a fix", res.Error, res.Fix)
		}
		assertNoLeftovers(t, r.mark)
	})
}

// An unknown model blocks the run.
func TestAdapterUnknownModelBlocks(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		srv := startAPI(t, fakeapi.Fail(404, "model bogus-model does not exist"), fakeapi.Fail(404, "model bogus-model does not exist"))
		r := newRun(t, k, srv.URL, "Do it.")
		res := r.do(t)
		if res.Status != agent.StatusBlocked || !strings.Contains(res.Fix, "agent.model") {
			t.Errorf("status %s fix %q, want blocked naming agent.model", res.Status, res.Fix)
		}
	})
}

// A missing program blocks the run, naming the npm package to install.
func TestAdapterNotInstalledBlocks(t *testing.T) {
	for _, k := range kits {
		t.Run(k.backend, func(t *testing.T) {
			r := newRun(t, k, "http://127.0.0.1:9", "x")
			r.req.Command = ""
			r.req.Env["PATH"] = t.TempDir()
			res := r.do(t)
			if res.Status != agent.StatusBlocked || !strings.Contains(res.Fix, "npm install -g @") {
				t.Errorf("status %s fix %q, want blocked with the npm package", res.Status, res.Fix)
			}
		})
	}
}

// A 429 is a rate limit: the result says to wait, and for how long where the
// CLI says (Gemini passes the API's RetryInfo on; Codex shows a usage
// limit's reset time; Claude Code shows none with an API key).
func TestAdapterRateLimited(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		reply := fakeapi.RateLimit(7 * time.Second)
		if k.backend == "codex" {
			reply = fakeapi.Reply{Error: &fakeapi.Error{Status: 429, Body: `{"error":{"type":"usage_limit_reached",` +
				`"message":"The usage limit has been reached","plan_type":"plus","resets_in_seconds":90,"resets_at":` +
				itoa(time.Now().Add(90*time.Second).Unix()) + `}}`}}
		}
		srv := startAPI(t, reply, reply)
		r := newRun(t, k, srv.URL, "Do it.")
		res := r.do(t)
		if res.Status != agent.StatusRateLimited {
			t.Fatalf("status %s, want rate_limited: %s", res.Status, res.Error)
		}
		switch k.backend {
		case "gemini":
			if res.RetryAfter != 7*time.Second {
				t.Errorf("retry after %s, want 7s from the API's RetryInfo", res.RetryAfter)
			}
		case "codex":
			// Codex prints the reset as a clock time to the minute.
			if res.RetryAfter < 10*time.Second || res.RetryAfter > 151*time.Second {
				t.Errorf("retry after %s, want about 90s", res.RetryAfter)
			}
		}
	})
}

// 429 without a reset time, and an overloaded API: rate limited, no wait given.
func TestAdapterOverloaded(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		status := 529
		if k.backend != "claude" {
			status = 503
		}
		srv := startAPI(t, fakeapi.Fail(status, "overloaded"), fakeapi.Fail(status, "overloaded"))
		r := newRun(t, k, srv.URL, "Do it.")
		res := r.do(t)
		if res.Status != agent.StatusRateLimited {
			t.Errorf("status %s, want rate_limited: %s", res.Status, res.Error)
		}
	})
}

// A server error is an API error, for the engine to retry with backoff.
func TestAdapterServerErrorIsAPIError(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		srv := startAPI(t, fakeapi.Fail(500, "boom"), fakeapi.Fail(500, "boom"), fakeapi.Fail(500, "boom"))
		r := newRun(t, k, srv.URL, "Do it.")
		res := r.do(t)
		if res.Status != agent.StatusAPIError {
			t.Errorf("status %s, want api_error: %s", res.Status, res.Error)
		}
	})
}

// The server is down: the run ends on its own or by the timeouts, quickly
// enough, and nothing it started outlives it.
func TestAdapterServerDown(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		// Mostly waiting on the timeouts: the three CLIs wait at once.
		t.Parallel()
		r := newRun(t, k, deadURL(t), "Do it.")
		r.req.Timeout = 25 * time.Second
		r.req.IdleTimeout = 6 * time.Second
		start := time.Now()
		res := r.do(t)
		took := time.Since(start)
		// Ended by the timeouts, not left to run: a run no timeout ended
		// would go on until the test's own deadline. The slack is for a
		// slow kill on a loaded machine.
		if slack := max(10*time.Second, r.req.Timeout/2); took > r.req.Timeout+r.req.Grace+slack {
			t.Errorf("took %s, beyond the timeout", took)
		}
		switch res.Status {
		case agent.StatusAPIError, agent.StatusTimeout, agent.StatusIdle:
		default:
			t.Errorf("status %s, want api_error, timeout or idle_timeout: %s", res.Status, res.Error)
		}
		if k.backend == "codex" && res.Status == agent.StatusAPIError {
			t.Errorf("codex never gives up on a dead network; expected the runner to kill it")
		}
		assertNoLeftovers(t, r.mark)
	})
}

// The model's API accepts the request and never answers: the idle timeout
// kills the whole process group.
//
// The API answers the headers of the reply, then sends only keep-alives
// (fakeapi's Stall): no timeout of the CLI's own HTTP client ends that, so
// the run ends by the engine's idle timeout however long it is. Against a
// request that never got its headers (a Hang), Gemini CLI gives up by
// itself after 60s, and the run ended api_error once the idle timeout had
// grown past that on a loaded machine.
//
// A CLI prints nothing while it starts, and the idle timeout counts that
// time too: on a loaded machine Node.js start-up alone took 24-36s. A run
// killed before it reached the API proves nothing, so it is tried again
// with three times the idle timeout (up to three tries); what is judged is
// the run that reached the API, timed from its first request.
func TestAdapterHungAPIKilledByIdleTimeout(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		// Mostly waiting on the idle timeout: the three CLIs wait at once
		// (each its own API, folders and mark).
		t.Parallel()
		idle := 5 * time.Second
		if k.backend == "gemini" {
			// Gemini CLI is the slowest to start.
			idle = 15 * time.Second
		}
		for try := 1; ; try++ {
			srv := startAPI(t, fakeapi.Reply{Stall: true}, fakeapi.Reply{Stall: true})
			r := newRun(t, k, srv.URL, "Do it.")
			r.req.IdleTimeout = idle
			r.req.Timeout = max(60*time.Second, 4*idle)
			res := r.do(t)
			end := time.Now()
			if res.Status != agent.StatusIdle && res.Status != agent.StatusTimeout {
				t.Errorf("status %s, want idle_timeout: %s", res.Status, res.Error)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				assertNoLeftovers(t, r.mark)
				if try < 3 {
					t.Logf("killed after %s before it reached the API (start-up longer than the idle timeout): again with idle_timeout %s", res.Duration.Round(time.Millisecond), 3*idle)
					idle *= 3
					continue
				}
				t.Fatalf("the CLI never reached the API in %d tries (this test would prove nothing)", try)
			}
			// Ended by the idle timeout, not by the run's timeout: closer
			// to the one than to the other, however slow the kill was.
			slack := max(10*time.Second, (r.req.Timeout-idle)/2)
			if d := end.Sub(reqs[0].Time); d > idle+r.req.Grace+slack {
				t.Errorf("ended %s after the request the API never answered; idle_timeout is %s, timeout %s", d.Round(time.Millisecond), idle, r.req.Timeout)
			}
			assertNoLeftovers(t, r.mark)
			return
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// agent.permissions as a list of tools: those run, every other is refused
// (Codex has no such list: the run is blocked with how to fix the file).
func TestAdapterPermissionsList(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		srv := startAPI(t)
		r := newRun(t, k, srv.URL, "Write a file, then run a command.")
		r.req.Permissions = []string{k.writeTool}
		abs := filepath.Join(r.req.Dir, "allowed.txt")
		srv.Add(
			k.write(abs, "allowed.txt", "yes\n"),
			k.shell("echo no > refused.txt"),
			fakeapi.Text("done"),
		)
		res := r.do(t)
		if k.backend == "codex" {
			if res.Status != agent.StatusBlocked || !strings.Contains(res.Fix, "agent.permissions") {
				t.Errorf("status %s fix %q, want blocked naming agent.permissions", res.Status, res.Fix)
			}
			return
		}
		if res.Status != agent.StatusOK {
			t.Fatalf("status %s: %s", res.Status, res.Error)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Errorf("the allowed tool did not run: %v", err)
		}
		if _, err := os.Stat(filepath.Join(r.req.Dir, "refused.txt")); err == nil {
			t.Errorf("the shell ran although only %s was allowed", k.writeTool)
		}
		if !strings.Contains(res.Error, "refused") {
			t.Errorf("error %q: the result should say a tool call was refused", res.Error)
		}
	})
}
