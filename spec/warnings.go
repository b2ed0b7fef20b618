package spec

import (
	"fmt"
	"regexp"
	"strings"
)

// ChecksHostWarning says what `checks.network: host` gives up.
const ChecksHostWarning = "checks.network is host: every check (and so the code the agent wrote, which the checks run) reaches the host's network and the services on its loopback — databases, the agent API's proxy, other loops' servers — and can send what it reads anywhere; keep it none unless the integration tests need a host service"

// Warnings are things that are legal but weaken the loop.
func (l *Loop) Warnings() []string {
	var w []string
	if l.Network.Mode == NetworkOpen {
		w = append(w, "network: open: agents reach the host's network and every service on its loopback (the engine's own API too), unconfined; write `network: {allow: [hosts]}` to confine them")
	}
	if l.Shape == ShapeCycle && len(l.ObjectiveVerify) == 0 {
		w = append(w, "no objective_verify checks: the objective gate passes through and the objective is reported NOT VERIFIED")
	}
	if l.Shape == ShapeCycle && len(l.Verify) == 0 {
		w = append(w, "no verify checks: the cycle gate checks only the plan and progress files")
	}
	if l.Checks.Network == ChecksNetworkHost {
		w = append(w, ChecksHostWarning)
	}
	if l.Retry.ChoosesByReview() && l.Retry.BestOf > 1 {
		c, b := l.AgentFor(PhaseChooser, false), l.AgentFor("build", false)
		if c.Backend == b.Backend && c.Model == b.Model && c.Command == b.Command {
			w = append(w, "retry.choose: review: the reviewer that picks among a best-of's attempts is the build agent's model, which wrote them (self-preference, shared blind spots); set agents.reviewer to another backend or model")
		}
	}
	for _, g := range []struct {
		key  string
		cmds []string
	}{{"verify", l.Verify}, {"objective_verify", l.ObjectiveVerify}, {"holdout_verify", l.HoldoutVerify}} {
		for _, c := range g.cmds {
			if why := UncountedTests(c); why != "" {
				w = append(w, fmt.Sprintf("%s `%s`: %s", g.key, c, why))
			}
		}
	}
	return w
}

// goTestRun finds a `go test` whose output shows no per-test lines.
var goTestRun = regexp.MustCompile(`(^|[\s;&|(])go\s+test(\s|$)`)

// UncountedTests says why a check command's test counts cannot be read
// ("" when they can, or when it runs no known test runner): then the
// passing-count rule cannot hold it.
func UncountedTests(cmd string) string {
	f := strings.Fields(cmd)
	if goTestRun.MatchString(cmd) && !hasAnyField(f, "-v", "-json", "-v=true", "-test.v") {
		return "plain `go test` prints no passing tests, so the passing count cannot be read: add -v (or -json)"
	}
	if (hasAnyField(f, "pytest") || strings.Contains(cmd, "-m pytest")) && hasAnyField(f, "-qq", "-qqq", "--quiet --quiet") {
		return "pytest with -qq prints no summary line, so the passing count cannot be read: use -q"
	}
	return ""
}

func hasAnyField(fields []string, want ...string) bool {
	for _, f := range fields {
		for _, w := range want {
			if f == w {
				return true
			}
		}
	}
	return false
}

// CountedTestCommand rewrites a plain `go test` into `go test -v`, whose
// passing tests the engine can count; other commands are returned as they
// are.
func CountedTestCommand(cmd string) string {
	if !strings.Contains(UncountedTests(cmd), "go test") {
		return cmd
	}
	end := goTestRun.FindStringIndex(cmd)[1] // after "go test" and one blank, or at the end
	if c := cmd[end-1]; c == ' ' || c == '\t' {
		end--
	}
	return cmd[:end] + " -v" + cmd[end:]
}
