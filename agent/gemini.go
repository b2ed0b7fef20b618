package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func init() { RegisterBackend(geminiBackend) }

// geminiBackend is Gemini CLI, declared once (see Backend).
var geminiBackend = Backend{
	Name: "gemini", Label: "gemini",
	New:     func() Adapter { return geminiAdapter{} },
	Program: "gemini", VersionArgs: []string{"--version"},
	NPMPackage: "@google/gemini-cli", Version: "0.61.0",
	APIHosts:   []string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com", "accounts.google.com"},
	APIBaseEnv: []string{"GOOGLE_GEMINI_BASE_URL"},
	Login: Login{
		Env:   []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"},
		Files: []string{".gemini/oauth_creds.json"},
		Hint:  "run `gemini` once and sign in, or set GEMINI_API_KEY",
	},
	HomePaths:  []string{".gemini"},
	HomeEnv:    []string{"GEMINI_CLI_HOME"},
	Families:   []ModelFamily{{Match: "pro", Model: "gemini-2.5-pro"}, {Match: "flash", Model: "gemini-2.5-flash"}},
	LimitReset: retryAfterIn,
}

// geminiAdapter runs Gemini CLI headless:
//
//	gemini --output-format stream-json --skip-trust [-m M] --yolo [agent.args...]
//
// with the prompt on standard input (a piped standard input makes it
// non-interactive). See docs/agents.md.
type geminiAdapter struct{}

func (geminiAdapter) Name() string { return "gemini" }

// geminiSystemSettings is where Gemini CLI reads its system settings file;
// GEMINI_CLI_SYSTEM_SETTINGS_PATH overrides it.
const geminiSystemSettings = "/etc/gemini-cli/settings.json"

func (geminiAdapter) Invocation(req Request) (Invocation, error) {
	path, lead, err := resolveProgram(geminiBackend, req)
	if err != nil {
		return Invocation{}, err
	}
	env := envList(ChildEnv(req))
	args := append([]string{}, lead...)
	args = append(args, "--output-format", "stream-json", "--skip-trust")
	if req.Model != "" {
		args = append(args, "-m", req.Model)
	}
	perm := parsePermissions(req.Permissions)
	switch {
	case perm.mode != "":
		args = append(args, "--approval-mode", perm.mode)
	case perm.bypass:
		args = append(args, "--yolo")
	}
	if len(perm.tools) > 0 {
		// --allowed-tools is deprecated and does not let the shell run
		// headless; a policy file with allow rules does.
		p, err := geminiPolicy(perm.tools)
		if err != nil {
			return Invocation{}, &configError{msg: "gemini: cannot write the policy file for agent.permissions: " + err.Error(),
				fix: "check that the user cache folder is writable, or set agent.permissions to [\"bypass\"]"}
		}
		args = append(args, "--policy", p)
	}
	args = append(args, req.Args...)
	if req.MaxTurns > 0 {
		// Gemini CLI has no flag for it: model.maxSessionTurns lives in a
		// settings file. The system settings file is the one layer looprinter
		// can add without touching the user's or the project's settings.
		if p, err := geminiTurnsSettings(env, req.MaxTurns); err == nil {
			env.set("GEMINI_CLI_SYSTEM_SETTINGS_PATH", p)
		}
	}
	return Invocation{Path: path, Args: args, Env: env, Stdin: req.Prompt}, nil
}

// geminiPolicy writes a Gemini CLI policy file that allows the listed
// tools: "write_file", or "run_shell_command(go test)" for the commands that
// start with a prefix. Every other tool is refused (headless, a tool that
// needs approval is denied).
func geminiPolicy(tools []string) (string, error) {
	var b strings.Builder
	b.WriteString("# written by looprinter from agent.permissions\n")
	for _, t := range tools {
		name, prefix := t, ""
		if i := strings.Index(t, "("); i > 0 && strings.HasSuffix(t, ")") {
			name, prefix = t[:i], t[i+1:len(t)-1]
		}
		fmt.Fprintf(&b, "\n[[rule]]\ntoolName = %s\n", tomlString(strings.TrimSpace(name)))
		if p := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(prefix), ":*")); p != "" {
			fmt.Fprintf(&b, "commandPrefix = %s\n", tomlString(p))
		}
		b.WriteString("decision = \"allow\"\npriority = 100\n")
	}
	return writeCached("policy", ".toml", []byte(b.String()))
}

// writeCached writes data once under the user cache folder, named by its
// hash, and returns the path.
func writeCached(prefix, ext string, data []byte) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "looprinter", "gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	file := filepath.Join(dir, prefix+"-"+hex.EncodeToString(sum[:6])+ext)
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	tmp := file + fmt.Sprintf(".%d.tmp", os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return file, nil
}

