// Package fakeapi is a fake model API for tests: it speaks enough of the
// Anthropic Messages API, the OpenAI Responses API and the Gemini
// generateContent API for the genuine Claude Code, Codex and Gemini CLIs to
// run against it, with scripted replies, and records every request it gets.
//
// It listens on 127.0.0.1 only. A script is a queue of replies; every model
// request takes the next one, whatever the API. A reply is text, tool calls,
// usage numbers, or an error (status, body, headers).
package fakeapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Reply is one scripted answer to one model request.
type Reply struct {
	// Text is the assistant's text. With tool calls it comes first.
	Text string `json:"text,omitempty" yaml:"text,omitempty"`
	// Tools are tool calls, in order. Their shape depends on the API the
	// request came in on: Claude tool_use blocks, Responses function_call
	// (or custom_tool_call when Custom is set), Gemini functionCall parts.
	Tools []ToolCall `json:"tools,omitempty" yaml:"tools,omitempty"`
	// Usage reported with the reply. Zero values get small defaults.
	Usage Usage `json:"usage,omitempty" yaml:"usage,omitempty"`
	// Error makes the request fail with this status, body and headers.
	Error *Error `json:"error,omitempty" yaml:"error,omitempty"`
	// Delay waits this long before answering (a slow model).
	Delay Duration `json:"delay,omitempty" yaml:"delay,omitempty"`
	// Hang never answers: the connection stays open until the client goes
	// away or the server is closed (a dead network).
	Hang bool `json:"hang,omitempty" yaml:"hang,omitempty"`
	// Stall answers 200 with the headers of the reply, then never sends
	// the reply: only a keep-alive every 2s (an SSE comment on a
	// stream, a space in a JSON body), until the client goes away or the
	// server is closed. A model that accepted the request and never
	// answers, which no timeout of the client's HTTP stack ends (on
	// connecting, on the headers, between two chunks): Gemini CLI gives up
	// on a Hang after 60s without headers, a Stall it waits on for ever.
	Stall bool `json:"stall,omitempty" yaml:"stall,omitempty"`
	// Match, when set, makes this reply answer only a request whose body
	// contains the string. A request takes the first reply in the queue
	// whose Match is empty or found in its body.
	Match string `json:"match,omitempty" yaml:"match,omitempty"`
}

// ToolCall is one tool call the model makes.
type ToolCall struct {
	Name string `json:"name" yaml:"name"`
	// Args are the tool's JSON arguments.
	Args map[string]any `json:"args,omitempty" yaml:"args,omitempty"`
	// Input is the free-text input of a custom tool (Codex apply_patch).
	// When set, the Responses API sends a custom_tool_call.
	Input string `json:"input,omitempty" yaml:"input,omitempty"`
	// ID is the call id; generated when empty.
	ID string `json:"id,omitempty" yaml:"id,omitempty"`
}

// Usage is token usage reported with a reply. Input counts every input
// token, cached ones included (the OpenAI and Gemini convention); for the
// Anthropic API the server reports input_tokens as Input-Cached and the
// cached part as cache_read_input_tokens.
type Usage struct {
	Input  int `json:"input,omitempty" yaml:"input,omitempty"`
	Output int `json:"output,omitempty" yaml:"output,omitempty"`
	Cached int `json:"cached,omitempty" yaml:"cached,omitempty"`
}

// Error is an HTTP error reply.
type Error struct {
	Status int `json:"status" yaml:"status"`
	// Body is sent verbatim; when empty an error body in the shape of the
	// API the request came in on is made from Message.
	Body    string            `json:"body,omitempty" yaml:"body,omitempty"`
	Message string            `json:"message,omitempty" yaml:"message,omitempty"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	// RetryAfter, when set, adds a retry-after header (seconds) and, for
	// Gemini, a RetryInfo detail.
	RetryAfter Duration `json:"retry_after,omitempty" yaml:"retry_after,omitempty"`
}

// Script is a queue of replies, and what to do when it runs out.
type Script struct {
	Replies []Reply `json:"replies" yaml:"replies"`
	// Exhausted answers requests once the queue is empty. Nil means an
	// HTTP 500 error naming the problem, so a test that under-scripts fails
	// loudly instead of looping.
	Exhausted *Reply `json:"exhausted,omitempty" yaml:"exhausted,omitempty"`
}

// Duration is a time.Duration that reads "2s" in JSON and YAML.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: want \"2s\" or seconds, got %s", b)
	}
	*d = Duration(n * float64(time.Second))
	return nil
}

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		var secs float64
		if err2 := n.Decode(&secs); err2 != nil {
			return fmt.Errorf("line %d: duration: want \"2s\" or seconds, got %q", n.Line, n.Value)
		}
		v = time.Duration(secs * float64(time.Second))
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// LoadScript reads a script from a JSON or YAML file (by extension; anything
// else is tried as YAML, which also reads JSON).
func LoadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	return ParseScript(b, filepath.Ext(path))
}

// ParseScript reads a script; ext ".json" selects strict JSON.
func ParseScript(b []byte, ext string) (Script, error) {
	var s Script
	if strings.EqualFold(ext, ".json") {
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return Script{}, fmt.Errorf("script: %w", err)
		}
		return s, nil
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("script: %w", err)
	}
	return s, nil
}

// Helpers for common replies.

// Text is a plain final answer.
func Text(s string) Reply { return Reply{Text: s} }

// Tool is a reply with one tool call.
func Tool(name string, args map[string]any) Reply {
	return Reply{Tools: []ToolCall{{Name: name, Args: args}}}
}

// Fail is an error reply.
func Fail(status int, message string) Reply {
	return Reply{Error: &Error{Status: status, Message: message}}
}

// RateLimit is a 429 reply that says when to retry.
func RateLimit(after time.Duration) Reply {
	return Reply{Error: &Error{Status: 429, Message: "rate limited by fakeapi", RetryAfter: Duration(after)}}
}

// ClaudeWrite is Claude Code's Write tool (path must be absolute).
func ClaudeWrite(path, content string) Reply {
	return Tool("Write", map[string]any{"file_path": path, "content": content})
}

// ClaudeBash is Claude Code's Bash tool.
func ClaudeBash(command string) Reply {
	return Tool("Bash", map[string]any{"command": command, "description": "run " + command})
}

// CodexExec is Codex's exec_command tool (gpt-5.x models).
func CodexExec(cmd string) Reply { return Tool("exec_command", map[string]any{"cmd": cmd}) }

// CodexPatch is Codex's apply_patch custom tool; patch is the whole
// "*** Begin Patch" ... "*** End Patch" text.
func CodexPatch(patch string) Reply {
	return Reply{Tools: []ToolCall{{Name: "apply_patch", Input: patch}}}
}

// CodexAddFile builds an apply_patch text that adds one file.
func CodexAddFile(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString("+" + l + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// GeminiShell is Gemini CLI's run_shell_command tool.
func GeminiShell(command string) Reply {
	return Tool("run_shell_command", map[string]any{"command": command})
}

// GeminiWrite is Gemini CLI's write_file tool.
func GeminiWrite(path, content string) Reply {
	return Tool("write_file", map[string]any{"file_path": path, "content": content})
}
