package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// API names the wire protocol a request came in on.
type API string

const (
	Anthropic API = "anthropic" // POST /v1/messages
	Responses API = "responses" // POST /v1/responses (OpenAI Responses, Codex)
	Gemini    API = "gemini"    // POST /v1beta/models/M:streamGenerateContent
	Other     API = "other"     // anything else (answered, not scripted)
)

// Request is one recorded request.
type Request struct {
	Time   time.Time           `json:"time"`
	Method string              `json:"method"`
	Path   string              `json:"path"` // with the query string
	API    API                 `json:"api"`
	Header map[string][]string `json:"header,omitempty"`
	Body   string              `json:"body"`
	// Reply is the index in the script of the reply it got; -1 when it got
	// none from the script (not a model request, or the script ran out).
	Reply int `json:"reply"`
}

// JSON decodes the body into v.
func (r Request) JSON(v any) error { return json.Unmarshal([]byte(r.Body), v) }

// Server is a running fake API.
type Server struct {
	URL string // http://127.0.0.1:PORT

	mu       sync.Mutex
	script   Script
	used     []bool
	requests []Request
	notify   chan struct{}
	closed   chan struct{}
	onReq    func(Request)

	ln  net.Listener
	srv *http.Server
	seq int
}

// Start listens on 127.0.0.1 on a free port and serves the script.
func Start(script Script) (*Server, error) { return Listen("127.0.0.1:0", script) }

// Listen serves the script on addr, which must be a loopback address.
func Listen(addr string, script Script) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("fakeapi: refusing to listen on %s: loopback addresses only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String(),
		script: script,
		used:   make([]bool, len(script.Replies)),
		notify: make(chan struct{}),
		closed: make(chan struct{}),
		ln:     ln,
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server, ending hung replies.
func (s *Server) Close() error {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.srv.SetKeepAlivesEnabled(false)
	err := s.srv.Close()
	return err
}

// OnRequest sets a function called with each request once it is answered
// (for logging). Set it before requests arrive.
func (s *Server) OnRequest(f func(Request)) {
	s.mu.Lock()
	s.onReq = f
	s.mu.Unlock()
}

// Requests returns a copy of every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ModelRequests returns the requests that were model calls (any API).
func (s *Server) ModelRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.API != Other {
			out = append(out, r)
		}
	}
	return out
}

// Remaining is the number of scripted replies not used yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.used {
		if !u {
			n++
		}
	}
	return n
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script.Replies = append(s.script.Replies, replies...)
	s.used = append(s.used, make([]bool, len(replies))...)
}

// WaitRequests waits until at least n model requests have arrived.
func (s *Server) WaitRequests(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		count := 0
		for _, r := range s.requests {
			if r.API != Other {
				count++
			}
		}
		ch := s.notify
		s.mu.Unlock()
		if count >= n {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	close(s.notify)
	s.notify = make(chan struct{})
	f := s.onReq
	s.mu.Unlock()
	if f != nil {
		f(r)
	}
}

// take returns the next reply for a request body.
func (s *Server) take(body string) (Reply, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.script.Replies {
		if s.used[i] {
			continue
		}
		if r.Match != "" && !strings.Contains(body, r.Match) {
			continue
		}
		s.used[i] = true
		return r, i, true
	}
	if s.script.Exhausted != nil {
		return *s.script.Exhausted, -1, true
	}
	return Reply{}, -1, false
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s_fake%04d", prefix, s.seq)
}

func classify(r *http.Request) API {
	p := r.URL.Path
	switch {
	case r.Method != http.MethodPost:
		return Other
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return Other
	case strings.HasSuffix(p, "/messages"):
		return Anthropic
	case strings.HasSuffix(p, "/responses"):
		return Responses
	case strings.Contains(p, ":streamGenerateContent") || strings.Contains(p, ":generateContent"):
		return Gemini
	}
	return Other
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	api := classify(r)
	rec := Request{Time: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), API: api,
		Header: r.Header.Clone(), Body: string(body), Reply: -1}
	if api == Other {
		s.record(rec)
		s.serveOther(w, r, body)
		return
	}
	reply, idx, ok := s.take(string(body))
	rec.Reply = idx
	s.record(rec)
	if !ok {
		reply = Reply{Error: &Error{Status: 500, Message: fmt.Sprintf("fakeapi: script exhausted (request %s %s)", r.Method, r.URL.Path)}}
	}
	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	if reply.Stall {
		s.stall(w, r, api, body)
		return
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay.D()):
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
	if reply.Error != nil {
		s.serveError(w, api, reply.Error)
		return
	}
	var req map[string]any
	json.Unmarshal(body, &req)
	switch api {
	case Anthropic:
		s.serveAnthropic(w, req, reply)
	case Responses:
		s.serveResponses(w, req, reply)
	case Gemini:
		s.serveGemini(w, r, reply)
	}
}

