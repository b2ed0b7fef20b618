package spec

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Verdict is what Judge found: every change, and every change it refuses,
// one field a line (`budget.iterations: 10 → 20`); a refused line ends with
// the reason in parentheses.
type Verdict struct {
	Changes []string
	Refused []string
}

// Judge compares two versions of a loop file, field by field over every
// field of Loop (by reflection, see Diff), and refuses every change that no
// rule in judgeRules keeps: default deny. A rule keeps a change only where
// it can only tighten the loop, that is where it can neither make the loop
// end DONE more easily nor run anything new (a command, a check, an
// environment) outside the agent's sandbox. Both the supervisor and the
// engine (for edits made during an agent run) use it: the gate is the
// point of the loop.
func Judge(before, after []byte, path string) Verdict {
	old, err := Parse(before, path)
	if err != nil {
		return Verdict{Refused: []string{"the previous loop file does not parse: " + oneLine(err.Error())}}
	}
	nu, err := Parse(after, path)
	if err != nil {
		return Verdict{Refused: []string{"the new loop file is invalid: " + oneLine(err.Error())}}
	}
	return judge(old, nu)
}

func judge(old, nu *Loop) Verdict {
	var r Verdict
	for _, d := range fieldDiffs(old, nu) {
		line := d.String()
		r.Changes = append(r.Changes, line)
		why := "no rule says this field may change"
		if rule, ok := judgeRules[d.Key]; ok {
			why = rule(d, old, nu)
		}
		if why != "" {
			r.Refused = append(r.Refused, line+" ("+why+")")
		}
	}
	r.Changes, r.Refused = capLines(r.Changes), capLines(r.Refused)
	return r
}

// A judgeRule returns "" to keep a change of its field, or why it refuses
// it.
type judgeRule func(d fieldDiff, old, nu *Loop) string

