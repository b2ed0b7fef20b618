//go:build !windows

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/looprinter/looprinter/internal/fakeapi"
)

// mcpSession starts `looprinter mcp ARGS` and connects the Go SDK's client
// to it over stdio.
func mcpSession(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	bin := looprinter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "looprinter-e2e", Version: "1"}, nil)
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Stderr = os.Stderr
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to looprinter mcp: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call calls a tool and decodes its structured result into out.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s failed: %s", tool, toolText(res))
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v in %s", tool, err, b)
		}
	}
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type mcpStatus struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Outcome  string `json:"outcome"`
	Line     string `json:"line"`
	Question *struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"question"`
	Guidance []struct {
		ID string `json:"id"`
	} `json:"guidance"`
}

// waitStatus polls loop_status until ok says so.
func waitStatus(t *testing.T, s *mcp.ClientSession, name string, what string, ok func(mcpStatus) bool) mcpStatus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var st mcpStatus
	for time.Now().Before(deadline) {
		st = mcpStatus{}
		call(t, s, "loop_status", map[string]any{"loop": name}, &st)
		if ok(st) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("loop %s never %s: last status %+v", name, what, st)
	return st
}

// A real MCP client (the Go SDK's, over stdio, against the built binary)
// lists the tools and drives a loop from start to DONE: start, a question
// it answers, guidance, pause and resume, the records, the cost and the
// report.
func TestMCPClientDrivesLoop(t *testing.T) {
	bin := looprinter(t)
	// A registry of its own: under -count=2 the loop of the first run
	// would share the name and make "mcp-driven" ambiguous.
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("loop.yaml", `name: mcp-driven
objective: "three files exist under out/"
agent: {backend: command, command: "`+bin+` fake-agent --script agent.txt", timeout: 30s}
verify: [test -s out/one.txt]
objective_verify: [test -s out/three.txt]
`)
	write("agent.txt", "== plan\nauto\n== build\nsay <ask id=\"q1\">Which greeting?</ask>\n== build\nauto\nsay <ack/>\n")

	s := mcpSession(t)
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil || tl.Description == "" {
			t.Errorf("tool %s has no input schema or no description", tl.Name)
		}
	}
	for _, want := range []string{"loop_list", "loop_status", "loop_records", "loop_cost", "loop_start", "loop_pause", "loop_resume", "loop_stop", "loop_answer", "loop_guide"} {
		if !slices.Contains(names, want) {
			t.Errorf("tool %s missing from %v", want, names)
		}
	}

	var started struct {
		Loop, State, Output string
	}
	call(t, s, "loop_start", map[string]any{"loop": filepath.Join(dir, "loop.yaml")}, &started)
	if started.Loop != "mcp-driven" {
		t.Fatalf("loop_start: %+v", started)
	}
	var list struct {
		Loops []struct{ Name, State string } `json:"loops"`
	}
	call(t, s, "loop_list", nil, &list)
	listed := false
	for _, l := range list.Loops {
		listed = listed || l.Name == "mcp-driven"
	}
	if !listed {
		t.Fatalf("loop_list lacks mcp-driven: %+v", list)
	}

	st := waitStatus(t, s, "mcp-driven", "waited for an answer", func(st mcpStatus) bool { return st.State == "waiting" })
	if st.Question == nil || st.Question.ID != "q1" || st.Question.Text != "Which greeting?" {
		t.Fatalf("waiting without the question: %+v", st)
	}
	// A wrong id is refused as a tool error, and the loop keeps waiting.
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "loop_answer", Arguments: map[string]any{"loop": "mcp-driven", "id": "q2", "text": "x"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "waits for the answer to q1") {
		t.Fatalf("answer to the wrong id: %v %+v", err, res)
	}
	call(t, s, "loop_guide", map[string]any{"loop": "mcp-driven", "text": "Say hello in English."}, nil)
	var paused struct{ State string }
	call(t, s, "loop_pause", map[string]any{"loop": "mcp-driven"}, &paused)
	call(t, s, "loop_resume", map[string]any{"loop": "mcp-driven"}, nil)
	call(t, s, "loop_answer", map[string]any{"loop": "mcp-driven", "id": "q1", "text": "Hello, world."}, nil)

	st = waitStatus(t, s, "mcp-driven", "finished", func(st mcpStatus) bool { return st.State == "finished" })
	if st.Outcome != "done" || len(st.Guidance) != 0 {
		t.Fatalf("finished but not DONE with the guidance acknowledged: %+v", st)
	}

	var recs struct {
		Records []struct {
			Text   string
			Record struct{ Event, ID, By, Message string }
		}
	}
	call(t, s, "loop_records", map[string]any{"loop": "mcp-driven", "limit": 200}, &recs)
	seen := map[string]bool{}
	for _, r := range recs.Records {
		seen[r.Record.Event] = true
		if r.Record.Event == "answer" && (r.Record.By != "looprinter mcp" || r.Record.Message != "Hello, world.") {
			t.Errorf("answer record %+v", r.Record)
		}
	}
	for _, ev := range []string{"question", "answer", "guidance", "guidance_ack", "loop_stop"} {
		if !seen[ev] {
			t.Errorf("no %s record among %d records", ev, len(recs.Records))
		}
	}
	var cost struct {
		Dir string `json:"dir"`
	}
	call(t, s, "loop_cost", map[string]any{"loop": "mcp-driven"}, &cost)
	if cost.Dir != dir {
		t.Errorf("loop_cost dir %q, want %q", cost.Dir, dir)
	}
	rr, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "looprinter://loops/mcp-driven/report"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "## Outcome: DONE (exit 0)") {
		t.Fatalf("report: %v %+v", err, rr)
	}
	prompt, _ := filepath.Glob(filepath.Join(dir, "working-records", "transcripts", "0003-*-build-T-001.prompt.md"))
	if len(prompt) != 1 {
		t.Fatalf("no prompt of the run after the answer: %v", prompt)
	}
	text, _ := os.ReadFile(prompt[0])
	if !strings.Contains(string(text), "| Hello, world.") || !strings.Contains(string(text), "| Say hello in English.") {
		t.Errorf("the prompt after the answer lacks the answer or the guidance:\n%s", text)
	}
}

// --read-only serves only the tools that read.
func TestMCPReadOnly(t *testing.T) {
	s := mcpSession(t, "--read-only")
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"loop_cost", "loop_list", "loop_records", "loop_status"}; !slices.Equal(names, want) {
		t.Fatalf("read-only tools %v, want %v", names, want)
	}
}

// The genuine Claude Code CLI, configured with `looprinter mcp` as an MCP
// server, calls loop_status in a scripted turn: the model (the fake API)
// answers with a tool_use of mcp__looprinter__loop_status, Claude Code calls
// the server, and the tool's result (the loop's status) goes back to the
// model in the next request.
func TestClaudeCallsLoopStatus(t *testing.T) {
	k := kits[0]
	if k.backend != "claude" {
		t.Fatal("kits[0] is not claude")
	}
	k.bin = findCLI(t, "claude")
	bin := looprinter(t)

	// A loop that ran to DONE, for the server to report.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(`name: claude-sees
