package forge

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/looprinter/looprinter/redact"
)

// TokenVars are the environment variables a GitHub token is read from, in
// order (the GH_ENTERPRISE ones for a host other than github.com, as gh
// reads them). ScrubEnv removes them all from the engine's environment.
var TokenVars = []string{"GITHUB_TOKEN", "GH_TOKEN"}

// EnterpriseTokenVars are read first for a GitHub Enterprise host.
var EnterpriseTokenVars = []string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// ErrNoToken is returned when no token was found.
var ErrNoToken = errors.New("no GitHub token: set GITHUB_TOKEN or GH_TOKEN, or log in with `gh auth login`")

// Token finds the engine's token for host (github.com, or an Enterprise
// host): the environment first, then `gh auth token --hostname HOST` (gh's
// own login). The token is held by the redactor from then on (redact.Hold),
// so no record, transcript or report written after this carries it, and
// the variables are removed from the engine's environment (ScrubEnv), so
// no agent, check or hook the engine starts inherits them.
func Token(ctx context.Context, host string) (string, error) {
	tok, err := Lookup(ctx, host)
	ScrubEnv()
	return tok, err
}

// Lookup finds the token for host as Token does and holds it in the
// redactor, but leaves the environment as it is: `looprinter serve`
// answers on the forge with it, and the runs it starts read it from its
// environment (and remove it from theirs).
func Lookup(ctx context.Context, host string) (string, error) {
	vars := TokenVars
	if host != "" && host != "github.com" {
		vars = append(append([]string{}, EnterpriseTokenVars...), TokenVars...)
	}
	tok := ""
	for _, v := range vars {
		if t := strings.TrimSpace(os.Getenv(v)); t != "" {
			tok = t
			break
		}
	}
	if tok == "" {
		tok = ghToken(ctx, host)
	}
	if tok == "" {
		return "", ErrNoToken
	}
	redact.Hold("forge_token", tok)
	return tok, nil
}

// ghToken asks gh for its token of host; "" when gh is not there or not
// logged in.
func ghToken(ctx context.Context, host string) string {
	if _, err := exec.LookPath("gh"); err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	args := []string{"auth", "token"}
	if host != "" {
		args = append(args, "--hostname", host)
	}
	cmd := exec.CommandContext(ctx, "gh", args...)
	cmd.Env = append(os.Environ(), "GH_PROMPT_DISABLED=1", "NO_COLOR=1")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// ScrubEnv removes every token variable from the engine's environment.
func ScrubEnv() {
	for _, v := range append(append([]string{}, TokenVars...), EnterpriseTokenVars...) {
		os.Unsetenv(v)
	}
}

// Withhold keeps a forge's token from a run that does not use it (a loop
// file that names a forge, run without --issue): the values of the token
// variables are held by the redactor, then the variables are removed
// from the engine's environment, as Token does.
func Withhold() {
	for _, v := range append(append([]string{}, TokenVars...), EnterpriseTokenVars...) {
		if t := strings.TrimSpace(os.Getenv(v)); t != "" {
			redact.Hold(v, t)
		}
	}
	ScrubEnv()
}

// WithholdSecret keeps the webhook secret in the variable name (the loop
// file's forge.github.webhook_secret_env) from every process the engine
// starts: its value is held by the redactor and the variable removed from
// the engine's environment. `looprinter serve` reads it; a run never
// needs it.
func WithholdSecret(name string) {
	if name == "" {
		return
	}
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		redact.Hold(name, v)
	}
	os.Unsetenv(name)
}