// judgeRules has one rule per leaf field of Loop, keyed by its path in the
// loop file; map keys and list positions are written *. A field without a
// rule cannot change (TestJudgeRulesCoverEveryField fails for it).
//
//	field                             kept when
//	version, name, shape, objective   never
//	agent.backend/model/command/args  never: another program, model or
//	agent.env.*, agent.permissions      environment runs, or more tools
//	agent.timeout, idle_timeout,      it goes down (0 is unlimited, so
//	  grace, max_turns, max_budget_usd  going to 0 is a raise)
//	agent.fallback.*, fallback_after  never: another agent would run
//	agent.escalate.*                  never: another agent would run
//	agents.*.<same>                   as agent.<same>, on the phase's
//	                                    effective value (agents.<phase>
//	                                    over agent); never adds or removes
//	                                    a phase's entry
//	budget.* (but api_retries)        it goes down
//	budget.api_retries                never
//	setup                             never: it runs outside the sandbox
//	verify, objective_verify          never: a removed or reordered check
//	                                    weakens the gate, an added one runs
//	                                    outside the sandbox with the
//	                                    engine's environment
//	verify_baseline                   it becomes all
//	flaky                             it becomes fail or rerun N (rerun:
//	                                    N only goes up); never quarantine
//	verify_strength.on                it is turned on
//	verify_strength.min, budget,      they go up
//	  max_mutants
//	check_timeout                     never
//	protect                           it only grows
//	protect_defaults                  it is not turned off
//	protect_except                    it only shrinks
//	sandbox                           never
//	checks.network                    it becomes none
//	checks.allow_tells                it only shrinks
//	allow_passing                     it is turned off
//	parallel                          it goes down
//	retry.best_of                     it goes down
//	retry.after                       it becomes same_failure (later)
//	retry.agents.*                    never: another agent would run
//	retry.choose                      never (left out and rule are the
//	                                    same): either way an agent could
//	                                    pick who judges its own attempts
//	prompts.*, vars.*                 always: text for the agent
//	post_phases.*.prompt              the phase stays (text for the agent)
//	post_phases.*.max_steps           it goes down
//	post_phases.*.name, done          never (nor adding or removing a phase)
//	prices.*.*                        never: the cost budget counts with them
//	review.bar                        it gets stricter (critical → major
//	                                    → minor)
//	review.writer                     the draft step stays (text for the
//	                                    agent)
//	review.base, max_rounds,          never (fewer rounds skip a fresh
//	  requirements, architecture,       review before the fix check)
//	  rules
//	git.*, notify.*, schedule.*       never: they push, run or start things
//	forge.*, source.*                 never: where the work is pushed,
//	                                    who may start work and the CI gate
//	                                    are the user's
//	redact.off                        it is turned off (redaction back on)
//	redact.names                      it only grows (more values redacted)
//	redact.patterns                   never: a pattern that matches
//	                                    everything would blank out the
//	                                    records that show what an agent did
//	ask_timeout                       it goes down (an unanswered question
//	                                    ends the wait sooner)
//	on_timeout                        it becomes blocked
var judgeRules = map[string]judgeRule{
	"version":   refuse("the loop file's version is fixed"),
	"name":      refuse("the loop's name identifies its state and records"),
	"shape":     refuse("a loop keeps its shape"),
	"objective": refuse("the objective may not change"),

	"agent.backend":        refuse("the agent program is the user's choice"),
	"agent.model":          refuse("the model is the user's choice"),
	"agent.command":        refuse("a new command would run"),
	"agent.args":           refuse("the agent's arguments may not change"),
	"agent.env.*":          refuse("the agent's environment may not change"),
	"agent.permissions":    refuse("the agent's permissions may not change"),
	"agent.timeout":        capDown,
	"agent.idle_timeout":   capDown,
	"agent.grace":          capDown,
	"agent.max_turns":      capDown,
	"agent.max_budget_usd": capDown,

	"agent.fallback.*.backend": refuse("the agent program is the user's choice"),
	"agent.fallback.*.model":   refuse("the model is the user's choice"),
	"agent.fallback.*.command": refuse("a new command would run"),
	"agent.fallback_after":     refuse("which agent runs is the user's choice"),
	"agent.escalate.*.after":   refuse("which agent runs is the user's choice"),
	"agent.escalate.*.backend": refuse("the agent program is the user's choice"),
	"agent.escalate.*.model":   refuse("the model is the user's choice"),
	"agent.escalate.*.command": refuse("a new command would run"),

	"agents.*.backend":        phaseAgent(refuse("the agent program is the user's choice")),
	"agents.*.model":          phaseAgent(refuse("the model is the user's choice")),
	"agents.*.command":        phaseAgent(refuse("a new command would run")),
	"agents.*.args":           phaseAgent(refuse("the agent's arguments may not change")),
	"agents.*.env.*":          phaseAgent(refuse("the agent's environment may not change")),
	"agents.*.permissions":    phaseAgent(refuse("the agent's permissions may not change")),
	"agents.*.timeout":        phaseAgent(phaseCapDown),
	"agents.*.idle_timeout":   phaseAgent(phaseCapDown),
	"agents.*.grace":          phaseAgent(phaseCapDown),
	"agents.*.max_turns":      phaseAgent(phaseCapDown),
	"agents.*.max_budget_usd": phaseAgent(phaseCapDown),

	"agents.*.fallback.*.backend": phaseAgent(refuse("the agent program is the user's choice")),
	"agents.*.fallback.*.model":   phaseAgent(refuse("the model is the user's choice")),
	"agents.*.fallback.*.command": phaseAgent(refuse("a new command would run")),
	"agents.*.fallback_after":     phaseAgent(refuse("which agent runs is the user's choice")),
	"agents.*.escalate.*.after":   phaseAgent(refuse("which agent runs is the user's choice")),
	"agents.*.escalate.*.backend": phaseAgent(refuse("the agent program is the user's choice")),
	"agents.*.escalate.*.model":   phaseAgent(refuse("the model is the user's choice")),
	"agents.*.escalate.*.command": phaseAgent(refuse("a new command would run")),

	"budget.iterations":   down("a budget may only go down"),
	"budget.cycles":       down("a budget may only go down"),
	"budget.cost_usd":     down("a budget may only go down"),
	"budget.wall":         down("a budget may only go down"),
	"budget.same_failure": down("a budget may only go down"),
	"budget.gap_stall":    down("a budget may only go down"),
	"budget.api_retries":  refuse("api_retries may not change"),

	"setup":            refuse("setup commands run outside the agent's sandbox"),
	"verify":           checks,
	"objective_verify": checks,
	"verify_baseline": func(d fieldDiff, _, _ *Loop) string {
		if d.New.String() == "all" {
			return ""
		}
		return "verify_baseline may only become all"
	},
	"flaky": func(d fieldDiff, _, _ *Loop) string {
		oldMode, oldRuns, _ := ParseFlaky(d.Old.String())
		mode, runs, err := ParseFlaky(d.New.String())
		switch {
		case err != nil, mode == FlakyQuarantine:
			return "flaky may only become fail or rerun N"
		case mode == FlakyRerun && oldMode == FlakyRerun && runs < oldRuns:
			return "flaky: rerun N may only go up"
		}
		return ""
	},
	"check_timeout":               refuse("a check's time limit may not change"),
	"holdout":                     refuse("the holdout set is the user's: it may not change"),
	"holdout_verify":              refuse("the holdout checks are the user's: they may not change"),
	"holdout_feedback":            refuse("what a holdout check tells the agent may not change"),
	"audit.on":                    onlyBecome(true, "the audit may not be turned off"),
	"verify_strength.on":          onlyBecome(true, "verify_strength may not be turned off"),
	"verify_strength.min":         up("verify_strength.min may only go up"),
	"verify_strength.budget":      up("verify_strength.budget may only go up"),
	"verify_strength.max_mutants": up("verify_strength.max_mutants may only go up"),
	"audit.bar":                   refuse("the audit's bar may not change"),
	"audit.prompt":                refuse("what the auditor is asked may not change"),
	"protect": func(d fieldDiff, _, _ *Loop) string {
		if !d.New.IsValid() {
			return "protect may only grow"
		}
		return ""
	},
	"protect_defaults": func(_ fieldDiff, old, nu *Loop) string {
		if protectDefaults(old) && !protectDefaults(nu) {
			return "protect_defaults may not be turned off"
		}
		return ""
	},
	"protect_except": func(d fieldDiff, _, _ *Loop) string {
		if !d.Old.IsValid() {
			return "protect_except may only shrink"
		}
		return ""
	},
	"sandbox.mode":          refuse("the sandbox may not change"),
	"sandbox.allow_read":    refuse("the paths let through the sandbox's masks may not change"),
	"sandbox.allow_sockets": refuse("the host's sockets let into the sandbox may not change"),
	"sandbox.deny_read": func(d fieldDiff, _, _ *Loop) string {
		if !d.New.IsValid() {
			return "sandbox.deny_read may only grow"
		}
		return ""
	},
	"network.mode":  refuse("the network policy may not change"),
	"network.allow": refuse("the network allowlist may not change"),
	"checks.network": func(d fieldDiff, _, nu *Loop) string {
		if nu.Checks.Network == ChecksNetworkNone {
			return ""
		}
		return "the checks' network may only become none"
	},
	"checks.network_allow": func(d fieldDiff, _, _ *Loop) string {
		if !d.Old.IsValid() {
			return "checks.network.allow may only shrink"
		}
		return ""
	},
	"checks.allow_tells": func(d fieldDiff, _, _ *Loop) string {
		if !d.Old.IsValid() {
			return "checks.allow_tells may only shrink"
		}
		return ""
	},
	// A warning's threshold: lowering it warns sooner; the same size
	// written another way (or the default written out) changes nothing.
	"private_budget": func(d fieldDiff, old, nu *Loop) string {
		if nu.PrivateBudgetBytes() <= old.PrivateBudgetBytes() {
			return ""
		}
		return "private_budget may only go down"
	},
	// How test counts are read decides whether the passing count can drop.
	"test_summaries.*.name":    refuse("how test results are read may not change"),
	"test_summaries.*.passed":  refuse("how test results are read may not change"),
	"test_summaries.*.failed":  refuse("how test results are read may not change"),
	"test_summaries.*.skipped": refuse("how test results are read may not change"),
	"test_summaries.*.total":   refuse("how test results are read may not change"),
	"allow_passing":            onlyBecome(false, "allow_passing may not be turned on"),
	// More runs at once spend the budget faster; fewer only slow the loop.
	"parallel": down("parallel may only go down"),
	// More attempts spend the budget faster; sooner too.
	"retry.best_of": down("retry.best_of may only go down"),
	"retry.after": func(d fieldDiff, _, _ *Loop) string {
		if d.New.String() == RetryAfterSameFailure {
			return ""
		}
		return "retry.after may only become same_failure (attempts start later)"
	},
	// Who picks among the passing attempts: a switch to review lets an
	// attempt argue for itself, one to rule takes the user's reviewer out.
	"retry.choose": func(_ fieldDiff, old, nu *Loop) string {
		if old.Retry.ChooseOf() == nu.Retry.ChooseOf() {
			return ""
		}
		return "retry.choose may not change: who picks the kept attempt is the user's choice"
	},
	"retry.agents.*.backend": refuse("the agent program is the user's choice"),
	"retry.agents.*.model":   refuse("the model is the user's choice"),

	"prompts.plan":   keep,
	"prompts.build":  keep,
	"prompts.replan": keep,
	"prompts.ralph":  keep,
	"vars.*":         keep,

	"post_phases.*.name":      refuse("post phases may not be added, removed, renamed or reordered"),
	"post_phases.*.prompt":    samePhase(keep),
	"post_phases.*.done":      samePhase(refuse("a post phase's done signal may not change")),
	"post_phases.*.max_steps": samePhase(down("max_steps may only go down")),

	"prices.*.input":       refuse("the cost budget counts with the prices"),
	"prices.*.output":      refuse("the cost budget counts with the prices"),
	"prices.*.cache_read":  refuse("the cost budget counts with the prices"),
	"prices.*.cache_write": refuse("the cost budget counts with the prices"),

	"review.base":         refuse("the reviewed change may not change"),
	"review.bar":          reviewBar,
	"review.max_rounds":   refuse("fewer rounds skip a fresh review, more raise a budget"),
	"review.requirements": refuse("the reviewer's requirements may not change"),
	"review.architecture": refuse("the reviewer's architecture notes may not change"),
	"review.rules":        refuse("the reviewer's rules may not change"),
	"review.writer": func(d fieldDiff, _, _ *Loop) string {
		if d.Old.String() == "" || d.New.String() == "" {
			return "the draft step may not be added or removed"
		}
		return ""
	},

	"git.commit":   refuse("git settings may not change"),
	"git.branch":   refuse("git settings may not change"),
	"git.worktree": refuse("git settings may not change"),
	"git.push":     refuse("git settings may not change"),
	"git.remote":   refuse("git settings may not change"),
	"git.rollback": refuse("git settings may not change"),
	"git.land":     refuse("landing moves the base branch"),
	"git.base":     refuse("landing moves the base branch"),
	"git.land_fix": refuse("a landing fix is one more agent run"),

	"git.gate_commits": refuse("git settings may not change"),

	"notify.command": refuse("a notify command runs outside the agent's sandbox"),
	"notify.webhook": refuse("notifications may not change"),
	"notify.on":      refuse("notifications may not change"),
	"notify.digest":  refuse("notifications may not change"),

	"forge.github.repo":               refuse("where the work is pushed is the user's choice"),
	"forge.github.base_url":           refuse("where the work is pushed is the user's choice"),
	"forge.github.allow.logins":       refuse("who may start work is the user's choice"),
	"forge.github.allow.associations": refuse("who may start work is the user's choice"),
	"forge.ci.timeout":                refuse("the CI gate may not change"),
	"forge.ci.required":               refuse("the CI gate may not change"),
	"forge.ci.rounds":                 refuse("the CI gate may not change"),
	"forge.review.rounds":             refuse("review rounds are the user's choice"),
	"forge.github.webhook_secret_env": refuse("who may start work is the user's choice"),
	"forge.github.label":              refuse("which issues start work is the user's choice"),
	"source.github.label":             refuse("which issues start work is the user's choice"),

	"redact.off": func(d fieldDiff, _, _ *Loop) string {
		if d.New.Bool() {
			return "redaction may not be turned off"
		}
		return ""
	},
	"redact.names": func(d fieldDiff, _, _ *Loop) string {
		if !d.New.IsValid() {
			return "redact.names may only grow"
		}
		return ""
	},
	"redact.patterns": refuse("redact.patterns may not change: a pattern that matches everything would blank out the records"),

	"schedule.every": refuse("the schedule may not change"),
	"schedule.cron":  refuse("the schedule may not change"),

	"ask_timeout":          down("ask_timeout may only go down"),
	"limits.policy":        refuse("the usage-limit policy is the user's choice"),
	"limits.resume_within": refuse("the usage-limit policy is the user's choice"),
	"plan.approve.on":      refuse("the plan's approval is the user's"),
	"plan.approve.timeout": refuse("the plan's approval is the user's"),
	"plan.approve.then":    refuse("the plan's approval is the user's"),
	"on_timeout": func(d fieldDiff, _, _ *Loop) string {
		if d.New.String() == OnTimeoutBlocked {
			return ""
		}
		return "on_timeout may only become blocked"
	},
}

