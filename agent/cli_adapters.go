package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/shlex"

	"github.com/looprinter/looprinter/checkcmd"
)

// Helpers shared by the claude, codex and gemini adapters.

// CLI describes an agent CLI that looprinter drives, for `doctor` and
// install hints.
type CLI struct {
	Backend    string // claude, codex, gemini
	Program    string // looked up on PATH when agent.command is empty
	NPMPackage string
	Version    string // the version looprinter is tested with
}

// CLIFor returns the CLI behind a backend name; ok is false for backends
// that are not a known CLI (command).
func CLIFor(backend string) (CLI, bool) {
	b, ok := Find(backend)
	if !ok || b.Program == "" {
		return CLI{}, false
	}
	return CLI{Backend: b.Name, Program: b.Program, NPMPackage: b.NPMPackage, Version: b.Version}, true
}

// notInstalledError: the CLI's program could not be found.
type notInstalledError struct {
	cli  Backend
	what string
	err  error
}

func (e *notInstalledError) Error() string {
	return fmt.Sprintf("%s CLI not found (%s): %v", e.cli.Name, e.what, e.err)
}

// configError: the request cannot be turned into a command line.
type configError struct{ msg, fix string }

func (e *configError) Error() string { return e.msg }

// resolveProgram finds the CLI: Request.Command when set (a path, or a
// program and leading arguments, e.g. "node /opt/codex/bin/codex.js"),
// otherwise the program name on the PATH the child will get.
func resolveProgram(c Backend, req Request) (path string, lead []string, err error) {
	argv := []string{c.Program}
	what := c.Program + " on PATH"
	if strings.TrimSpace(req.Command) != "" {
		argv, err = shlex.Split(req.Command)
		if err != nil || len(argv) == 0 {
			return "", nil, &configError{msg: fmt.Sprintf("agent.command %q: cannot be split into words", req.Command),
				fix: "set agent.command to the path of the " + c.Program + " program"}
		}
		what = "agent.command " + argv[0]
	}
	p, err := lookPathIn(argv[0], req.Dir, childPath(req))
	if err != nil {
		return "", nil, &notInstalledError{cli: c, what: what, err: err}
	}
	return p, argv[1:], nil
}

func childPath(req Request) string {
	if p, ok := req.Env["PATH"]; ok {
		return p
	}
	return os.Getenv("PATH")
}

// lookPathIn is exec.LookPath against a given PATH value. A relative path
// with a slash (./agent.sh, bin/agent) is taken relative to dir, the loop
// file's folder, wherever looprinter was started from; a bare name is looked
// up on pathEnv.
func lookPathIn(file, dir, pathEnv string) (string, error) {
	return checkcmd.FindProgram(file, dir, pathEnv)
}

// envList is a child environment with "set unless already set" helpers.
type envList []string

func (e envList) has(key string) bool {
	for _, kv := range e {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			return true
		}
	}
	return false
}

func (e envList) get(key string) (string, bool) {
	var v string
	found := false
	for _, kv := range e {
		if k, val, _ := strings.Cut(kv, "="); k == key {
			v, found = val, true // the last one wins, as for exec
		}
	}
	return v, found
}

// set replaces any value of key.
func (e *envList) set(key, value string) {
	out := (*e)[:0]
	for _, kv := range *e {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	*e = append(out, key+"="+value)
}

func (e *envList) setDefault(key, value string) {
	if !e.has(key) {
		*e = append(*e, key+"="+value)
	}
}

// permissionSpec is agent.permissions read for one CLI: bypass (the
// default), a named mode of the CLI's own, and/or tools to allow.
type permissionSpec struct {
	bypass bool
	mode   string
	tools  []string
}

// parsePermissions reads agent.permissions:
//
//	[] or ["bypass"]     the CLI's full bypass mode (the default)
//	["mode=NAME"]        the CLI's own permission/approval/sandbox mode NAME
//	["Edit", "Bash(go test:*)", ...]  tools allowed without a prompt; every
//	                     other tool is refused (not supported by codex)
func parsePermissions(p []string) permissionSpec {
	var s permissionSpec
	for _, v := range p {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
		case strings.EqualFold(v, "bypass"):
			s.bypass = true
		case strings.HasPrefix(v, "mode="):
			s.mode = strings.TrimPrefix(v, "mode=")
		default:
			s.tools = append(s.tools, v)
		}
	}
	if s.mode == "" && len(s.tools) == 0 {
		s.bypass = true
	}
	return s
}

