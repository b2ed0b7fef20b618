//go:build !windows

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/fakeapi"
	"github.com/looprinter/looprinter/sandbox"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// looprinter builds the looprinter program once for the loop tests (or
// uses the one named by LOOPRINTER_E2E_BIN).
func looprinter(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("LOOPRINTER_E2E_BIN"); p != "" {
			binPath = p // a looprinter built elsewhere
			return
		}
		_, here, _, _ := runtime.Caller(0)
		repo := filepath.Dir(filepath.Dir(here))
		dir, err := os.MkdirTemp("", "looprinter-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "looprinter")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/looprinter")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/looprinter: %v\n%s", err, out)
			return
		}
		out, err := exec.Command(binPath, "run", "--help").CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("loop")) {
			buildErr = fmt.Errorf("looprinter run --help: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// loopEnv is a loop directory wired to the fake API for one CLI.
type loopEnv struct {
	dir  string
	mark string
	srv  *fakeapi.Server
}

// loopOpts change the loop file's defaults.
type loopOpts struct {
	timeout, idle string // agent.timeout, agent.idle_timeout
	maxTurns      int
	budget        string // the lines under budget:, indented
	extra         string // more lines of the loop file
}

// newLoop writes loop.yaml for a two-task cycle run by k's CLI.
func newLoop(t *testing.T, k kit, url string, o loopOpts) *loopEnv {
	t.Helper()
	dir := t.TempDir()
	home := t.TempDir()
	env := k.env(t, home, url)
	mark := newMark()
	env[markVar] = mark
	keys := make([]string, 0, len(env))
	for key := range env {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var envYAML strings.Builder
	for _, key := range keys {
		fmt.Fprintf(&envYAML, "    %s: %q\n", key, env[key])
	}
	if o.budget == "" {
		o.budget = "  iterations: 4\n  cycles: 2\n  wall: 20m\n"
	}
	// Generous defaults: a Node.js CLI starting on a loaded machine prints
	// nothing for 30s and more, and one agent run took 77s. The tests of
	// the timeouts set their own.
	if o.timeout == "" {
		o.timeout = "5m"
	}
	if o.idle == "" {
		o.idle = "3m"
	}
	if o.maxTurns == 0 {
		o.maxTurns = 10
	}
	yaml := fmt.Sprintf(`version: 1
shape: cycle
objective: "out/one.txt says one and out/two.txt says two"
agent:
  backend: %s
  model: %s
  command: %q
  timeout: %s
  idle_timeout: %s
  grace: 2s
  max_turns: %d
  env:
%sbudget:
%sverify:
  - test -s out/one.txt
  - test -s out/two.txt
objective_verify:
  - test "$(cat out/one.txt)" = one && test "$(cat out/two.txt)" = two
%s`, k.backend, k.model, k.bin, o.timeout, o.idle, o.maxTurns, envYAML.String(), o.budget, o.extra)
	if err := os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return &loopEnv{dir: dir, mark: mark}
}

// planJSON is the plan the model writes: one task a line, so that a shell
// command can mark one task with sed.
const planJSON = `{"tasks": [
{"id": "T-001", "title": "write one", "description": "Write out/one.txt containing one.", "targetFile": "out/one.txt", "passes": false, "notes": ""},
{"id": "T-002", "title": "write two", "description": "Write out/two.txt containing two.", "targetFile": "out/two.txt", "passes": false, "notes": ""}
]}
`

// planReplies: the model writes output/plan.json with its file tool.
func planReplies(k kit, dir string) []fakeapi.Reply {
	return []fakeapi.Reply{
		withUsage(k.write(filepath.Join(dir, "output", "plan.json"), "output/plan.json", planJSON), 2000, 300, 0),
		withUsage(fakeapi.Text("The plan has two tasks."), 2400, 20, 1500),
	}
}

// buildReplies: the model writes the task's target with its file tool, then
// marks the task and appends to progress with a shell command.
func buildReplies(k kit, dir, id, name string) []fakeapi.Reply {
	mark := fmt.Sprintf(`sed -i '/"id": "%s"/s/"passes": false/"passes": true/' output/plan.json && echo '%s: wrote out/%s.txt' >> output/progress.txt`, id, id, name)
	return []fakeapi.Reply{
		withUsage(k.write(filepath.Join(dir, "out", name+".txt"), "out/"+name+".txt", name+"\n"), 3000, 100, 2000),
		withUsage(k.shell(mark), 3200, 120, 2500),
		withUsage(fakeapi.Text(id+" is done."), 3400, 15, 3000),
	}
}

// runLoop runs `looprinter run` in the loop directory.
func (l *loopEnv) run(t *testing.T, timeout time.Duration) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, looprinter(t), "run")
	cmd.Dir = l.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("looprinter run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("looprinter run did not stop within %s\nstdout:\n%s\nstderr:\n%s", timeout, out.String(), errb.String())
	}
	t.Logf("looprinter run: exit %d after %s\nstdout:\n%s\nstderr:\n%s", code, took.Round(time.Millisecond), tail(out.String(), 3000), tail(errb.String(), 3000))
	return code, out.String(), errb.String(), took
}

// event is the part of a record line the tests read.
type event struct {
	Event         string    `json:"event"`
	Phase         string    `json:"phase"`
	Task          string    `json:"task"`
	Backend       string    `json:"backend"`
	Model         string    `json:"model"`
	Status        string    `json:"status"`
	ExitCode      *int      `json:"exit_code"`
	Turns         int       `json:"turns"`
	InputTokens   int64     `json:"input_tokens"`
	OutputTokens  int64     `json:"output_tokens"`
	CachedTokens  int64     `json:"cached_tokens"`
	CostUSD       float64   `json:"cost_usd"`
	CostEstimated bool      `json:"cost_estimated"`
	SessionID     string    `json:"session_id"`
	Tools         []string  `json:"tools"`
	Transcript    string    `json:"transcript"`
	WaitMS        int64     `json:"wait_ms"`
	Reason        string    `json:"reason"`
	To            string    `json:"to"`
	BytesDown     int64     `json:"bytes_down"`
	Error         string    `json:"error"`
	TS            time.Time `json:"ts"`
	DurationMS    int64     `json:"duration_ms"`
	AgentRun      string    `json:"agent_run"`
}

func (l *loopEnv) records(t *testing.T) []event {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(l.dir, "working-records", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no working-records/*.jsonl")
	}
	var evs []event
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				evs = append(evs, e)
			}
		}
		fh.Close()
	}
	return evs
}

func only(evs []event, name string) []event {
	var out []event
	for _, e := range evs {
		if e.Event == name {
			out = append(out, e)
		}
	}
	return out
}

func (l *loopEnv) state(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(l.dir, "working-records", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// checkDone asserts a finished two-task cycle: files, plan, records.
func (l *loopEnv) checkDone(t *testing.T, k kit, wantStatus string) []event {
	t.Helper()
	for name, want := range map[string]string{"one": "one\n", "two": "two\n"} {
		if b, err := os.ReadFile(filepath.Join(l.dir, "out", name+".txt")); err != nil || string(b) != want {
			t.Errorf("out/%s.txt = %q, %v", name, b, err)
		}
	}
	plan, _ := os.ReadFile(filepath.Join(l.dir, "output", "plan.json"))
	if bytes.Contains(plan, []byte(`"passes": false`)) || !bytes.Contains(plan, []byte(`"passes": true`)) {
		t.Errorf("plan.json still has open tasks:\n%s", plan)
	}
	evs := l.records(t)
	ends := only(evs, "agent_end")
	if len(ends) != 3 {
		t.Fatalf("%d agent_end records, want 3 (plan, two builds)", len(ends))
	}
	phases := []string{ends[0].Phase, ends[1].Phase + " " + ends[1].Task, ends[2].Phase + " " + ends[2].Task}
	if fmt.Sprint(phases) != "[plan build T-001 build T-002]" {
		t.Errorf("runs %v", phases)
	}
	for i, e := range ends {
		if e.Backend != k.backend || e.Model != k.model {
			t.Errorf("agent_end %d: backend %q model %q", i, e.Backend, e.Model)
		}
		want := "ok"
		if i > 0 {
			want = wantStatus
		}
		if e.Status != want {
			t.Errorf("agent_end %d: status %q, want %q (%s)", i, e.Status, want, e.Error)
		}
		if e.Turns < 2 || e.InputTokens <= 0 || e.OutputTokens <= 0 || e.CostUSD <= 0 || e.SessionID == "" {
			t.Errorf("agent_end %d lacks the run's numbers: turns %d in %d out %d cost %v session %q",
				i, e.Turns, e.InputTokens, e.OutputTokens, e.CostUSD, e.SessionID)
		}
		if e.CostEstimated != (k.backend != "claude") {
			t.Errorf("agent_end %d: cost_estimated %v", i, e.CostEstimated)
		}
		if !contains(e.Tools, k.writeTool) {
			t.Errorf("agent_end %d: tools %v lack %s", i, e.Tools, k.writeTool)
		}
		if e.Transcript == "" {
			t.Errorf("agent_end %d: no transcript", i)
		} else if _, err := os.Stat(filepath.Join(l.dir, e.Transcript)); err != nil {
			t.Errorf("agent_end %d: transcript %v", i, err)
		}
	}
	// Exact usage of the first build run (three replies of the script).
	if b := ends[1]; wantStatus == "ok" && (b.InputTokens != 9600 || b.OutputTokens != 235 || b.CachedTokens != 7500) {
		t.Errorf("build T-001 usage in=%d out=%d cached=%d, want 9600/235/7500", b.InputTokens, b.OutputTokens, b.CachedTokens)
	}
	stops := only(evs, "loop_stop")
	if len(stops) != 1 || stops[0].ExitCode == nil || *stops[0].ExitCode != 0 {
		t.Errorf("loop_stop records %+v, want one with exit_code 0", stops)
	}
	return evs
}

// The end-to-end loop, per CLI: the model, through the CLI's real
// tools, writes plan.json with two tasks; two build runs write the targets
// and mark them; both gates pass; exit 0; the records carry turns, tokens
// and cost.
func TestLoopCycleEndToEnd(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		looprinter(t)
		srv := startAPI(t)
		l := newLoop(t, k, srv.URL, loopOpts{})
		srv.Add(planReplies(k, l.dir)...)
		srv.Add(buildReplies(k, l.dir, "T-001", "one")...)
		srv.Add(buildReplies(k, l.dir, "T-002", "two")...)
		code, stdout, _, _ := l.run(t, 12*time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0 (DONE)", code)
		}
		if !strings.Contains(stdout, "DONE") {
			t.Errorf("the report does not say DONE")
		}
		l.checkDone(t, k, "ok")
		assertThroughProxy(t, l.records(t), srv.URL)
		if n := srv.Remaining(); n != 0 {
			t.Errorf("%d scripted replies unused", n)
		}
		st := l.state(t)
		if st["iterations"] != float64(2) {
			t.Errorf("state iterations %v, want 2", st["iterations"])
		}
		// The build prompt reached the model with its task.
		reqs := srv.ModelRequests()
		if len(reqs) < 4 || !strings.Contains(reqs[2].Body, "T-001") {
			t.Errorf("the first build request does not name T-001")
		}
		assertNoLeftovers(t, l.mark)
	})
}

// parallel: 2 with a genuine CLI: the two tasks' build runs work at once,
// each in its own layer, each conversation answered by the fake API by
// its task (a reply matches only the prompt that names it); both apply
// (the progress file keeps both findings), both gates pass, exit 0.
func TestLoopParallelEndToEnd(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		looprinter(t)
		srv := startAPI(t)
		// A cap per build run: the wave's reserve is known before any
		// build run ended, so both start at once.
		l := newLoop(t, k, srv.URL, loopOpts{extra: "parallel: 2\nagents: {build: {max_budget_usd: 1}}\n"})
		srv.Add(planReplies(k, l.dir)...)
		for _, b := range [][2]string{{"T-001", "one"}, {"T-002", "two"}} {
			for _, r := range buildReplies(k, l.dir, b[0], b[1]) {
				r.Match = "That is " + b[0] + ":"
				srv.Add(r)
			}
		}
		code, _, _, _ := l.run(t, 12*time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0 (DONE)", code)
		}
		evs := l.records(t)
		var starts, ends []event
		for _, e := range evs {
			if e.Phase == "build" && e.Event == "agent_start" {
				starts = append(starts, e)
			}
			if e.Phase == "build" && e.Event == "agent_end" {
				ends = append(ends, e)
			}
		}
		if len(starts) != 2 || len(ends) != 2 || starts[0].AgentRun == "" || starts[1].AgentRun == "" {
			t.Fatalf("build runs %+v / %+v, want two of one wave", starts, ends)
		}
		// Under way at once: each started before the other ended.
		for i := range starts {
			other := starts[1-i]
			for _, e := range ends {
				if e.AgentRun == starts[i].AgentRun && !other.TS.Before(starts[i].TS.Add(time.Duration(e.DurationMS)*time.Millisecond)) {
					t.Errorf("the run for %s started after the run for %s ended", other.Task, starts[i].Task)
				}
			}
		}
		if n := len(only(evs, "task_conflict")); n != 0 {
			t.Errorf("%d task_conflict records, want none", n)
		}
		progress, _ := os.ReadFile(filepath.Join(l.dir, "output", "progress.txt"))
		for _, want := range []string{"T-001: wrote out/one.txt", "T-002: wrote out/two.txt"} {
			if !strings.Contains(string(progress), want) {
				t.Errorf("progress.txt lacks %q:\n%s", want, progress)
			}
		}
		if st := l.state(t); st["iterations"] != float64(2) {
			t.Errorf("state iterations %v, want 2", st["iterations"])
		}
		assertNoLeftovers(t, l.mark)
	})
}

// A 429 during a build run: the engine waits (the CLI's reset time where it
// gives one, else its backoff), runs again, and the attempt is not counted.
func TestLoopRateLimitWaitsAndGoesOn(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		looprinter(t)
		srv := startAPI(t)
		l := newLoop(t, k, srv.URL, loopOpts{})
		srv.Add(planReplies(k, l.dir)...)
		srv.Add(fakeapi.RateLimit(2 * time.Second))
		srv.Add(buildReplies(k, l.dir, "T-001", "one")...)
		srv.Add(buildReplies(k, l.dir, "T-002", "two")...)
		code, _, _, _ := l.run(t, 12*time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0", code)
		}
		evs := l.checkDone(t, k, "ok")
		retries := only(evs, "agent_retry")
		if len(retries) != 1 || retries[0].Status != "rate_limited" || retries[0].Task != "T-001" {
			t.Fatalf("agent_retry records %+v, want one rate_limited on T-001", retries)
		}
		if k.backend == "gemini" && retries[0].WaitMS != 2000 {
			t.Errorf("waited %dms, want the 2s the API asked for", retries[0].WaitMS)
		}
		if retries[0].WaitMS <= 0 {
			t.Errorf("no wait recorded")
		}
		if st := l.state(t); st["iterations"] != float64(2) {
			t.Errorf("state iterations %v, want 2: a rate limit is not an attempt", st["iterations"])
		}
	})
}

// A run capped by max_turns is not an error: its work is verified as usual.
func TestLoopCappedRunStillVerified(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		if k.backend == "codex" {
			t.Skip("codex exec has no max-turns setting")
		}
		if ok, why := geminiTurnsSupported(); k.backend == "gemini" && !ok {
			t.Skip(why)
		}
		looprinter(t)
		srv := startAPI(t)
		l := newLoop(t, k, srv.URL, loopOpts{maxTurns: 2})
		srv.Add(planReplies(k, l.dir)...)
		for _, b := range [][2]string{{"T-001", "one"}, {"T-002", "two"}} {
			r := buildReplies(k, l.dir, b[0], b[1])
			// The model would go on after marking the task (its second
			// turn ends in a tool call); the cap stops it there.
			srv.Add(r[0], r[1])
		}
		code, _, _, _ := l.run(t, 12*time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0", code)
		}
		l.checkDone(t, k, "capped")
	})
}

// A refused key: BLOCKED (exit 4) within seconds, with how to fix it.
func TestLoopUnauthorizedBlocks(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		looprinter(t)
		srv := startAPI(t, fakeapi.Fail(401, "invalid api key"), fakeapi.Fail(401, "invalid api key"))
		l := newLoop(t, k, srv.URL, loopOpts{})
		start := time.Now()
		code, stdout, stderr, _ := l.run(t, 5*time.Minute)
		end := time.Now()
		if code != 4 {
			t.Fatalf("exit %d, want 4 (BLOCKED)", code)
		}
		if d := sinceRefusal(t, srv, start, end); d > 20*time.Second {
			t.Errorf("took %s from the refusal; a 401 must block within seconds", d)
		}
		if !strings.Contains(stdout+stderr, "fix:") {
			t.Errorf("the report does not say how to fix it")
		}
		ends := only(l.records(t), "agent_end")
		if len(ends) != 1 || ends[0].Status != "blocked" {
			t.Errorf("agent_end %+v, want one blocked run", ends)
		}
		assertNoLeftovers(t, l.mark)
	})
}

// The API is down: every run is bounded by the timeouts (Codex never gives
// up on its own), the loop stops on its budget, and no process is left.
func TestLoopServerDownBounded(t *testing.T) {
	eachCLI(t, func(t *testing.T, k kit) {
		looprinter(t)
		l := newLoop(t, k, deadURL(t), loopOpts{timeout: "8s", idle: "4s",
			budget: "  iterations: 2\n  cycles: 1\n  wall: 2m\n  api_retries: 1\n"})
		// Backoffs between API-error retries are the engine's (5s, 15s): allow them.
		code, _, _, took := l.run(t, 2*time.Minute)
		if code == 0 {
			t.Fatalf("exit 0 with the API down")
		}
		if took > 90*time.Second {
			t.Errorf("took %s", took)
		}
		ends := only(l.records(t), "agent_end")
		if len(ends) == 0 {
			t.Fatalf("no agent_end record")
		}
		for _, e := range ends {
			switch e.Status {
			case "api_error", "timeout", "idle_timeout", "blocked":
			default:
				t.Errorf("agent_end status %q (%s)", e.Status, e.Error)
			}
		}
		assertNoLeftovers(t, l.mark)
	})
}

// assertThroughProxy: under bubblewrap (the default sandbox where it runs)
// the CLI reached the model API only through the loop's proxy: every one of
// its connections is a net_allowed record to the API's host:port with a
// reply, and none was refused.
func assertThroughProxy(t *testing.T, evs []event, url string) {
	t.Helper()
	if kind, err := sandbox.Resolve(sandbox.Auto); err != nil || kind != sandbox.Bwrap {
		t.Logf("not under bubblewrap here (%s %v): the network is not confined, nothing to check", kind, err)
		return
	}
	host := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://"), "/")
	allowed := only(evs, "net_allowed")
	if len(allowed) == 0 {
		t.Fatalf("no net_allowed record: the CLI did not go through the loop's proxy to %s", host)
	}
	for _, e := range allowed {
		if e.To != host || e.BytesDown == 0 {
			t.Errorf("net_allowed to %q with %d bytes back, want %s with a reply", e.To, e.BytesDown, host)
		}
	}
	for _, e := range only(evs, "net_refused") {
		t.Errorf("the proxy refused %s: %s", e.To, e.Reason)
	}
}