func keep(fieldDiff, *Loop, *Loop) string { return "" }

// onlyBecome lets a switch change only to want.
func onlyBecome(want bool, why string) judgeRule {
	return func(d fieldDiff, _, _ *Loop) string {
		if d.New.Bool() == want {
			return ""
		}
		return why
	}
}

func refuse(why string) judgeRule {
	return func(fieldDiff, *Loop, *Loop) string { return why }
}

// number is a numeric leaf (int, float, Duration) as a float.
func number(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int())
	case reflect.Float32, reflect.Float64:
		return v.Float()
	}
	return math.NaN() // never compares as lower
}

// up keeps a number that goes up (or appears).
func up(why string) judgeRule {
	return func(d fieldDiff, _, _ *Loop) string {
		if d.New.IsValid() && (!d.Old.IsValid() || number(d.New) > number(d.Old)) {
			return ""
		}
		return why
	}
}

// down keeps a number that goes down.
func down(why string) judgeRule {
	return func(d fieldDiff, _, _ *Loop) string {
		if d.Old.IsValid() && d.New.IsValid() && number(d.New) < number(d.Old) {
			return ""
		}
		return why
	}
}

// unlimited reads a per-run cap where 0 means no cap.
func unlimited(f float64) float64 {
	if f == 0 {
		return math.Inf(1)
	}
	return f
}

