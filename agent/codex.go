package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/shlex"
)

func init() { RegisterBackend(codexBackend) }

// codexBackend is Codex, declared once (see Backend).
var codexBackend = Backend{
	Name: "codex", Label: "codex",
	New:     func() Adapter { return codexAdapter{} },
	Program: "codex", VersionArgs: []string{"--version"},
	NPMPackage: "@openai/codex", Version: "0.169.0",
	APIHosts:   []string{"api.openai.com", "auth.openai.com", "chatgpt.com"},
	APIBaseEnv: []string{CodexBaseURLEnv, "OPENAI_BASE_URL"},
	Login: Login{
		Env:   []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Files: []string{"$CODEX_HOME/auth.json", ".codex/auth.json"},
		Hint:  "run `codex login`, or set OPENAI_API_KEY",
	},
	HomePaths: []string{".codex"},
	HomeEnv:   []string{"CODEX_HOME"},
	// No families: the review's reviewer stays on the fixer's model, and
	// the engine says so.
	LimitReset: retryAfterIn,
}

// Environment variables (in agent.env or the engine's environment) that make
// the codex adapter point Codex at another OpenAI-compatible Responses API
// endpoint. Codex ignores OPENAI_BASE_URL; it needs a model provider given
// with -c flags, which the adapter adds when LOOPRINTER_CODEX_BASE_URL is set.
const (
	// CodexBaseURLEnv is the endpoint's base URL, e.g. http://127.0.0.1:8080/v1.
	CodexBaseURLEnv = "LOOPRINTER_CODEX_BASE_URL"
	// CodexKeyEnvEnv names the variable that holds the key for that
	// endpoint (default OPENAI_API_KEY).
	CodexKeyEnvEnv = "LOOPRINTER_CODEX_API_KEY_ENV"
)

// codexAdapter runs Codex headless:
//
//	codex exec --json --skip-git-repo-check [-m M] [-c model_provider=...]
//	      --dangerously-bypass-approvals-and-sandbox [agent.args...] -
//
// with the prompt on standard input (the trailing "-"). See docs/agents.md.
type codexAdapter struct{}

func (codexAdapter) Name() string { return "codex" }

func (codexAdapter) Invocation(req Request) (Invocation, error) {
	path, lead, err := resolveProgram(codexBackend, req)
	if err != nil {
		return Invocation{}, err
	}
	env := envList(ChildEnv(req))
	args := append([]string{}, lead...)
	args = append(args, "exec", "--json", "--skip-git-repo-check")
	if req.Model != "" {
		args = append(args, "-m", req.Model)
	}
	if base, ok := env.get(CodexBaseURLEnv); ok && strings.TrimSpace(base) != "" {
		keyVar, _ := env.get(CodexKeyEnvEnv)
		if keyVar == "" {
			keyVar = "OPENAI_API_KEY"
		}
		args = append(args,
			"-c", "model_provider=looprinter",
			"-c", fmt.Sprintf(`model_providers.looprinter={name="looprinter",base_url=%s,env_key=%s,wire_api="responses",request_max_retries=0,stream_max_retries=0}`,
				tomlString(strings.TrimRight(base, "/")), tomlString(keyVar)))
	}
	perm := parsePermissions(req.Permissions)
	if len(perm.tools) > 0 {
		return Invocation{}, &configError{
			msg: fmt.Sprintf("agent.permissions %v: Codex has no list of allowed tools", perm.tools),
			fix: `for codex, set agent.permissions to ["bypass"] or ["mode=workspace-write"] (or read-only, danger-full-access)`}
	}
	switch {
	case perm.mode != "":
		args = append(args, "--sandbox", perm.mode)
	case perm.bypass:
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
	}
	args = append(args, req.Args...)
	args = append(args, "-") // the prompt comes on standard input

	// Codex refuses to start when CODEX_HOME names a missing folder.
	if home, ok := env.get("CODEX_HOME"); ok && home != "" {
		if _, err := os.Stat(home); os.IsNotExist(err) {
			os.MkdirAll(home, 0o700)
		}
	}
	return Invocation{Path: path, Args: args, Env: env, Stdin: req.Prompt}, nil
}

// tomlString quotes s as a TOML basic string (JSON's escapes are valid TOML).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (codexAdapter) NewParser(req Request) Parser {
	return &codexParser{prompt: req.Prompt, model: req.Model, prices: req.Prices}
}

type codexParser struct {
	prompt string
	model  string
	prices map[string]Price

	threadID  string
	tools     toolSet
	seen      map[string]bool // item ids already shown
	inFlight  map[string]bool // tool items started, not completed
	groups    int             // tool-call groups: model steps that called tools
	lastText  string          // agent message after the last tool call
	completed bool
	usage     *codexUsage
	failMsg   string // turn.failed
	lastError string // last error event (may be transient: "Reconnecting...")
}

type codexUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
}

type codexLine struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Item     *codexItem      `json:"item"`
	Usage    *codexUsage     `json:"usage"`
	Message  string          `json:"message"`
	Error    json.RawMessage `json:"error"`
}

type codexItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server    string         `json:"server"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Query     string         `json:"query"`
	Message   string         `json:"message"`
}

func (p *codexParser) Line(line []byte) []ToolEvent {
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	var l codexLine
	if json.Unmarshal(line, &l) != nil {
		return nil
	}
	switch l.Type {
	case "thread.started":
		p.threadID = l.ThreadID
	case "turn.completed":
		p.completed = true
		if l.Usage != nil {
			u := *l.Usage // cumulative for the thread: the last one wins
			p.usage = &u
		}
	case "turn.failed":
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(l.Error, &e) == nil && e.Message != "" {
			p.failMsg = e.Message
		} else {
			p.failMsg = string(l.Error)
		}
	case "error":
		p.lastError = l.Message
	case "item.started", "item.updated", "item.completed":
		if l.Item != nil {
			return p.item(l.Type, l.Item)
		}
	}
	return nil
}

func (p *codexParser) item(event string, it *codexItem) []ToolEvent {
	var ev *ToolEvent
	switch it.Type {
	case "agent_message":
		if event == "item.completed" && strings.TrimSpace(it.Text) != "" {
			p.lastText = it.Text
		}
		return nil
	case "error":
		if it.Message != "" {
			p.lastError = it.Message
		}
		return nil
	case "command_execution":
		ev = &ToolEvent{Tool: "exec_command", Summary: oneLine(unwrapShell(it.Command), 120)}
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Kind+" "+c.Path)
		}
		ev = &ToolEvent{Tool: "apply_patch", Summary: oneLine(strings.Join(paths, ", "), 120)}
	case "mcp_tool_call":
		ev = &ToolEvent{Tool: it.Server + "." + it.Tool, Summary: summarize(it.Arguments)}
	case "web_search":
		ev = &ToolEvent{Tool: "web_search", Summary: oneLine(it.Query, 120)}
	default:
		return nil // reasoning, todo_list: not tool calls
	}
	if p.seen == nil {
		p.seen, p.inFlight = map[string]bool{}, map[string]bool{}
	}
	if event == "item.completed" {
		defer delete(p.inFlight, it.ID)
	}
	if p.seen[it.ID] {
		return nil
	}
	p.seen[it.ID] = true
	if len(p.inFlight) == 0 {
		p.groups++
	}
	if event != "item.completed" {
		p.inFlight[it.ID] = true
	}
	p.lastText = ""
	p.tools.add(ev.Tool)
	return []ToolEvent{*ev}
}

// unwrapShell shows `/bin/bash -lc 'cmd'` as cmd.
func unwrapShell(c string) string {
	argv, err := shlex.Split(c)
	if err != nil || len(argv) != 3 || (argv[1] != "-lc" && argv[1] != "-c") {
		return c
	}
	switch filepath.Base(argv[0]) {
	case "bash", "sh", "zsh", "dash":
		return argv[2]
	}
	return c
}

func (p *codexParser) Finish(exit Exit) Result {
	res := Result{ExitCode: exit.Code, SessionID: p.threadID, Tools: p.tools.names,
		FinalMessage: p.lastText, Turns: p.groups}
	if p.lastText != "" {
		res.Turns++
	}
	if p.usage != nil {
		res.InputTokens = p.usage.InputTokens
		res.CachedTokens = p.usage.CachedInputTokens
		res.OutputTokens = p.usage.OutputTokens
		model := p.model
		if model == "" {
			model = "gpt-5" // Codex's default family when the loop names none
		}
		estimateInto(&res, model, p.prices)
	}
	if exit.StartErr != nil {
		startFailure(&res, exit)
		return res
	}
	switch {
	case exit.Killed != "" && !(p.completed && p.failMsg == ""):
		killedResult(&res, exit, firstNonEmpty(p.failMsg, p.lastError))
		return res
	case p.failMsg != "" || (exit.Code != 0 && p.lastError != ""):
		msg := firstNonEmpty(p.failMsg, p.lastError)
		classifyAPIErrorWith(&res, httpStatusIn(msg), msg, codexAuthFix, codexBackend.LimitReset)
		if res.Status == StatusAPIError && !looksLikeAPIError(msg) {
			res.Status = StatusFailed
		}
		res.Error = "Codex: " + oneLine(msg, 400)
	case p.completed && exit.Code == 0:
		res.Status = StatusOK
	case exit.Code == 2 && strings.Contains(exit.StderrTail, "error:"):
		res.Status = StatusBlocked
		res.Error = "Codex rejected its command line: " + oneLine(lastLines(exit.StderrTail, 4), 400)
		res.Fix = "check agent.args, agent.model and agent.permissions in the loop file (`codex exec --help` lists the flags)"
	default:
		res.Status = StatusFailed
		res.Error = fmt.Sprintf("Codex ended (exit %d) without completing its turn", exit.Code)
		if tail := strings.TrimSpace(lastLines(exit.StderrTail, 5)); tail != "" {
			res.Error += ": " + oneLine(tail, 400)
		}
		low := strings.ToLower(exit.StderrTail)
		if strings.Contains(low, "not logged in") || strings.Contains(low, "missing environment variable") ||
			strings.Contains(low, "no api key") {
			res.Status = StatusBlocked
			res.Fix = codexAuthFix
		}
	}
	if res.Status == StatusOK {
		finishSignals(&res, p.prompt)
	}
	return res
}

// looksLikeAPIError tells a server-side failure from any other failure text.
func looksLikeAPIError(msg string) bool {
	low := strings.ToLower(msg)
	for _, s := range []string{"status", "api", "server", "stream", "demand", "connection", "network",
		"timed out", "timeout", "disconnected", "retry", "http", "response"} {
		if strings.Contains(low, s) {
			return true
		}
	}
	return false
}

const codexAuthFix = "Codex is not logged in or its key was refused: set OPENAI_API_KEY (or run `codex login`); " +
	"with a custom endpoint set LOOPRINTER_CODEX_BASE_URL and the key variable named by LOOPRINTER_CODEX_API_KEY_ENV in agent.env"
