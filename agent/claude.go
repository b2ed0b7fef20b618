package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func init() { RegisterBackend(claudeBackend) }

// claudeBackend is Claude Code, declared once (see Backend).
var claudeBackend = Backend{
	Name: "claude", Label: "claude",
	New:     func() Adapter { return claudeAdapter{} },
	Program: "claude", VersionArgs: []string{"--version"},
	NPMPackage: "@anthropic-ai/claude-code", Version: "2.1.328",
	APIHosts:   []string{"api.anthropic.com", "console.anthropic.com"},
	APIBaseEnv: []string{"ANTHROPIC_BASE_URL"},
	Login: Login{
		Env:   []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"},
		Files: []string{"$CLAUDE_CONFIG_DIR/.credentials.json", ".claude/.credentials.json"},
		Hint:  "run `claude` once and log in with /login, or set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)",
	},
	// ~/.claude.json is its settings and project list, beside the folder.
	HomePaths: []string{".claude", ".claude.json"},
	HomeEnv:   []string{"CLAUDE_CONFIG_DIR"},
	Families:  []ModelFamily{{Match: "opus", Model: "opus"}, {Match: "sonnet", Model: "sonnet"}},
	// A subscription's rate_limit_event gives the reset time too; the
	// parser reads it from the stream before it falls back to the text.
	LimitReset: retryAfterIn,
	// --max-budget-usd: the run ends once it has spent that much.
	HoldsCostCap: true,
}

// claudeAdapter runs Claude Code headless:
//
//	claude -p --output-format stream-json --verbose [--model M] [--max-turns N]
//	       [--max-budget-usd X] --permission-mode bypassPermissions [agent.args...]
//
// with the prompt on standard input. See docs/agents.md.
type claudeAdapter struct{}

func (claudeAdapter) Name() string { return "claude" }

func (claudeAdapter) Invocation(req Request) (Invocation, error) {
	path, lead, err := resolveProgram(claudeBackend, req)
	if err != nil {
		return Invocation{}, err
	}
	args := append([]string{}, lead...)
	args = append(args, "-p", "--output-format", "stream-json", "--verbose")
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	if req.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(req.MaxTurns))
	}
	if req.MaxBudgetUSD > 0 {
		args = append(args, "--max-budget-usd", strconv.FormatFloat(req.MaxBudgetUSD, 'f', -1, 64))
	}
	perm := parsePermissions(req.Permissions)
	switch {
	case perm.mode != "":
		args = append(args, "--permission-mode", perm.mode)
	case perm.bypass:
		args = append(args, "--permission-mode", "bypassPermissions")
	}
	if len(perm.tools) > 0 {
		args = append(args, "--allowedTools")
		args = append(args, perm.tools...)
	}
	args = append(args, req.Args...)

	env := envList(ChildEnv(req))
	// looprinter owns retries (it waits out rate limits and retries API
	// errors with backoff); Claude's own default retries every error, a 401
	// included, for minutes.
	env.setDefault("CLAUDE_CODE_MAX_RETRIES", "0")
	env.setDefault("DISABLE_AUTOUPDATER", "1")
	env.setDefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	if _, own := req.Env["IS_SANDBOX"]; !own && (perm.bypass || perm.mode == "bypassPermissions") && os.Geteuid() == 0 {
		// As root, Claude Code refuses bypass mode unless IS_SANDBOX=1 (and
		// only "1": an inherited IS_SANDBOX=yes is refused too).
		env.set("IS_SANDBOX", "1")
	}
	return Invocation{Path: path, Args: args, Env: env, Stdin: req.Prompt}, nil
}

func (claudeAdapter) NewParser(req Request) Parser {
	return &claudeParser{prompt: req.Prompt, model: req.Model, prices: req.Prices}
}

type claudeParser struct {
	prompt string
	model  string
	prices map[string]Price

	sessionID string
	tools     toolSet
	lastText  string // text after the last tool call, top-level agent only
	turns     int
	msgIDs    map[string]bool

	// input usage summed from assistant messages, for runs with no result line
	in, cacheRead, cacheWrite int64

	apiErrStatus int    // from a synthetic error message
	apiErrKind   string // its "error" field: authentication_failed, rate_limit, ...
	apiErrText   string
	retryAt      time.Time // from a rejected rate_limit_event
	lastRetry    string

	result *claudeResult
}

type claudeResult struct {
	Subtype        string   `json:"subtype"`
	IsError        bool     `json:"is_error"`
	NumTurns       int      `json:"num_turns"`
	Result         *string  `json:"result"`
	TerminalReason string   `json:"terminal_reason"`
	SessionID      string   `json:"session_id"`
	TotalCostUSD   *float64 `json:"total_cost_usd"`
	Usage          struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	// modelUsage has the run's usage per model, subagents included; it is
	// filled even when an error result leaves usage at zero.
	ModelUsage map[string]struct {
		InputTokens              int64 `json:"inputTokens"`
		OutputTokens             int64 `json:"outputTokens"`
		CacheReadInputTokens     int64 `json:"cacheReadInputTokens"`
		CacheCreationInputTokens int64 `json:"cacheCreationInputTokens"`
	} `json:"modelUsage"`
	APIErrorStatus    *int              `json:"api_error_status"`
	APIErrorType      string            `json:"api_error_type"`
	Errors            []string          `json:"errors"`
	PermissionDenials []json.RawMessage `json:"permission_denials"`
}

type claudeLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         json.RawMessage `json:"message"`
	Error           string          `json:"error"`
	APIErrorStatus  *int            `json:"api_error_status"`
	IsAPIError      bool            `json:"is_api_error_message"`
	RateLimitInfo   *claudeRateInfo `json:"rate_limit_info"`
	// system/api_retry
	ErrorStatus *int `json:"error_status"`
}

type claudeRateInfo struct {
	Status   string   `json:"status"`
	ResetsAt *float64 `json:"resetsAt"`
}

type claudeMessage struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Content []struct {
		Type  string         `json:"type"`
		Text  string         `json:"text"`
		Name  string         `json:"name"`
		Input map[string]any `json:"input"`
	} `json:"content"`
	Usage struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	// On an API error Claude Code puts the details in the message too.
	APIErrorParams *struct {
		RateLimitInfo *claudeRateInfo `json:"rate_limit_info"`
	} `json:"apiErrorParams"`
}

func (p *claudeParser) Line(line []byte) []ToolEvent {
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	var l claudeLine
	if json.Unmarshal(line, &l) != nil {
		return nil
	}
	if l.SessionID != "" && p.sessionID == "" {
		p.sessionID = l.SessionID
	}
	if l.RateLimitInfo != nil {
		p.noteRateLimit(l.RateLimitInfo)
	}
	switch l.Type {
	case "system":
		if l.Subtype == "api_retry" && l.ErrorStatus != nil {
			p.lastRetry = fmt.Sprintf("API error %d (%s), retrying", *l.ErrorStatus, l.Error)
		}
	case "rate_limit_event":
		// handled above
	case "assistant":
		var m claudeMessage
		if json.Unmarshal(l.Message, &m) != nil {
			return nil
		}
		topLevel := l.ParentToolUseID == nil || *l.ParentToolUseID == ""
		if l.IsAPIError || l.Error != "" {
			p.apiErrKind = l.Error
			if l.APIErrorStatus != nil {
				p.apiErrStatus = *l.APIErrorStatus
			}
			for _, c := range m.Content {
				if c.Type == "text" {
					p.apiErrText = c.Text
				}
			}
			if m.APIErrorParams != nil && m.APIErrorParams.RateLimitInfo != nil {
				p.noteRateLimit(m.APIErrorParams.RateLimitInfo)
			}
			return nil
		}
		if topLevel && m.ID != "" {
			if p.msgIDs == nil {
				p.msgIDs = map[string]bool{}
			}
			if !p.msgIDs[m.ID] {
				p.msgIDs[m.ID] = true
				p.turns++
				p.in += m.Usage.InputTokens
				p.cacheRead += m.Usage.CacheReadInputTokens
				p.cacheWrite += m.Usage.CacheCreationInputTokens
			}
		}
		if m.Model != "" && m.Model != "<synthetic>" && topLevel {
			p.model = m.Model
		}
		var evs []ToolEvent
		for _, c := range m.Content {
			switch c.Type {
			case "text":
				if topLevel && strings.TrimSpace(c.Text) != "" {
					p.lastText = c.Text
				}
			case "tool_use":
				p.tools.add(c.Name)
				evs = append(evs, ToolEvent{Tool: c.Name, Summary: summarize(c.Input)})
				if topLevel {
					p.lastText = ""
				}
			}
		}
		return evs
	case "result":
		var r claudeResult
		if json.Unmarshal(line, &r) == nil {
			p.result = &r
		}
	}
	return nil
}

func (p *claudeParser) noteRateLimit(info *claudeRateInfo) {
	if info.Status == "rejected" && info.ResetsAt != nil && *info.ResetsAt > 0 {
		p.retryAt = time.Unix(int64(*info.ResetsAt), 0)
	}
}