// toolSet keeps the names of the tools used, in order of first use.
type toolSet struct {
	names []string
	seen  map[string]bool
}

func (t *toolSet) add(name string) {
	if name == "" {
		return
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	if !t.seen[name] {
		t.seen[name] = true
		t.names = append(t.names, name)
	}
}

// summarize makes a one-line description of a tool call's input.
func summarize(input map[string]any) string {
	for _, k := range []string{"command", "cmd", "file_path", "path", "notebook_path", "pattern", "url", "query", "description", "prompt"} {
		if v, ok := input[k]; ok {
			switch x := v.(type) {
			case string:
				return oneLine(x, 120)
			case []any:
				var parts []string
				for _, p := range x {
					parts = append(parts, fmt.Sprint(p))
				}
				return oneLine(strings.Join(parts, " "), 120)
			}
		}
	}
	if len(input) == 0 {
		return ""
	}
	b, _ := json.Marshal(input)
	return oneLine(string(b), 120)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// finishSignals reads the promise and blocked tags from the final assistant
// message only, and turns a <blocked> tag into a blocked run.
func finishSignals(res *Result, prompt string) {
	res.Promise, res.Blocked = Signals(res.FinalMessage, prompt)
	if res.Blocked != "" && (res.Status == StatusOK || res.Status == StatusCapped) {
		res.Status = StatusBlocked
		res.Error = "the agent asked for a human: " + res.Blocked
	}
}

// killedResult fills in a run the engine stopped.
func killedResult(res *Result, exit Exit, lastError string) {
	res.Status = exit.Killed
	switch exit.Killed {
	case StatusTimeout:
		res.Error = "killed: the run took longer than agent.timeout"
	case StatusIdle:
		res.Error = "killed: no output for agent.idle_timeout (hung, or waiting on a dead network)"
	default:
		res.Error = "stopped by the engine: " + string(exit.Killed)
	}
	if lastError != "" {
		res.Error += "; last error from the CLI: " + oneLine(lastError, 300)
	}
}

// startFailure classifies a run that could not start.
func startFailure(res *Result, exit Exit) {
	res.Status = StatusBlocked
	res.Error = exit.StartErr.Error()
	var ni *notInstalledError
	var ce *configError
	switch {
	case errors.As(exit.StartErr, &ni):
		res.Fix = ni.cli.installFix()
	case errors.As(exit.StartErr, &ce):
		res.Fix = ce.fix
	default:
		res.Fix = "check agent.command and agent.args in the loop file: the program must exist and start"
	}
}

var (
	retryInRe    = regexp.MustCompile(`(?i)(?:retry|try again)(?: after| in)\s+(\d+(?:\.\d+)?(?:ms|s|m|h)(?:\d+(?:\.\d+)?(?:ms|s|m))*)`)
	retryInSecRe = regexp.MustCompile(`(?i)(?:retry|try again)(?: after| in)\s+(\d+(?:\.\d+)?)\s*(seconds?|secs?|minutes?|mins?|hours?)\b`)
	retryMsRe    = regexp.MustCompile(`retryDelayMs:\s*(\d+)`)
	retryDelayRe = regexp.MustCompile(`"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"`)
	tryAtRe      = regexp.MustCompile(`(?i)try again at\s+(?:([A-Z][a-z]{2,8}\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}),?\s+)?(\d{1,2}):(\d{2})\s*(AM|PM)?`)
	httpCodeRe   = regexp.MustCompile(`"code"\s*:\s*(\d{3})\b|\bstatus(?: code)?:?\s*(\d{3})\b|\b(\d{3}) (?:Unauthorized|Forbidden|Not Found|Too Many Requests|Bad Request|Internal Server Error|Service Unavailable|Bad Gateway|Gateway Timeout)\b`)
)

// retryAfterIn finds how long an error message says to wait: "retry in 30s",
// "try again in 1m30s", "Suggested retry after 30s", "retryDelayMs: 30000",
// "try again at 2:02 AM" (local time). Zero when it says nothing.
func retryAfterIn(text string, now time.Time) time.Duration {
	if m := retryInRe.FindStringSubmatch(text); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
			return d
		}
	}
	if m := retryInSecRe.FindStringSubmatch(text); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		unit := time.Second
		switch strings.ToLower(m[2][:1]) {
		case "m":
			unit = time.Minute
		case "h":
			unit = time.Hour
		}
		if d := time.Duration(n * float64(unit)); d > 0 {
			return d
		}
	}
	if m := retryMsRe.FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n > 0 {
			return time.Duration(n) * time.Millisecond
		}
	}
	if m := retryDelayRe.FindStringSubmatch(text); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		if n > 0 {
			return time.Duration(n * float64(time.Second))
		}
	}
	if m := tryAtRe.FindStringSubmatch(text); m != nil {
		h, _ := strconv.Atoi(m[2])
		min, _ := strconv.Atoi(m[3])
		switch strings.ToUpper(m[4]) {
		case "PM":
			if h < 12 {
				h += 12
			}
		case "AM":
			if h == 12 {
				h = 0
			}
		}
		day := now
		if m[1] != "" {
			ds := regexp.MustCompile(`(\d)(st|nd|rd|th)`).ReplaceAllString(strings.ReplaceAll(m[1], ",", ""), "$1")
			ds = strings.ReplaceAll(ds, ".", "")
			for _, layout := range []string{"Jan 2 2006", "January 2 2006"} {
				if t, err := time.ParseInLocation(layout, ds, now.Location()); err == nil {
					day = t
					break
				}
			}
		}
		at := time.Date(day.Year(), day.Month(), day.Day(), h, min, 0, 0, now.Location())
		if !at.After(now) {
			if now.Sub(at) < 5*time.Minute {
				// Minute precision: the reset is now or within the minute.
				return time.Minute
			}
			if m[1] == "" {
				at = at.Add(24 * time.Hour)
			}
		}
		if d := at.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// httpStatusIn finds an HTTP status code in an error text.
func httpStatusIn(text string) int {
	for _, m := range httpCodeRe.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if n, err := strconv.Atoi(g); err == nil && n >= 400 && n < 600 {
				return n
			}
		}
	}
	return 0
}

