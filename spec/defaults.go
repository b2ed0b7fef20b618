package spec

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

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

// AgentFor returns the agent of a phase: agents.<phase> (for post phases,
// agents.<name>, then agents.post) over agent. The chooser (PhaseChooser,
// the reviewer of retry.choose: review) is agents.reviewer's agent when
// the loop file names one, else the build agent.
func (l *Loop) AgentFor(phase string, post bool) Agent {
	if phase == PhaseChooser && !post {
		if _, ok := l.Agents["reviewer"]; ok {
			phase = "reviewer"
		} else {
			phase = "build"
		}
	}
	a := l.Agent
	if post {
		if o, ok := l.Agents["post"]; ok {
			a = merge(a, o)
		}
	}
	if phase == "replan" {
		if o, ok := l.Agents["plan"]; ok {
			a = merge(a, o)
		}
	}
	if o, ok := l.Agents[phase]; ok {
		a = merge(a, o)
	}
	return a
}

func merge(base, o Agent) Agent {
	if o.Backend != "" && o.Backend != base.Backend {
		// A different backend does not inherit the base's model or command.
		base.Backend, base.Model, base.Command = o.Backend, "", ""
	}
	if o.Model != "" {
		base.Model = o.Model
	}
	if o.Command != "" {
		base.Command = o.Command
	}
	if o.Args != nil {
		base.Args = o.Args
	}
	if o.Timeout != 0 {
		base.Timeout = o.Timeout
	}
	if o.IdleTimeout != 0 {
		base.IdleTimeout = o.IdleTimeout
	}
	if o.Grace != 0 {
		base.Grace = o.Grace
	}
	if o.MaxTurns != 0 {
		base.MaxTurns = o.MaxTurns
	}
	if o.MaxBudgetUSD != 0 {
		base.MaxBudgetUSD = o.MaxBudgetUSD
	}
	if o.Env != nil {
		env := map[string]string{}
		for k, v := range base.Env {
			env[k] = v
		}
		for k, v := range o.Env {
			env[k] = v
		}
		base.Env = env
	}
	if o.Permissions != nil {
		base.Permissions = o.Permissions
	}
	if o.Fallback != nil {
		base.Fallback = o.Fallback
	}
	if o.FallbackAfter != 0 {
		base.FallbackAfter = o.FallbackAfter
	}
	if o.Escalate != nil {
		base.Escalate = o.Escalate
	}
	return base
}