// geminiTurnsSettings writes a system settings file that is the current one
// (if any) plus model.maxSessionTurns, in a folder Gemini CLI accepts: it
// ignores a system settings file unless the file and every folder above it
// are owned by root and writable by no one else, so this works when
// looprinter runs as root; otherwise it returns an error and the cap is not
// applied (set model.maxSessionTurns in ~/.gemini/settings.json instead).
func geminiTurnsSettings(env envList, maxTurns int) (string, error) {
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("gemini: max_turns needs looprinter to run as root (Gemini CLI reads system settings only from root-owned folders)")
	}
	base := geminiSystemSettings
	if p, ok := env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); ok && p != "" {
		base = p
	}
	settings := map[string]any{}
	if b, err := os.ReadFile(base); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			// Replacing a system file we cannot read would drop its rules.
			return "", fmt.Errorf("gemini: cannot merge %s: %w", base, err)
		}
	}
	model, _ := settings["model"].(map[string]any)
	if model == nil {
		model = map[string]any{}
	}
	model["maxSessionTurns"] = maxTurns
	settings["model"] = model
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return "", err
	}
	file, err := writeCached("system-settings", ".json", data)
	if err != nil {
		return "", err
	}
	if err := rootOwnedChain(file); err != nil {
		return "", err
	}
	return file, nil
}