const dnsFix = "the model API's host name could not be resolved (DNS): check the network connection, " +
	"and the endpoint in agent.env (ANTHROPIC_BASE_URL, LOOPRINTER_CODEX_BASE_URL, GOOGLE_GEMINI_BASE_URL) for a typo"

// classifyAPIError classifies an API failure from its HTTP status (0 when
// unknown) and its text, reading a usage limit's reset time with the shared
// retryAfterIn. The fixes name the CLI's own way to log in.
func classifyAPIError(res *Result, status int, text string, authFix string) {
	classifyAPIErrorWith(res, status, text, authFix, retryAfterIn)
}

// classifyAPIErrorWith is classifyAPIError with the backend's own reader
// of a usage limit's reset time (Backend.LimitReset).
func classifyAPIErrorWith(res *Result, status int, text string, authFix string, limitReset func(string, time.Time) time.Duration) {
	low := strings.ToLower(text)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(low, s) {
				return true
			}
		}
		return false
	}
	switch {
	case status == 401 || status == 403 ||
		has("not logged in", "invalid api key", "api key not valid", "incorrect api key", "invalid x-api-key",
			"authentication_failed", "authentication_error", "unauthenticated", "missing environment variable", "please run /login"):
		res.Status = StatusBlocked
		res.Fix = authFix
	case has("enotfound", "eai_again", "getaddrinfo", "no such host", "name resolution", "failed to lookup address",
		"could not resolve host", "dns error", "name or service not known"):
		// Retrying a host name that does not resolve only burns the wall
		// budget: say so at once.
		res.Status = StatusBlocked
		res.Fix = dnsFix
	case status == 404 || has("model_not_found", "not_found_error", "does not exist", "is not found", "issue with the selected model"):
		res.Status = StatusBlocked
		res.Fix = "the API does not know the model: check agent.model (and the endpoint in agent.env)"
	case has("insufficient_quota", "quota exceeded", "credit balance", "billing"):
		res.Status = StatusBlocked
		res.Fix = "the account behind the key has no quota or credit left: top it up or use another key"
	case status == 429 || status == 529 || status == 503 ||
		has("rate limit", "rate_limit", "too many requests", "usage limit", "resource exhausted", "resource_exhausted", "overloaded"):
		res.Status = StatusRateLimited
		if limitReset != nil {
			res.RetryAfter = limitReset(text, time.Now())
		}
	case status == 400 || has("invalid_request_error", "invalid_argument"):
		res.Status = StatusFailed
	default:
		res.Status = StatusAPIError
	}
}