func (p *claudeParser) Finish(exit Exit) Result {
	res := Result{ExitCode: exit.Code, SessionID: p.sessionID, Tools: p.tools.names, Turns: p.turns,
		FinalMessage: p.lastText}
	if exit.StartErr != nil {
		startFailure(&res, exit)
		return res
	}
	r := p.result
	if r != nil {
		if r.SessionID != "" {
			res.SessionID = r.SessionID
		}
		if r.NumTurns > 0 {
			res.Turns = r.NumTurns
		}
		in, out, cr, cw := r.Usage.InputTokens, r.Usage.OutputTokens, r.Usage.CacheReadInputTokens, r.Usage.CacheCreationInputTokens
		if len(r.ModelUsage) > 0 {
			in, out, cr, cw = 0, 0, 0, 0
			for _, u := range r.ModelUsage {
				in += u.InputTokens
				out += u.OutputTokens
				cr += u.CacheReadInputTokens
				cw += u.CacheCreationInputTokens
			}
		}
		res.InputTokens = in + cr + cw
		res.OutputTokens = out
		res.CachedTokens = cr
		p.cacheWrite = cw
		if r.TotalCostUSD != nil {
			res.CostUSD = *r.TotalCostUSD
		}
		if r.Result != nil && !r.IsError {
			res.FinalMessage = *r.Result
		}
	} else {
		res.InputTokens = p.in + p.cacheRead + p.cacheWrite
		res.CachedTokens = p.cacheRead
	}
	if (r == nil || r.TotalCostUSD == nil) && res.InputTokens+res.OutputTokens > 0 {
		if pr, ok := LookupPrice(p.model, p.prices); ok {
			res.CostUSD = EstimateCost(pr, res.InputTokens, res.CachedTokens, p.cacheWrite, res.OutputTokens)
			res.CostEstimated = true
		}
	}

	switch {
	case exit.Killed == StatusInterrupted || (exit.Killed != "" && (r == nil || r.IsError)):
		killedResult(&res, exit, firstNonEmpty(p.apiErrText, p.lastRetry))
		return res
	case r == nil:
		res.Status = StatusFailed
		res.Error = fmt.Sprintf("Claude Code ended (exit %d) without a result line", exit.Code)
		tail := strings.TrimSpace(lastLines(exit.StderrTail, 5))
		if tail != "" {
			res.Error += ": " + oneLine(tail, 400)
		}
		low := strings.ToLower(tail)
		switch {
		case strings.Contains(low, "unknown option") || strings.Contains(low, "error: option") ||
			strings.Contains(low, "invalid argument") || strings.Contains(low, "too many arguments"):
			res.Status = StatusBlocked
			res.Fix = "Claude Code rejected its command line: check agent.args and agent.permissions in the loop file"
		case strings.Contains(low, "--dangerously-skip-permissions cannot be used with root") ||
			strings.Contains(low, "root/sudo privileges"):
			res.Status = StatusBlocked
			res.Fix = "as root, Claude Code's bypass mode needs IS_SANDBOX=1 in agent.env (only inside a sandbox), or set agent.permissions to a list of allowed tools"
		case p.apiErrKind != "" || p.apiErrStatus != 0:
			classifyAPIErrorWith(&res, p.apiErrStatus, p.apiErrKind+" "+p.apiErrText, claudeAuthFix, claudeBackend.LimitReset)
			res.Error = "Claude Code API error: " + oneLine(p.apiErrText, 300)
		}
	case r.Subtype == "error_max_turns" || r.TerminalReason == "max_turns":
		res.Status = StatusCapped
		res.Error = "stopped at agent.max_turns"
	case r.Subtype == "error_max_budget_usd" || r.TerminalReason == "budget_exhausted":
		res.Status = StatusCapped
		res.Error = "stopped at agent.max_budget_usd"
	case !r.IsError && r.Subtype == "success":
		res.Status = StatusOK
		if n := len(r.PermissionDenials); n > 0 {
			res.Error = fmt.Sprintf("%d tool call(s) were refused by the permission settings (agent.permissions)", n)
		}
	default:
		text := ""
		if r.Result != nil {
			text = *r.Result
		}
		text = firstNonEmpty(text, strings.Join(r.Errors, "; "), p.apiErrText)
		status := p.apiErrStatus
		if r.APIErrorStatus != nil {
			status = *r.APIErrorStatus
		}
		if r.TerminalReason == "api_error" || status != 0 || p.apiErrKind != "" || r.APIErrorType != "" {
			classifyAPIErrorWith(&res, status, p.apiErrKind+" "+r.APIErrorType+" "+text, claudeAuthFix, claudeBackend.LimitReset)
			res.Error = "Claude Code API error"
			if status != 0 {
				res.Error += fmt.Sprintf(" %d", status)
			}
			res.Error += ": " + oneLine(text, 300)
		} else {
			res.Status = StatusFailed
			res.Error = fmt.Sprintf("Claude Code reported an error (%s): %s", firstNonEmpty(r.Subtype, r.TerminalReason), oneLine(text, 300))
		}
	}
	if res.Status == StatusRateLimited && res.RetryAfter == 0 && !p.retryAt.IsZero() {
		if d := time.Until(p.retryAt); d > 0 {
			res.RetryAfter = d
		}
	}
	if res.Status == StatusRateLimited && res.RetryAfter == 0 {
		// No rate_limit_event (an API key, not a subscription login): the
		// API's own message may say when ("try again in 3h").
		res.RetryAfter = claudeBackend.LimitReset(res.Error, time.Now())
	}
	if res.Status == StatusOK || res.Status == StatusCapped {
		finishSignals(&res, p.prompt)
	}
	return res
}

const claudeAuthFix = "Claude Code is not logged in or its key was refused: set ANTHROPIC_API_KEY " +
	"(or ANTHROPIC_AUTH_TOKEN) in the environment or in agent.env, or run `claude` once and log in with /login"

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