// rootOwnedChain checks what Gemini CLI checks before it reads a system
// settings file: the file and all its parent folders owned by root and not
// writable by group or others.
func rootOwnedChain(path string) error {
	p, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	for {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !rootOwned(fi) || fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("gemini: %s is not root-owned and private", p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

func (geminiAdapter) NewParser(req Request) Parser {
	return &geminiParser{prompt: req.Prompt, model: req.Model, prices: req.Prices}
}

type geminiParser struct {
	prompt string
	model  string
	prices map[string]Price

	sessionID string
	tools     toolSet
	groups    int
	prevTool  bool // the previous line was a tool_use (same model step)
	text      strings.Builder
	errLine   string // a non-fatal error line
	denied    int    // tool calls refused by the approval mode or policy
	result    *geminiResult
}

type geminiResult struct {
	Status string `json:"status"`
	Error  *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
		ToolCalls    int   `json:"tool_calls"`
	} `json:"stats"`
}

type geminiLine struct {
	Type       string         `json:"type"`
	SessionID  string         `json:"session_id"`
	Model      string         `json:"model"`
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	Delta      bool           `json:"delta"`
	ToolName   string         `json:"tool_name"`
	Parameters map[string]any `json:"parameters"`
	Message    string         `json:"message"`
	Severity   string         `json:"severity"`
	Status     string         `json:"status"`
	Output     string         `json:"output"`
	Error      *struct {
		Type string `json:"type"`
	} `json:"error"`
}

func (p *geminiParser) Line(line []byte) []ToolEvent {
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	var l geminiLine
	if json.Unmarshal(line, &l) != nil {
		return nil
	}
	wasTool := p.prevTool
	p.prevTool = false
	switch l.Type {
	case "init":
		p.sessionID = l.SessionID
		if l.Model != "" {
			p.model = l.Model
		}
	case "message":
		if l.Role != "assistant" {
			return nil // the user's prompt, echoed: never a signal
		}
		if !l.Delta {
			p.text.Reset()
		}
		p.text.WriteString(l.Content)
	case "tool_use":
		p.prevTool = true
		if !wasTool {
			p.groups++
		}
		p.text.Reset()
		p.tools.add(l.ToolName)
		return []ToolEvent{{Tool: l.ToolName, Summary: summarize(l.Parameters)}}
	case "tool_result":
		if l.Status == "error" && ((l.Error != nil && (l.Error.Type == "policy_violation" || l.Error.Type == "tool_not_registered")) ||
			strings.Contains(l.Output, "requires user confirmation")) {
			p.denied++
		}
		// A tool_use right after a result is the model's next step; calls
		// of one step come one after the other before their results.
	case "error":
		p.errLine = l.Message
	case "result":
		var r geminiResult
		if json.Unmarshal(line, &r) == nil {
			p.result = &r
		}
	}
	return nil
}

// Gemini CLI's own exit codes for startup problems.
var geminiFatal = map[int]string{
	41: "Gemini CLI cannot authenticate: set security.auth.selectedType in ~/.gemini/settings.json (e.g. \"gemini-api-key\") and GEMINI_API_KEY, or run `gemini` once and log in",
	42: "Gemini CLI rejected its input: check agent.args in the loop file",
	44: "Gemini CLI's sandbox failed to start: check its sandbox settings",
	52: "Gemini CLI's configuration is invalid: check ~/.gemini/settings.json and agent.args",
	55: "Gemini CLI does not trust the folder: looprinter passes --skip-trust; check agent.args",
}

func (p *geminiParser) Finish(exit Exit) Result {
	res := Result{ExitCode: exit.Code, SessionID: p.sessionID, Tools: p.tools.names, Turns: p.groups,
		FinalMessage: p.text.String()}
	if strings.TrimSpace(res.FinalMessage) != "" {
		res.Turns++
	}
	if r := p.result; r != nil {
		res.InputTokens = r.Stats.InputTokens
		res.OutputTokens = r.Stats.OutputTokens
		res.CachedTokens = r.Stats.Cached
		if res.InputTokens+res.OutputTokens > 0 {
			estimateInto(&res, p.model, p.prices)
		}
	}
	if exit.StartErr != nil {
		startFailure(&res, exit)
		return res
	}
	r := p.result
	ok := r != nil && r.Status == "success"
	errType, errMsg := "", ""
	if r != nil && r.Error != nil {
		errType, errMsg = r.Error.Type, r.Error.Message
	}
	switch {
	case exit.Killed != "" && !ok:
		killedResult(&res, exit, firstNonEmpty(errMsg, p.errLine))
		return res
	case ok:
		res.Status = StatusOK
		if p.denied > 0 {
			res.Error = fmt.Sprintf("%d tool call(s) were refused by the approval mode or policy (agent.permissions)", p.denied)
		}
	case errType == "FatalTurnLimitedError" || exit.Code == 53:
		res.Status = StatusCapped
		res.Error = "stopped at agent.max_turns (model.maxSessionTurns)"
	case r == nil && (strings.Contains(exit.StderrTail, "Unknown argument") || strings.Contains(exit.StderrTail, "Invalid values:") ||
		strings.Contains(exit.StderrTail, "Not enough arguments")):
		res.Status = StatusBlocked
		res.Error = "Gemini CLI rejected its command line: " + oneLine(firstLineWith(exit.StderrTail, "Unknown argument", "Invalid values", "Not enough arguments"), 300)
		res.Fix = "check agent.args, agent.model and agent.permissions in the loop file (`gemini --help` lists the flags)"
	case geminiFatal[exit.Code] != "" || errType == "FatalAuthenticationError" || errType == "FatalConfigError":
		res.Status = StatusBlocked
		res.Error = "Gemini CLI could not start: " + oneLine(firstNonEmpty(errMsg, lastLines(exit.StderrTail, 3)), 400)
		res.Fix = geminiFatal[exit.Code]
		if res.Fix == "" {
			res.Fix = geminiFatal[41]
		}
	default:
		// API errors: the message (and the error JSON on stderr) name the
		// HTTP status, and the exit code is that status modulo 256.
		text := firstNonEmpty(errMsg, p.errLine) + "\n" + exit.StderrTail
		status := httpStatusIn(firstNonEmpty(errMsg, p.errLine))
		if status == 0 && exit.Code >= 144 && exit.Code <= 255 {
			status = exit.Code + 256
		}
		if status == 0 {
			status = httpStatusIn(exit.StderrTail)
		}
		apiLike := status != 0 || strings.Contains(errMsg, "API Error") || strings.Contains(exit.StderrTail, "ApiError") ||
			strings.Contains(text, "fetch failed")
		if apiLike {
			classifyAPIErrorWith(&res, status, text, geminiAuthFix, geminiBackend.LimitReset)
			res.Error = "Gemini API error"
			if status != 0 {
				res.Error += fmt.Sprintf(" %d", status)
			}
			res.Error += ": " + oneLine(firstNonEmpty(errMsg, p.errLine, lastLines(exit.StderrTail, 3)), 300)
		} else {
			res.Status = StatusFailed
			if r == nil {
				res.Error = fmt.Sprintf("Gemini CLI ended (exit %d) without a result line", exit.Code)
			} else {
				res.Error = fmt.Sprintf("Gemini CLI reported an error (%s)", firstNonEmpty(errType, "exit "+fmt.Sprint(exit.Code)))
			}
			if m := firstNonEmpty(errMsg, strings.TrimSpace(lastLines(exit.StderrTail, 3))); m != "" {
				res.Error += ": " + oneLine(m, 400)
			}
		}
	}
	if res.Status == StatusOK || res.Status == StatusCapped {
		finishSignals(&res, p.prompt)
	}
	return res
}

const geminiAuthFix = "Gemini CLI's key was refused or it is not logged in: set GEMINI_API_KEY (with " +
	"security.auth.selectedType \"gemini-api-key\" in ~/.gemini/settings.json), or run `gemini` once and log in"

// firstLineWith returns the first line of s that contains one of subs.
func firstLineWith(s string, subs ...string) string {
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				return l
			}
		}
	}
	return lastLines(s, 1)
}
