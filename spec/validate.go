package spec

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"
)

// The loop file's validation: every problem with its line:column (Problem),
// run after the defaults are applied.

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

func checkTemplate(src string) error {
	if src == "" {
		return nil
	}
	_, err := template.New("prompt").Option("missingkey=error").Parse(src)
	return err
}
