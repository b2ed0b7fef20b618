package forge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/looprinter/looprinter/safegit"
)

// pushTokenVar carries the token to the credential helper of one git
// push: it is set in that git process's environment only (never the
// engine's, which agents and checks inherit, and never on a command line,
// which every process can read in /proc).
const pushTokenVar = "LOOPRINTER_FORGE_TOKEN"

// credentialHelper is the engine's own helper: git runs it as a shell
// function, and it answers a "get" with the token from the one variable
// only this git process has. Every other helper (the user's store, a
// keychain) is turned off first by the empty credential.helper.
const credentialHelper = `!f() { test "$1" = get || exit 0; printf 'username=%s\npassword=%s\n' "$LOOPRINTER_FORGE_USER" "$` + pushTokenVar + `"; }; f`

// CredentialArgs are the git options that make a git command use the
// engine's credential helper alone.
func CredentialArgs() []string {
	return []string{"-c", "credential.helper=", "-c", "credential.helper=" + credentialHelper, "-c", "credential.interactive=false"}
}

// CredentialEnv is the environment of one git process that authenticates
// with token as user: the engine's environment, no prompt, the token in
// the variable the helper reads.
func CredentialEnv(user, token string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == pushTokenVar || k == "GIT_ASKPASS" || k == "SSH_ASKPASS" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "LOOPRINTER_FORGE_USER="+user, pushTokenVar+"="+token)
}

// Push is one push of the engine's: Src (a ref or commit of the
// repository in Dir) to Branch of Remote (a URL or a path), authenticated
// as User with Token.
type Push struct {
	Dir, Remote, Src, Branch string
	User, Token              string
}

// GitPush makes the push p through the engine's credential helper. A push
// that fails says git's words, with the token taken out.
func GitPush(ctx context.Context, p Push) error {
	// No force: a commit someone else pushed to the branch is never lost;
	// such a push fails and says so.
	args := safegit.Args(append(CredentialArgs(), "push", "--porcelain", p.Remote, p.Src+":refs/heads/"+p.Branch)...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = p.Dir
	cmd.Env = CredentialEnv(p.User, p.Token)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if p.Token != "" {
			msg = strings.ReplaceAll(msg, p.Token, "[REDACTED:forge_token]")
		}
		return fmt.Errorf("git push to %s: %v: %s", p.Remote, err, msg)
	}
	return nil
}