func (l *Loop) validate(nodes map[string]*yaml.Node) []Problem {
	var ps []Problem
	at := func(path, format string, args ...any) {
		p := Problem{Msg: fmt.Sprintf(format, args...)}
		for q := path; ; {
			if n, ok := nodes[q]; ok {
				p.Line, p.Column = n.Line, n.Column
				break
			}
			i := strings.LastIndexAny(q, ".[")
			if i < 0 {
				if n, ok := nodes[""]; ok && q != "" {
					p.Line, p.Column = n.Line, n.Column
				}
				break
			}
			q = q[:i]
		}
		ps = append(ps, p)
	}
	if l.Version != 1 {
		at("version", "version: only version 1 exists, got %d", l.Version)
	}
	switch l.Shape {
	case ShapeCycle, ShapeRalph, ShapeReview:
	default:
		at("shape", "shape: %q is not a loop shape (cycle, ralph or review)", l.Shape)
	}
	if strings.TrimSpace(l.Objective) == "" && l.Shape != ShapeReview {
		at("objective", "objective is missing: write one sentence a machine can judge; it goes into every prompt")
	}
	l.validateAgent("agent", l.Agent, at)
	for key := range l.Agents {
		if !contains(phaseAgentKeys, key) && !l.hasPostPhase(key) {
			at("agents."+key, "agents.%s: no such phase (use %s or a post phase's name)", key, strings.Join(phaseAgentKeys, ", "))
			continue
		}
		l.validateAgent("agents."+key, l.AgentFor(key, l.hasPostPhase(key)), at)
	}
	b := l.Budget
	if b.Iterations < 0 {
		at("budget.iterations", "budget.iterations must be at least 1: a loop never runs unlimited")
	}
	if b.Cycles < 0 {
		at("budget.cycles", "budget.cycles must be at least 1: a loop never runs unlimited")
	}
	if b.SameFailure < 0 || b.SameFailure == 1 {
		at("budget.same_failure", "budget.same_failure must be 2 or more (the same failure twice is the first sign)")
	}
	if b.GapStall < 0 {
		at("budget.gap_stall", "budget.gap_stall must be at least 1")
	}
	if why := l.parallelProblem(); why != "" {
		at("parallel", "%s", why)
	}
	if l.Shape == ShapeRalph && len(l.Verify) == 0 {
		at("verify", "verify is empty: the ralph shape stops only when its verify checks pass, so it needs at least one")
	}
	l.validateStrength(at)
	l.validateRetry(at)
	switch l.Audit.Bar {
	case "critical", "major", "minor":
	default:
		at("audit.bar", "audit.bar: %q is not known (critical, major or minor)", l.Audit.Bar)
	}
	if l.Audit.On && l.Shape == ShapeReview {
		at("audit.on", "audit is for the cycle and ralph shapes: a review is a reviewer's verdict already")
	}
	switch l.HoldoutFeedback {
	case "count", "names", "full":
	default:
		at("holdout_feedback", "holdout_feedback: %q is not known (count, names or full): what a failing holdout check tells the next prompt", l.HoldoutFeedback)
	}
	if len(l.Holdout) > 0 && len(l.HoldoutVerify) == 0 {
		at("holdout", "holdout names files but holdout_verify is empty: name the commands that run the holdout tests")
	}
	if len(l.HoldoutVerify) > 0 && len(l.Holdout) == 0 {
		at("holdout_verify", "holdout_verify runs commands but holdout names no files: name the holdout test files (globs) the agent must not see")
	}
	for i, g := range l.Holdout {
		if !doublestar.ValidatePattern(g) || strings.HasPrefix(g, "/") || strings.HasPrefix(g, "../") || strings.Contains(g, "/../") {
			at(fmt.Sprintf("holdout[%d]", i), "holdout: %q is not a glob of files inside the loop folder", g)
		}
	}
	for key, cmds := range map[string][]string{"setup": l.Setup, "verify": l.Verify, "objective_verify": l.ObjectiveVerify, "holdout_verify": l.HoldoutVerify} {
		for i, cmd := range cmds {
			if strings.TrimSpace(cmd) == "" {
				at(fmt.Sprintf("%s[%d]", key, i), "%s: entry %d is empty: write it, or remove the line", key, i+1)
			}
		}
	}
	switch l.VerifyBaseline {
	case "all", "new-only":
	default:
		at("verify_baseline", "verify_baseline: %q is not known (all or new-only)", l.VerifyBaseline)
	}
	if _, _, err := ParseFlaky(l.Flaky); err != nil {
		at("flaky", "flaky: %v", err)
	}
	switch l.OnTimeout {
	case OnTimeoutBlocked, OnTimeoutContinue:
	default:
		at("on_timeout", "on_timeout: %q is not known (blocked or continue): what happens when an agent's question is not answered within ask_timeout", l.OnTimeout)
	}
	if _, err := ParseSize(l.PrivateBudget); err != nil {
		at("private_budget", "private_budget: %v", err)
	}
	l.validateChecksNetwork(at)
	l.validateLimits(at)
	l.validatePlan(at)
	switch l.Sandbox {
	case "auto", "bwrap", "landlock", "seatbelt", "off":
	default:
		at("sandbox", "sandbox: %q is not known (auto, bwrap, landlock, seatbelt or off)", l.Sandbox)
	}
	l.validateNetwork(at)
	l.validateForge(nodes, at)
	l.validateSource(nodes, at)
	for i, p := range l.Redact.Patterns {
		if _, err := regexp.Compile(p); err != nil {
			at(fmt.Sprintf("redact.patterns[%d]", i), "redact.patterns[%d]: %v", i, err)
		} else if regexp.MustCompile(p).MatchString("") {
			at(fmt.Sprintf("redact.patterns[%d]", i), "redact.patterns[%d]: %q matches empty text: it would redact nothing useful and cost a scan everywhere", i, p)
		}
	}
	for i, g := range l.Protect {
		if !doublestar.ValidatePattern(g) {
			at(fmt.Sprintf("protect[%d]", i), "protect: %q is not a valid glob", g)
		}
	}
	for i, p := range l.TestSummaries {
		if err := p.Validate(); err != nil {
			at(fmt.Sprintf("test_summaries[%d]", i), "test_summaries[%d]: %v", i, err)
		}
	}
	for i, g := range l.ProtectExcept {
		if !doublestar.ValidatePattern(g) {
			at(fmt.Sprintf("protect_except[%d]", i), "protect_except: %q is not a valid glob", g)
		}
	}
	for name, src := range map[string]string{"plan": l.Prompts.Plan, "build": l.Prompts.Build, "replan": l.Prompts.Replan, "ralph": l.Prompts.Ralph} {
		if err := checkTemplate(src); err != nil {
			at("prompts."+name, "prompts.%s: %v", name, err)
		}
	}
	seen := map[string]bool{}
	for i, p := range l.PostPhases {
		path := fmt.Sprintf("post_phases[%d]", i)
		switch {
		case strings.TrimSpace(p.Name) == "":
			at(path, "post phase %d has no name", i+1)
		case contains([]string{"plan", "replan", "build", "setup", "ralph", "post"}, p.Name):
			at(path+".name", "post phase name %q is reserved; choose another", p.Name)
		case seen[p.Name]:
			at(path+".name", "post phase %q appears twice", p.Name)
		}
		seen[p.Name] = true
		if strings.TrimSpace(p.Prompt) == "" {
			at(path, "post phase %q has no prompt", p.Name)
		} else if err := checkTemplate(p.Prompt); err != nil {
			at(path+".prompt", "post phase %q prompt: %v", p.Name, err)
		}
		if strings.TrimSpace(p.Done) == "" || strings.ContainsAny(p.Done, "<>\n") {
			at(path, "post phase %q needs a done signal: a word the agent prints as <promise>WORD</promise>", p.Name)
		}
		if p.MaxSteps < 0 {
			at(path+".max_steps", "post phase %q: max_steps must be at least 1", p.Name)
		}
	}
	switch l.Review.Bar {
	case "critical", "major", "minor":
	default:
		at("review.bar", "review.bar: %q is not a severity (critical, major or minor)", l.Review.Bar)
	}
	switch l.Git.Rollback {
	case "", "task":
	default:
		at("git.rollback", "git.rollback: %q is not known (task, or leave it out)", l.Git.Rollback)
	}
	switch l.Git.Land {
	case "", "merge", "rebase", "pr":
	default:
		at("git.land", "git.land: %q is not known (merge, rebase or pr)", l.Git.Land)
	}
	if l.Notify.Digest != "" {
		if err := checkCron(l.Notify.Digest); err != nil {
			at("notify.digest", "notify.digest: %q %v", l.Notify.Digest, err)
		}
	}
	if l.Notify.Webhook != "" {
		if err := checkWebhook(l.Notify.Webhook); err != nil {
			at("notify.webhook", "notify.webhook: %v", err)
		}
	}
	if _, set := nodes["schedule.every"]; set && l.Schedule.Every <= 0 {
		at("schedule.every", "schedule.every: %s fires without pause: want a duration above 0, like 30m", l.Schedule.Every.D())
	}
	if l.Schedule.Cron != "" {
		if err := checkCron(l.Schedule.Cron); err != nil {
			at("schedule.cron", "schedule.cron: %q %v", l.Schedule.Cron, err)
		}
		if l.Schedule.Every != 0 {
			at("schedule.every", "schedule: set every or cron, not both")
		}
	}
	return ps
}

