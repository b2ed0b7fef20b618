package spec

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/looprinter/looprinter/agent"
)

// Backends are the agent backends a loop file may name: those each backend
// registers in its own file under agent/ (claude, codex, gemini, command),
// as they stand once the packages are initialised. agent imports nothing of
// spec, so spec reads the registry rather than keep a copy.
var Backends = agent.Names()

// Defaults, documented in docs/loop-file.md.
const (
	DefaultTimeout      = 20 * time.Minute
	DefaultIdleTimeout  = 5 * time.Minute
	DefaultGrace        = 10 * time.Second
	DefaultMaxTurns     = 30
	DefaultIterations   = 30
	DefaultCycles       = 10
	DefaultCostUSD      = 25.0
	DefaultWall         = 4 * time.Hour
	DefaultSameFailure  = 3
	DefaultGapStall     = 3
	DefaultAPIRetries   = 3
	DefaultCheckTimeout = 10 * time.Minute
	DefaultPostMaxSteps = 5
	DefaultReviewRounds = 3
	DefaultAskTimeout   = time.Hour
	// DefaultFallbackAfter: a usage limit resetting later than this sends
	// the next run to agent.fallback.
	DefaultFallbackAfter = 10 * time.Minute
)

// phaseAgentKeys are the phases whose agent can be overridden under agents:.
var phaseAgentKeys = []string{"plan", "replan", "build", "post", "ralph", "writer", "reviewer", "fixer", "supervisor", "auditor"}

func (l *Loop) applyDefaults() {
	if l.Version == 0 {
		l.Version = 1
	}
	if l.Shape == "" {
		l.Shape = ShapeCycle
	}
	if l.Name == "" {
		l.Name = defaultName(l.Dir)
	}
	if l.Parallel == 0 {
		l.Parallel = 1
	}
	a := &l.Agent
	if a.Backend == "" {
		a.Backend = "claude"
	}
	if a.Timeout == 0 {
		a.Timeout = Duration(DefaultTimeout)
	}
	if a.IdleTimeout == 0 {
		a.IdleTimeout = Duration(DefaultIdleTimeout)
	}
	if a.Grace == 0 {
		a.Grace = Duration(DefaultGrace)
	}
	if a.MaxTurns == 0 {
		a.MaxTurns = DefaultMaxTurns
	}
	if a.FallbackAfter == 0 {
		a.FallbackAfter = Duration(DefaultFallbackAfter)
	}
	b := &l.Budget
	if b.Iterations == 0 {
		b.Iterations = DefaultIterations
	}
	if b.Cycles == 0 {
		b.Cycles = DefaultCycles
	}
	if b.CostUSD == 0 {
		b.CostUSD = DefaultCostUSD
	}
	if b.Wall == 0 {
		b.Wall = Duration(DefaultWall)
	}
	if b.SameFailure == 0 {
		b.SameFailure = DefaultSameFailure
	}
	if b.GapStall == 0 {
		b.GapStall = DefaultGapStall
	}
	if b.APIRetries == 0 {
		b.APIRetries = DefaultAPIRetries
	}
	if l.VerifyBaseline == "" {
		l.VerifyBaseline = "all"
	}
	if strings.TrimSpace(l.Flaky) == "" {
		l.Flaky = FlakyFail
	}
	if l.HoldoutFeedback == "" {
		l.HoldoutFeedback = "count"
	}
	l.strengthDefaults()
	l.retryDefaults()
	if l.Audit.Bar == "" {
		l.Audit.Bar = "major"
	}
	if l.PrivateBudget == "" {
		l.PrivateBudget = DefaultPrivateBudget
	}
	if l.Sandbox == "" {
		l.Sandbox = l.SandboxOpts.Mode
	}
	if l.Sandbox == "" {
		l.Sandbox = "auto"
	}
	if l.Checks.Network == "" {
		l.Checks.Network = ChecksNetworkNone
	}
	l.SandboxOpts.Mode = l.Sandbox
	if l.Network.Mode == "" {
		l.Network.Mode = NetworkAllow
	}
	if l.CheckTimeout == 0 {
		l.CheckTimeout = Duration(DefaultCheckTimeout)
	}
	if l.AskTimeout == 0 {
		l.AskTimeout = Duration(DefaultAskTimeout)
	}
	if l.Limits.Policy == "" {
		l.Limits.Policy = LimitsWait
	}
	l.planDefaults()
	if l.OnTimeout == "" {
		l.OnTimeout = OnTimeoutBlocked
	}
	for i := range l.PostPhases {
		if l.PostPhases[i].MaxSteps == 0 {
			l.PostPhases[i].MaxSteps = DefaultPostMaxSteps
		}
	}
	if l.Review.Bar == "" {
		l.Review.Bar = "major"
	}
	if l.Review.MaxRounds == 0 {
		l.Review.MaxRounds = DefaultReviewRounds
	}
	if l.Notify.On == nil {
		l.Notify.On = StringList{"stop", "blocked", "no_progress", "budget_80", "question"}
	}
}

var nameClean = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func defaultName(dir string) string {
	base := dir
	if i := strings.LastIndex(dir, "/"); i >= 0 {
		base = dir[i+1:]
	}
	base = nameClean.ReplaceAllString(base, "-")
	if base == "" {
		return "loop"
	}
	return base
}

// GateChecks are every check of the gates, in the order the baseline runs
// them: verify, then objective_verify; a command in both is listed once.
func (l *Loop) GateChecks() []string {
	out := make([]string, 0, len(l.Verify)+len(l.ObjectiveVerify))
	seen := map[string]bool{}
	for _, c := range append(append([]string{}, l.Verify...), l.ObjectiveVerify...) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// SharedCheck says whether cmd is in both verify and objective_verify: one
// run of it answers for both.
func (l *Loop) SharedCheck(cmd string) bool {
	return slices.Contains(l.Verify, cmd) && slices.Contains(l.ObjectiveVerify, cmd)
}

func (l *Loop) hasPostPhase(name string) bool {
	for _, p := range l.PostPhases {
		if p.Name == name {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