// stallEvery is how often a Stall reply sends its keep-alive.
var stallEvery = 2 * time.Second

// stall sends the headers of the reply the request asked for, streamed or
// not, then a keep-alive every stallEvery until the request or the server
// ends.
func (s *Server) stall(w http.ResponseWriter, r *http.Request, api API, body []byte) {
	var req map[string]any
	json.Unmarshal(body, &req)
	streamed, _ := req["stream"].(bool)
	switch api {
	case Responses:
		streamed = true
	case Gemini:
		streamed = strings.Contains(r.URL.Path, ":streamGenerateContent")
	}
	keepAlive := " "
	if streamed {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		keepAlive = ": keep-alive\n\n"
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	tick := time.NewTicker(stallEvery)
	defer tick.Stop()
	for {
		if _, err := io.WriteString(w, keepAlive); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
}

func (s *Server) serveOther(w http.ResponseWriter, r *http.Request, body []byte) {
	p := r.URL.Path
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4+1)
	case strings.Contains(p, ":countTokens"):
		fmt.Fprintf(w, `{"totalTokens":%d}`, len(body)/4+1)
	case strings.HasSuffix(p, "/models") && r.Method == http.MethodGet:
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"fakeapi: no such endpoint %s %s"}}`, r.Method, p)
	}
}

func (s *Server) serveError(w http.ResponseWriter, api API, e *Error) {
	status := e.Status
	if status == 0 {
		status = 500
	}
	for k, v := range e.Headers {
		w.Header().Set(k, v)
	}
	secs := int(e.RetryAfter.D().Round(time.Second) / time.Second)
	if e.RetryAfter > 0 && secs == 0 {
		secs = 1
	}
	if e.RetryAfter > 0 && w.Header().Get("retry-after") == "" {
		w.Header().Set("retry-after", strconv.Itoa(secs))
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	body := e.Body
	if body == "" {
		body = errorBody(api, status, msg, secs)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func errorBody(api API, status int, msg string, retrySecs int) string {
	switch api {
	case Anthropic:
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		return mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	case Responses:
		typ := map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
			429: "rate_limit_exceeded"}[status]
		if typ == "" {
			typ = "server_error"
		}
		code := map[int]string{401: "invalid_api_key", 429: "rate_limit_exceeded", 404: "model_not_found"}[status]
		e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
		if code != "" {
			e["code"] = code
		}
		return mustJSON(map[string]any{"error": e})
	default:
		st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
			404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
		if st == "" {
			st = "INTERNAL"
		}
		e := map[string]any{"code": status, "message": msg, "status": st}
		if retrySecs > 0 {
			e["details"] = []any{map[string]any{
				"@type":      "type.googleapis.com/google.rpc.RetryInfo",
				"retryDelay": strconv.Itoa(retrySecs) + "s",
			}}
		}
		return mustJSON(map[string]any{"error": e})
	}
}

func mustJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func usageOr(u Usage) Usage {
	if u.Input == 0 {
		u.Input = 100
	}
	if u.Output == 0 {
		u.Output = 20
	}
	return u
}

type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sse{w: w, f: f}
}

func (s sse) event(name string, data any) {
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", mustJSON(data))
	if s.f != nil {
		s.f.Flush()
	}
}

func argsJSON(tc ToolCall) string {
	if tc.Args == nil {
		return "{}"
	}
	return mustJSON(tc.Args)
}

// --- Anthropic Messages API ---

func (s *Server) serveAnthropic(w http.ResponseWriter, req map[string]any, reply Reply) {
	model, _ := req["model"].(string)
	u := usageOr(reply.Usage)
	// Usage.Input counts cached tokens too; Anthropic reports them apart.
	fresh := u.Input - u.Cached
	if fresh < 0 {
		fresh = 0
	}
	usage := map[string]any{"input_tokens": fresh, "output_tokens": u.Output,
		"cache_read_input_tokens": u.Cached, "cache_creation_input_tokens": 0}
	var blocks []map[string]any
	if reply.Text != "" || len(reply.Tools) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": reply.Text})
	}
	for _, tc := range reply.Tools {
		id := tc.ID
		if id == "" {
			id = s.nextID("toolu")
		}
		args := tc.Args
		if args == nil {
			args = map[string]any{}
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": tc.Name, "input": args})
	}
	stop := "end_turn"
	if len(reply.Tools) > 0 {
		stop = "tool_use"
	}
	msgID := s.nextID("msg")
	if stream, _ := req["stream"].(bool); !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, mustJSON(map[string]any{"id": msgID, "type": "message", "role": "assistant",
			"model": model, "content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage}))
		return
	}
	ev := newSSE(w)
	ev.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": fresh, "output_tokens": 1,
			"cache_read_input_tokens": u.Cached, "cache_creation_input_tokens": 0}}})
	for i, b := range blocks {
		if b["type"] == "text" {
			ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": mustJSON(b["input"])}})
		}
		ev.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	ev.event("message_stop", map[string]any{"type": "message_stop"})
}

// --- OpenAI Responses API ---

func (s *Server) serveResponses(w http.ResponseWriter, req map[string]any, reply Reply) {
	model, _ := req["model"].(string)
	u := usageOr(reply.Usage)
	respID := s.nextID("resp")
	ev := newSSE(w)
	base := map[string]any{"id": respID, "object": "response", "model": model, "status": "in_progress",
		"created_at": time.Now().Unix(), "output": []any{}}
	ev.event("response.created", map[string]any{"type": "response.created", "response": base})
	var items []any
	idx := 0
	if reply.Text != "" || len(reply.Tools) == 0 {
		item := map[string]any{"type": "message", "id": s.nextID("msg"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}}}
		ev.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": item})
		items = append(items, item)
		idx++
	}
	for _, tc := range reply.Tools {
		callID := tc.ID
		if callID == "" {
			callID = s.nextID("call")
		}
		var item map[string]any
		if tc.Input != "" {
			item = map[string]any{"type": "custom_tool_call", "id": s.nextID("ctc"), "call_id": callID,
				"name": tc.Name, "input": tc.Input, "status": "completed"}
		} else {
			item = map[string]any{"type": "function_call", "id": s.nextID("fc"), "call_id": callID,
				"name": tc.Name, "arguments": argsJSON(tc), "status": "completed"}
		}
		ev.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": item})
		items = append(items, item)
		idx++
	}
	done := map[string]any{"id": respID, "object": "response", "model": model, "status": "completed",
		"created_at": time.Now().Unix(), "output": items,
		"usage": map[string]any{"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
			"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": u.Input + u.Output}}
	ev.event("response.completed", map[string]any{"type": "response.completed", "response": done})
}

// --- Gemini generateContent ---

func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request, reply Reply) {
	u := usageOr(reply.Usage)
	model := r.URL.Path
	if i := strings.LastIndex(model, "/models/"); i >= 0 {
		model = model[i+len("/models/"):]
	}
	model, _, _ = strings.Cut(model, ":")
	var parts []any
	if reply.Text != "" || len(reply.Tools) == 0 {
		parts = append(parts, map[string]any{"text": reply.Text})
	}
	for _, tc := range reply.Tools {
		args := tc.Args
		if args == nil {
			args = map[string]any{}
		}
		fc := map[string]any{"name": tc.Name, "args": args}
		if tc.ID != "" {
			fc["id"] = tc.ID
		}
		parts = append(parts, map[string]any{"functionCall": fc})
	}
	chunk := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": u.Input, "candidatesTokenCount": u.Output,
			"cachedContentTokenCount": u.Cached, "totalTokenCount": u.Input + u.Output},
		"modelVersion": model, "responseId": s.nextID("gem"),
	}
	if strings.Contains(r.URL.Path, ":streamGenerateContent") {
		ev := newSSE(w)
		ev.event("", chunk)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, mustJSON(chunk))
}