const capWhy = "a per-run cap may only go down; 0 is unlimited"

// capDown keeps a per-run cap of agent that goes down, 0 being unlimited.
func capDown(d fieldDiff, _, _ *Loop) string {
	if unlimited(number(d.New)) < unlimited(number(d.Old)) {
		return ""
	}
	return capWhy
}

// phaseAgent refuses adding or removing a phase's entry under agents: (the
// phase would run with other settings) before its rule judges the field.
func phaseAgent(r judgeRule) judgeRule {
	return func(d fieldDiff, old, nu *Loop) string {
		if len(d.Keys) == 0 || !agentsHas(old, d.Keys[0]) || !agentsHas(nu, d.Keys[0]) {
			return "a phase's entry under agents may not be added or removed"
		}
		return r(d, old, nu)
	}
}

func agentsHas(l *Loop, phase string) bool {
	_, ok := l.Agents[phase]
	return ok
}

// phaseCapDown judges a cap under agents.<phase> by what the phase runs
// with (agents.<phase> over agent, where 0 inherits): a phase override
// going from 0 to 2h raises the cap when agent's was 20m.
func phaseCapDown(d fieldDiff, old, nu *Loop) string {
	phase := d.Keys[0]
	name := d.Key[strings.LastIndex(d.Key, ".")+1:]
	o := effectiveCap(old, phase, name)
	n := effectiveCap(nu, phase, name)
	if unlimited(n) < unlimited(o) {
		return ""
	}
	return fmt.Sprintf("a per-run cap may only go down; under agents 0 inherits agent's: %s would run with %s instead of %s",
		phase, renderCap(nu, phase, name), renderCap(old, phase, name))
}