objective: "three files exist under out/"
agent: {backend: command, command: "`+bin+` fake-agent", timeout: 30s}
verify: [test -s out/one.txt]
objective_verify: [test -s out/three.txt]
`), 0o644)
	run := exec.Command(bin, "run")
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("looprinter run: %v\n%s", err, out)
	}

	srv := startAPI(t,
		fakeapi.Tool("mcp__looprinter__loop_status", map[string]any{"loop": "claude-sees"}),
		fakeapi.Text("The loop claude-sees is DONE."),
	)
	r := newRun(t, k, srv.URL, "What is the status of the loop claude-sees?")
	config, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"looprinter": map[string]any{"type": "stdio", "command": bin, "args": []string{"mcp"},
			"env": map[string]string{"LOOPRINTER_STATE_DIR": os.Getenv("LOOPRINTER_STATE_DIR")}},
	}})
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, config, 0o600); err != nil {
		t.Fatal(err)
	}
	r.req.Args = []string{"--mcp-config", cfg, "--strict-mcp-config"}
	r.req.Permissions = []string{"bypass"}
	res := r.do(t)
	reqs := srv.ModelRequests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests, want 2 (the tool call and the answer); status %s: %s", len(reqs), res.Status, res.Error)
	}
	// What Claude Code (2.1) sends: the server's tools, named
	// mcp__<server>__<tool>, as deferred tools: their names listed in the
	// system prompt (not in the request's tools array), loaded on demand.
	for _, name := range []string{"loop_list", "loop_status", "loop_records", "loop_cost", "loop_start", "loop_pause", "loop_resume", "loop_stop", "loop_answer", "loop_guide"} {
		if !strings.Contains(reqs[0].Body, `\n`+"mcp__looprinter__"+name+`\n`) {
			t.Errorf("the first request does not list mcp__looprinter__%s", name)
		}
	}
	// The tool ran: its result, the loop's status, went back to the model.
	last := reqs[len(reqs)-1].Body
	for _, want := range []string{"tool_result", `\"state\":\"finished\"`, "Stopped: DONE (exit 0)"} {
		if !strings.Contains(last, want) {
			t.Errorf("the request after the tool call lacks %s:\n%s", want, tail(last, 3000))
		}
	}
	if res.Status != "ok" || !strings.Contains(res.FinalMessage, "is DONE") {
		t.Errorf("status %s, final message %q", res.Status, res.FinalMessage)
	}
	if !slices.Contains(res.Tools, "mcp__looprinter__loop_status") {
		t.Errorf("tools %v lack mcp__looprinter__loop_status", res.Tools)
	}
}