func (l *Loop) validateAgent(path string, a Agent, at func(string, string, ...any)) {
	if !contains(Backends, a.Backend) {
		at(path+".backend", "%s.backend: %q is not a backend (%s)", path, a.Backend, strings.Join(Backends, ", "))
	}
	if a.Backend == "command" && strings.TrimSpace(a.Command) == "" {
		at(path+".command", "%s.command is empty: the command backend needs the program to run, e.g. command: ./my-agent.sh", path)
	}
	for i, f := range a.Fallback {
		p := fmt.Sprintf("%s.fallback[%d]", path, i)
		if !contains(Backends, f.Backend) {
			at(p+".backend", "%s.backend: %q is not a backend (%s)", p, f.Backend, strings.Join(Backends, ", "))
		}
		if f.Backend == "command" && strings.TrimSpace(f.Command) == "" {
			at(p+".command", "%s.command is empty: the command backend needs the program to run", p)
		}
	}
	last := 0
	for i, e := range a.Escalate {
		p := fmt.Sprintf("%s.escalate[%d]", path, i)
		if e.After < 1 {
			at(p+".after", "%s.after: want the failures after which the stronger agent takes over (1 or more), got %d", p, e.After)
		} else if e.After <= last {
			at(p+".after", "%s.after: %d must be more than the step before's %d (steps go up)", p, e.After, last)
		}
		last = max(last, e.After)
		if e.Backend != "" && !contains(Backends, e.Backend) {
			at(p+".backend", "%s.backend: %q is not a backend (%s)", p, e.Backend, strings.Join(Backends, ", "))
		}
		if e.Backend == "" && e.Model == "" && e.Command == "" {
			at(p, "%s: name the stronger agent: a model, or a backend and model", p)
		}
		if e.Backend == "command" && strings.TrimSpace(e.Command) == "" {
			at(p+".command", "%s.command is empty: the command backend needs the program to run", p)
		}
	}
	if a.FallbackAfter < 0 {
		at(path+".fallback_after", "%s.fallback_after must not be negative", path)
	}
	if a.MaxTurns < 0 {
		at(path+".max_turns", "%s.max_turns must be at least 1", path)
	}
}