func agentField(l *Loop, phase, name string) reflect.Value {
	a := reflect.ValueOf(l.AgentFor(phase, l.hasPostPhase(phase)))
	t := a.Type()
	for i := 0; i < t.NumField(); i++ {
		if yamlName(t.Field(i)) == name {
			return a.Field(i)
		}
	}
	return reflect.Value{}
}

func effectiveCap(l *Loop, phase, name string) float64 {
	v := agentField(l, phase, name)
	if !v.IsValid() {
		return math.NaN()
	}
	return number(v)
}

func renderCap(l *Loop, phase, name string) string {
	v := agentField(l, phase, name)
	if v.IsValid() && number(v) == 0 {
		return "unlimited"
	}
	return render(v)
}

// samePhase refuses a field of a post phase that was added or removed.
func samePhase(r judgeRule) judgeRule {
	return func(d fieldDiff, old, nu *Loop) string {
		if !d.Old.IsValid() || !d.New.IsValid() {
			return "post phases may not be added or removed"
		}
		return r(d, old, nu)
	}
}

// checks refuses every change to a list of checks.
func checks(d fieldDiff, _, _ *Loop) string {
	switch {
	case d.Whole:
		return "the checks' order and number may not change"
	case !d.New.IsValid():
		return "a check may never be removed"
	default:
		return "an added check would run outside the agent's sandbox, with the engine's environment"
	}
}

func protectDefaults(l *Loop) bool { return l.ProtectDefaults == nil || *l.ProtectDefaults }

// reviewBar keeps a stricter bar: more findings count as open.
func reviewBar(d fieldDiff, _, _ *Loop) string {
	rank := map[string]int{"minor": 0, "major": 1, "critical": 2}
	o, ok1 := rank[d.Old.String()]
	n, ok2 := rank[d.New.String()]
	if ok1 && ok2 && n < o {
		return ""
	}
	return "review.bar may only get stricter (critical → major → minor)"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
