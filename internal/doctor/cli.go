package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/shlex"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/failover"
	"github.com/looprinter/looprinter/spec"
)

// checkCLI checks one agent CLI: found, its version, a login it can see.
// phases are the loop's phases that use it, fallbackFor those it is a
// fallback for (agent.fallback); none: the loop does not use it, or there
// is no loop. A CLI only a fallback needs is not required for the loop to
// run: without it the engine waits for a usage limit to reset instead of
// failing over, so what is wrong with it is a warning.
func checkCLI(ctx context.Context, c AgentCLI, l *spec.Loop, phases, fallbackFor []string) []Finding {
	var uses []string
	if len(phases) > 0 {
		uses = append(uses, "the loop uses it for "+strings.Join(phases, ", "))
	}
	if len(fallbackFor) > 0 {
		uses = append(uses, "a fallback for "+strings.Join(fallbackFor, ", "))
	}
	usedBy := ""
	if len(uses) > 0 {
		usedBy = " (" + strings.Join(uses, "; ") + ")"
	}
	// The loop may name the program with agent.command (a fallback: its
	// command).
	program, lead, dir := c.Program, []string(nil), ""
	envPath := os.Getenv("PATH")
	var agentEnv map[string]string
	if a, ok := agentOf(c, l, phases, fallbackFor); ok {
		agentEnv = a.Env
		if p, ok := a.Env["PATH"]; ok {
			envPath = p
		}
		if strings.TrimSpace(a.Command) != "" {
			if argv, err := shlex.Split(a.Command); err == nil && len(argv) > 0 {
				program, lead, dir = argv[0], argv[1:], l.Dir
			}
		}
	}
	path, err := checkcmd.FindProgram(program, dir, envPath)
	install := c.Install()
	if err != nil {
		level, fix := Warn, fmt.Sprintf("%s (the version looprinter is tested with), if you want to use it", install)
		if len(phases) == 0 && len(fallbackFor) > 0 {
			fix = fmt.Sprintf("%s (the version looprinter is tested with), or correct the fallback's command: until then the loop cannot fail over to %s and waits for a usage limit to reset instead", install, c.Backend)
		}
		if len(phases) > 0 {
			level = Fail
			fix = fmt.Sprintf("%s (the version looprinter is tested with), or set agent.command to the path of the %s program", install, c.Program)
			if program != c.Program {
				fix = fmt.Sprintf("agent.command names %s: correct the path, or install the CLI with %s (the version looprinter is tested with)", program, install)
			}
		}
		return []Finding{{Level: level, Area: AreaCLIs, Message: fmt.Sprintf("%s: %s not found%s", c.Backend, program, usedBy), Fix: fix}}
	}
	var f Finding
	if v := Version(ctx, dir, path, append(lead, c.VersionArgs...)...); v == "" {
		va := strings.Join(c.VersionArgs, " ")
		f = Finding{Level: Warn, Area: AreaCLIs, Message: fmt.Sprintf("%s: %s printed no version for %s%s", c.Backend, path, va, usedBy),
			Fix: "run `" + path + " " + va + "` yourself: a CLI that cannot start will stop the loop BLOCKED"}
	} else {
		f = Finding{Level: OK, Area: AreaCLIs, Message: fmt.Sprintf("%s %s: %s%s", c.Backend, v, path, usedBy)}
		if other := otherVersion(v, c.Version); other != "" {
			// Another version may stream what the engine reads otherwise.
			f.Level = Info
			if len(phases) > 0 || len(fallbackFor) > 0 {
				f.Level = Warn
			}
			than := map[string]string{"older": "older than", "newer": "newer than", "other": "not"}[olderOrNewer(other, c.Version)]
			f.Message = fmt.Sprintf("%s %s: %s%s: %s the %s %s looprinter is tested with", c.Backend, v, path, usedBy, than, c.Program, c.Version)
			f.Fix = install + " to run the tested version (another version may stream output looprinter reads wrongly)"
			if olderOrNewer(other, c.Version) == "older" {
				f.Fix = install + " to update it to the tested version (an older CLI may lack options and stream output looprinter reads wrongly)"
			}
		}
	}
	login, found := loginEvidence(c, agentEnv)
	if found {
		f.Notes = append(f.Notes, login)
		return []Finding{f}
	}
	level := Info
	if len(phases) > 0 || len(fallbackFor) > 0 {
		level = Warn
	}
	return []Finding{f, {Level: level, Area: AreaCLIs,
		Message: fmt.Sprintf("%s login: could not check: no API key in the environment and no credentials file (they may be in the system keychain)", c.Backend),
		Fix:     "if runs stop BLOCKED with an authentication error: " + c.Login}}
}

// agentOf is the loop's agent settings for CLI c: those of the first phase
// that uses it, else of the first fallback entry that names it.
func agentOf(c AgentCLI, l *spec.Loop, phases, fallbackFor []string) (spec.Agent, bool) {
	if l == nil {
		return spec.Agent{}, false
	}
	if len(phases) > 0 {
		return l.AgentFor(phases[0], isPost(l, phases[0])), true
	}
	for _, ph := range fallbackFor {
		for _, a := range failover.Candidates(l.AgentFor(ph, isPost(l, ph)))[1:] {
			if a.Backend == c.Backend {
				return a, true
			}
		}
	}
	return spec.Agent{}, false
}

// loginEvidence finds a login without a paid call: an API key in the
// environment or the loop's agent.env, or a credentials file.
func loginEvidence(c AgentCLI, agentEnv map[string]string) (string, bool) {
	for _, k := range c.Keys {
		if agentEnv[k] != "" {
			return fmt.Sprintf("login: %s is set in the loop's agent.env", k), true
		}
		if os.Getenv(k) != "" {
			return fmt.Sprintf("login: %s is set", k), true
		}
	}
	home, _ := os.UserHomeDir()
	for _, f := range c.Files {
		p := f
		if strings.HasPrefix(f, "$") {
			env, rest, _ := strings.Cut(strings.TrimPrefix(f, "$"), "/")
			if os.Getenv(env) == "" {
				continue
			}
			p = filepath.Join(os.Getenv(env), rest)
		} else if home != "" {
			p = filepath.Join(home, f)
		} else {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			return "login: credentials found in " + p + " (not checked against the service: that would be a paid call)", true
		}
	}
	return "", false
}

// semverRe finds a version number (major.minor.patch) in a --version line.
var semverRe = regexp.MustCompile(`\d+\.\d+\.\d+`)

// otherVersion is the version a CLI printed (its --version line v) when it
// is not the tested one; "" when it is, or when either cannot be read.
// olderOrNewer says how version got (major.minor.patch) compares with
// tested: "older", "newer", or "other" when either cannot be read.
func olderOrNewer(got, tested string) string {
	g, t := strings.Split(got, "."), strings.Split(semverRe.FindString(tested), ".")
	if len(g) != 3 || len(t) != 3 {
		return "other"
	}
	for i := range 3 {
		a, errA := strconv.Atoi(g[i])
		b, errB := strconv.Atoi(t[i])
		if errA != nil || errB != nil {
			return "other"
		}
		if a != b {
			if a < b {
				return "older"
			}
			return "newer"
		}
	}
	return "other"
}

func otherVersion(v, tested string) string {
	got := semverRe.FindString(v)
	if got == "" || tested == "" || got == tested {
		return ""
	}
	return got
}