// checkWebhook accepts only an http or https URL with a host: the
// notifier posts to it, and anything else (file:, a URL that does not
// parse) would fail at the first notification instead of here. The URL
// itself is not repeated: a webhook's path and query are often its secret.
func checkWebhook(raw string) error {
	const want = "want an http:// or https:// URL with a host"
	// Ifs, not a switch: gremlins counts a case expression as never covered.
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %s", want)
	}
	if u.Scheme == "" {
		return fmt.Errorf("the URL has no scheme: %s", want)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("a %s: URL is not posted to: %s", u.Scheme, want)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("the URL has no host: %s", want)
	}
	return nil
}

// checkCron checks a cron expression the way the scheduler reads it: five
// fields (minute hour day month weekday) or @hourly, @daily, @weekly,
// @monthly, @yearly, optionally after TZ=Zone. It must fire at some time.
func checkCron(expr string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("is not a cron expression (%v)", r)
		}
	}()
	expr = strings.TrimSpace(expr)
	body := expr
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		_, rest, ok := strings.Cut(expr, " ")
		if !ok {
			return fmt.Errorf("has a time zone and no schedule after it")
		}
		body = strings.TrimSpace(rest)
	}
	if strings.HasPrefix(body, "@every") {
		return fmt.Errorf("is an interval: write it as schedule.every instead")
	}
	if !strings.HasPrefix(body, "@") && len(strings.Fields(body)) != 5 {
		return fmt.Errorf("needs five fields (minute hour day month weekday), like \"0 3 * * *\"")
	}
	s, err := cron.ParseStandard(expr)
	if err != nil {
		return fmt.Errorf("is not a cron expression: %v", err)
	}
	if s.Next(time.Now()).IsZero() {
		return fmt.Errorf("never fires (no such date)")
	}
	return nil
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

// The flaky policies (flaky:).
const (
	FlakyFail       = "fail"
	FlakyRerun      = "rerun"
	FlakyQuarantine = "quarantine"
	// MaxFlakyRuns bounds flaky: rerun N.
	MaxFlakyRuns = 20
)

// ParseFlaky reads a flaky: value: fail, rerun N (2 to MaxFlakyRuns runs
// in all) or quarantine; "" is fail.
func ParseFlaky(v string) (mode string, runs int, err error) {
	f := strings.Fields(v)
	switch {
	case len(f) == 0:
		return FlakyFail, 1, nil
	case len(f) == 1 && (f[0] == FlakyFail || f[0] == FlakyQuarantine):
		return f[0], 1, nil
	case f[0] == FlakyRerun:
		if len(f) != 2 {
			return "", 0, fmt.Errorf("%q: write `rerun N`, N the runs in all a check must pass (2 to %d)", v, MaxFlakyRuns)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 2 || n > MaxFlakyRuns {
			return "", 0, fmt.Errorf("%q: N must be a whole number from 2 to %d (the runs in all a check must pass)", v, MaxFlakyRuns)
		}
		return FlakyRerun, n, nil
	}
	return "", 0, fmt.Errorf("%q is not known (fail, rerun N or quarantine)", v)
}

// FlakyRule is the flaky policy in force and, for rerun, the runs in all.
func (l *Loop) FlakyRule() (mode string, runs int) {
	mode, runs, err := ParseFlaky(l.Flaky)
	if err != nil {
		return FlakyFail, 1
	}
	return mode, runs
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

func checkTemplate(src string) error {
	if src == "" {
		return nil
	}
	_, err := template.New("prompt").Option("missingkey=error").Parse(src)
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
