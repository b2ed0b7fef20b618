package fakeapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvents reads "event:"/"data:" pairs; data is decoded JSON.
func sseEvents(t *testing.T, r io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			names = append(names, name)
			data = append(data, d)
			name = ""
		}
	}
	return names, data
}

func start(t *testing.T, replies ...Reply) *Server {
	t.Helper()
	s, err := Start(Script{Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAnthropicStreaming(t *testing.T) {
	s := start(t, Reply{Text: "hi", Tools: []ToolCall{{Name: "Write", Args: map[string]any{"file_path": "/x", "content": "y"}}},
		Usage: Usage{Input: 100, Output: 7, Cached: 40}})
	resp := post(t, s.URL+"/v1/messages?beta=true", `{"model":"claude-x","stream":true,"messages":[]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	names, data := sseEvents(t, resp.Body)
	want := "message_start content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %s", got)
	}
	msg := data[0]["message"].(map[string]any)
	if msg["model"] != "claude-x" || msg["usage"].(map[string]any)["input_tokens"] != float64(60) ||
		msg["usage"].(map[string]any)["cache_read_input_tokens"] != float64(40) {
		t.Errorf("message_start %v", msg)
	}
	if d := data[2]["delta"].(map[string]any); d["text"] != "hi" {
		t.Errorf("text delta %v", d)
	}
	tool := data[4]["content_block"].(map[string]any)
	if tool["type"] != "tool_use" || tool["name"] != "Write" || !strings.HasPrefix(tool["id"].(string), "toolu_") {
		t.Errorf("tool block %v", tool)
	}
	var args map[string]any
	json.Unmarshal([]byte(data[5]["delta"].(map[string]any)["partial_json"].(string)), &args)
	if args["file_path"] != "/x" {
		t.Errorf("tool args %v", args)
	}
	if d := data[7]["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("stop reason %v", d)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].API != Anthropic || reqs[0].Path != "/v1/messages?beta=true" || reqs[0].Reply != 0 ||
		!strings.Contains(reqs[0].Body, "claude-x") {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	s := start(t, Text("plain"))
	resp := post(t, s.URL+"/v1/messages", `{"model":"m","stream":false}`)
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	content := m["content"].([]any)[0].(map[string]any)
	if m["type"] != "message" || content["text"] != "plain" || m["stop_reason"] != "end_turn" {
		t.Errorf("%v", m)
	}
}

func TestResponsesStreaming(t *testing.T) {
	s := start(t,
		Reply{Tools: []ToolCall{{Name: "exec_command", Args: map[string]any{"cmd": "ls"}}, {Name: "apply_patch", Input: "*** Begin Patch\n*** End Patch\n"}},
			Usage: Usage{Input: 50, Output: 5, Cached: 10}},
	)
	resp := post(t, s.URL+"/v1/responses", `{"model":"gpt-5.5","stream":true}`)
	names, data := sseEvents(t, resp.Body)
	if got := strings.Join(names, " "); got != "response.created response.output_item.done response.output_item.done response.completed" {
		t.Fatalf("events %s", got)
	}
	fc := data[1]["item"].(map[string]any)
	if fc["type"] != "function_call" || fc["name"] != "exec_command" || fc["arguments"] != `{"cmd":"ls"}` || fc["call_id"] == "" {
		t.Errorf("function call %v", fc)
	}
	ct := data[2]["item"].(map[string]any)
	if ct["type"] != "custom_tool_call" || ct["input"] != "*** Begin Patch\n*** End Patch\n" {
		t.Errorf("custom tool call %v", ct)
	}
	u := data[3]["response"].(map[string]any)["usage"].(map[string]any)
	if u["input_tokens"] != float64(50) || u["output_tokens"] != float64(5) ||
		u["input_tokens_details"].(map[string]any)["cached_tokens"] != float64(10) {
		t.Errorf("usage %v", u)
	}
}

func TestGeminiStreaming(t *testing.T) {
	s := start(t, GeminiShell("echo hi"), Text("done"))
	resp := post(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"contents":[]}`)
	_, data := sseEvents(t, resp.Body)
	if len(data) != 1 {
		t.Fatalf("%d chunks", len(data))
	}
	cand := data[0]["candidates"].([]any)[0].(map[string]any)
	part := cand["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	fc := part["functionCall"].(map[string]any)
	if fc["name"] != "run_shell_command" || fc["args"].(map[string]any)["command"] != "echo hi" || cand["finishReason"] != "STOP" {
		t.Errorf("%v", cand)
	}
	if data[0]["modelVersion"] != "gemini-2.5-flash" {
		t.Errorf("model %v", data[0]["modelVersion"])
	}
	// Non-streaming generateContent answers one JSON object.
	resp = post(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", `{}`)
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m["candidates"] == nil {
		t.Errorf("generateContent: %v %v", m, err)
	}
}

func TestErrorsShapedPerAPI(t *testing.T) {
	s := start(t, RateLimit(30*time.Second), RateLimit(30*time.Second), RateLimit(30*time.Second),
		Reply{Error: &Error{Status: 418, Body: "raw", Headers: map[string]string{"x-test": "1"}}})
	for _, c := range []struct{ path, want string }{
		{"/v1/messages", `"type":"rate_limit_error"`},
		{"/v1/responses", `"code":"rate_limit_exceeded"`},
		{"/v1beta/models/g:streamGenerateContent", `"retryDelay":"30s"`},
	} {
		resp := post(t, s.URL+c.path, `{}`)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 429 || resp.Header.Get("retry-after") != "30" || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %q %s", c.path, resp.StatusCode, resp.Header.Get("retry-after"), body)
		}
	}
	resp := post(t, s.URL+"/v1/messages", `{}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 418 || string(body) != "raw" || resp.Header.Get("x-test") != "1" {
		t.Errorf("raw error: %d %s", resp.StatusCode, body)
	}
}

func TestExhaustedAndMatch(t *testing.T) {
	s := start(t, Reply{Text: "second", Match: "NEEDLE"}, Text("first"))
	text := func(body string) string {
		resp := post(t, s.URL+"/v1/messages", body)
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			return "error " + string(b)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return m["content"].([]any)[0].(map[string]any)["text"].(string)
	}
	if got := text(`{"x":"other"}`); got != "first" {
		t.Errorf("got %q: a reply with Match must wait for its request", got)
	}
	if got := text(`{"x":"NEEDLE"}`); got != "second" {
		t.Errorf("got %q", got)
	}
	if got := text(`{}`); !strings.Contains(got, "script exhausted") {
		t.Errorf("got %q, want a loud error once the script is used up", got)
	}
	if s.Remaining() != 0 {
		t.Errorf("remaining %d", s.Remaining())
	}
}

func TestHangEndsOnClose(t *testing.T) {
	s, err := Start(Script{Replies: []Reply{{Hang: true}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if !s.WaitRequests(1, time.Minute) { // a guard against a hang only
		t.Fatal("request never arrived")
	}
	select {
	case <-done:
		t.Fatal("a hung reply answered")
	case <-time.After(300 * time.Millisecond):
	}
	s.Close()
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("Close did not end the hung request")
	}
}

func TestLoopbackOnly(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", Script{}); err == nil {
		t.Error("listening on all interfaces must be refused")
	}
	s, err := Start(Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL %s", s.URL)
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	y := filepath.Join(dir, "s.yaml")
	os.WriteFile(y, []byte(`replies:
  - tools: [{name: Write, args: {file_path: /a, content: b}}]
    usage: {input: 10, output: 2}
  - error: {status: 429, retry_after: 2s}
  - {text: done, delay: 0.5}
exhausted: {text: fallback}
`), 0o644)
	s, err := LoadScript(y)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Replies) != 3 || s.Replies[0].Tools[0].Args["file_path"] != "/a" || s.Replies[1].Error.RetryAfter.D() != 2*time.Second ||
		s.Replies[2].Delay.D() != 500*time.Millisecond || s.Exhausted.Text != "fallback" {
		t.Errorf("%+v", s)
	}
	j := filepath.Join(dir, "s.json")
	os.WriteFile(j, []byte(`{"replies":[{"text":"hi","delay":"1s"}]}`), 0o644)
	if s, err := LoadScript(j); err != nil || s.Replies[0].Delay.D() != time.Second {
		t.Errorf("%+v %v", s, err)
	}
	os.WriteFile(j, []byte(`{"replies":[{"txt":"typo"}]}`), 0o644)
	if _, err := LoadScript(j); err == nil {
		t.Error("an unknown field must be an error")
	}
}

func TestCodexAddFile(t *testing.T) {
	got := CodexAddFile("a/b.txt", "one\ntwo\n")
	if got != "*** Begin Patch\n*** Add File: a/b.txt\n+one\n+two\n*** End Patch\n" {
		t.Errorf("%q", got)
	}
}

// A Stall answers the headers at once, then only keep-alives, for as long
// as the server runs: a client waits on it whatever its timeouts on the
// headers or between chunks (Gemini CLI gives up on a Hang, no headers,
// after 60s).
func TestStallSendsHeadersThenOnlyKeepAlives(t *testing.T) {
	defer func(d time.Duration) { stallEvery = d }(stallEvery)
	stallEvery = 20 * time.Millisecond
	cases := []struct {
		name, path, body, ctype, keepAlive string
	}{
		{"anthropic stream", "/v1/messages", `{"stream":true}`, "text/event-stream", ": keep-alive\n\n"},
		{"anthropic", "/v1/messages", `{"stream":false}`, "application/json", " "},
		{"responses", "/v1/responses", `{}`, "text/event-stream", ": keep-alive\n\n"},
		{"gemini stream", "/v1beta/models/m:streamGenerateContent?alt=sse", `{}`, "text/event-stream", ": keep-alive\n\n"},
		{"gemini", "/v1beta/models/m:generateContent", `{}`, "application/json", " "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Start(Script{Replies: []Reply{{Stall: true}}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// The headers come at once, whatever the client allows for them.
			client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: time.Minute}}
			resp, err := client.Post(s.URL+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.ctype) {
				t.Fatalf("status %d content type %q, want 200 %s", resp.StatusCode, resp.Header.Get("Content-Type"), c.ctype)
			}
			// Keep-alives go on coming: read three, then close the server.
			buf := make([]byte, 3*len(c.keepAlive))
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatalf("reading the keep-alives: %v", err)
			}
			s.Close()
			rest, _ := io.ReadAll(resp.Body)
			got := string(buf) + string(rest)
			if strings.ReplaceAll(got, c.keepAlive, "") != "" {
				t.Errorf("the body had more than keep-alives: %q", got)
			}
		})
	}
}
