package serve

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/looprinter/looprinter/agent"
)

// Block is one piece of a transcript as the page shows it: text the agent
// wrote, a tool call (collapsed), or another event of the CLI's stream
// (collapsed).
type Block struct {
	Kind  string `json:"kind"` // text, tool, event
	Title string `json:"title,omitempty"`
	Body  string `json:"body"`
}

// renderTranscript turns an agent run's raw standard output into blocks.
// The backend's own parser (package agent) names the tool calls; the text
// the agent wrote is taken from the message shapes of Claude Code, Codex and
// Gemini CLI; other JSON lines become collapsed events, and plain lines (the
// command backend) are text.
func renderTranscript(backend string, raw []byte) []Block {
	var p agent.Parser
	if a, err := agent.Lookup(backend); err == nil {
		p = a.NewParser(agent.Request{Backend: backend})
	}
	var out []Block
	addText := func(s string) {
		if s == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Kind == "text" {
			out[n-1].Body += "\n" + s
			return
		}
		out = append(out, Block{Kind: "text", Body: s})
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			continue
		}
		var tools []agent.ToolEvent
		if p != nil {
			tools = p.Line(line)
		}
		var m map[string]any
		if t[0] != '{' || json.Unmarshal(t, &m) != nil {
			addText(string(line))
			continue
		}
		text := messageText(m)
		addText(text)
		for _, tl := range tools {
			out = append(out, Block{Kind: "tool", Title: strings.TrimSpace(tl.Tool + " " + tl.Summary), Body: pretty(t)})
		}
		if text == "" && len(tools) == 0 {
			typ, _ := m["type"].(string)
			switch typ {
			case "":
				typ = "event"
			case "user", "tool_result": // Claude Code, Gemini CLI
				typ = "tool result"
			}
			out = append(out, Block{Kind: "event", Title: typ, Body: pretty(t)})
		}
	}
	return out
}

// messageText is the text an agent wrote in one stream line, if any.
func messageText(m map[string]any) string {
	typ, _ := m["type"].(string)
	switch typ {
	case "assistant": // Claude Code
		msg, _ := m["message"].(map[string]any)
		var parts []string
		if content, ok := msg["content"].([]any); ok {
			for _, c := range content {
				if cm, ok := c.(map[string]any); ok && cm["type"] == "text" {
					if s, ok := cm["text"].(string); ok {
						parts = append(parts, s)
					}
				}
			}
		}
		return strings.Join(parts, "\n")
	case "item.completed": // Codex
		item, _ := m["item"].(map[string]any)
		if item["type"] == "agent_message" || item["type"] == "reasoning" {
			s, _ := item["text"].(string)
			return s
		}
	case "message": // Gemini CLI
		if m["role"] == "assistant" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

func pretty(b []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", "  ") != nil {
		return string(b)
	}
	return buf.String()
}
