package spec

import (
	"fmt"
	"strings"
)

// Best of N: a task tried N ways at once, each attempt on a layer of its
// own, the passing attempt with the smallest change kept. `attempts: N` on
// a task of the plan asks for it from the task's first run; `retry:` in
// the loop file asks for it once a task has failed (after: failed) or
// failed the same way twice (after: same_failure).

// MaxBestOf bounds best_of and a task's attempts.
const MaxBestOf = 10

// BestOfAvailable says whether this version runs a task's attempts at
// once: it does under bubblewrap with copy-on-write layers (each attempt
// on a layer of its own); a loop file whose sandbox has no layer is
// refused retry.best_of above 1, and BestOfWarning says when the sandbox
// the machine gives has none. A variable only so that tests can validate
// as a version without it would.
var BestOfAvailable = true

// Values of retry.after.
const (
	RetryAfterFailed      = "failed"
	RetryAfterSameFailure = "same_failure"
)

// Values of retry.choose: who picks the kept attempt among the passing
// ones. rule (the default, also when left out): the checks' strength
// pass, then the smallest change. review: a reviewer agent picks among
// the passing attempts; a missing or refused answer falls back to rule.
const (
	ChooseRule   = "rule"
	ChooseReview = "review"
)

// PhaseChooser is the phase of the agent run that picks a best-of's kept
// attempt under retry.choose: review (AgentFor gives its agent).
const PhaseChooser = "chooser"

// Retry is `retry:`: BestOf attempts of a task at once (0 and 1: one, as
// without it) once the task has failed (After: failed) or failed the same
// way twice (After: same_failure). Attempt K runs on Agents[K mod
// len(Agents)] (over the build agent), or on the build agent when Agents is
// empty.
type Retry struct {
	BestOf int          `yaml:"best_of"`
	After  string       `yaml:"after"`
	Agents []RetryAgent `yaml:"agents"`
	// Choose is who picks the kept attempt: ChooseRule ("" too) or
	// ChooseReview.
	Choose string `yaml:"choose"`
}

// ChoosesByReview says whether a reviewer agent picks the kept attempt
// of a best-of among the passing ones (retry.choose: review).
func (r Retry) ChoosesByReview() bool { return r.Choose == ChooseReview }

// ChooseOf is retry.choose in force: rule when it is left out.
func (r Retry) ChooseOf() string {
	if r.Choose == "" {
		return ChooseRule
	}
	return r.Choose
}

// RetryAgent is the agent of some of a best-of's attempts: Model on
// Backend (when given; else the build agent's backend).
type RetryAgent struct {
	Backend string `yaml:"backend"`
	Model   string `yaml:"model"`
}

// retryDefaults fills retry.after.
func (l *Loop) retryDefaults() {
	if l.Retry.After == "" {
		l.Retry.After = RetryAfterFailed
	}
}

// validateRetry checks retry's values.
func (l *Loop) validateRetry(at func(path, format string, args ...any)) {
	r := l.Retry
	if r.BestOf < 0 || r.BestOf > MaxBestOf {
		at("retry.best_of", "retry.best_of: %d: want the attempts of a failed task run at once, from 2 to %d (0 or 1: one attempt, as without retry)", r.BestOf, MaxBestOf)
	}
	switch r.After {
	case RetryAfterFailed, RetryAfterSameFailure:
	default:
		at("retry.after", "retry.after: %q is not known (failed: after a task's first failed try; same_failure: after the same failure twice)", r.After)
	}
	if r.BestOf > 1 && r.BestOf <= MaxBestOf && !BestOfAvailable {
		at("retry.best_of", "retry.best_of: %d: this version runs a task's tries one at a time: running them at once needs the engine's waves of build runs, each on a copy-on-write layer of its own, which it does not run yet; set best_of: 1 or remove retry", r.BestOf)
	}
	if r.BestOf > 1 && r.BestOf <= MaxBestOf && BestOfAvailable {
		switch l.Sandbox {
		case "landlock", "seatbelt", "off":
			at("retry.best_of", "retry.best_of: %d: sandbox %s gives no attempt a copy-on-write layer of its own, and a task's attempts run at once only on layers (bubblewrap, the default where the machine allows it); use sandbox: auto or bwrap, or set best_of: 1 or remove retry", r.BestOf, l.Sandbox)
		}
	}
	if r.BestOf > 1 && l.Shape != ShapeCycle {
		at("retry.best_of", "retry.best_of: %d: only the cycle shape runs a task's attempts at once; the %s shape has no tasks, so remove retry", r.BestOf, l.Shape)
	}
	switch r.Choose {
	case "", ChooseRule, ChooseReview:
		if r.Choose != "" && r.BestOf < 2 {
			at("retry.choose", "retry.choose: %s: it picks among a best-of's attempts, and retry.best_of is %d: set best_of to 2 or more, or remove choose", r.Choose, r.BestOf)
		}
	default:
		at("retry.choose", "retry.choose: %q is not known (rule: the checks' strength pass, then the smallest change; review: a reviewer agent picks among the passing attempts)", r.Choose)
	}
	if len(r.Agents) > 0 && r.BestOf < 2 {
		at("retry.agents", "retry.agents names agents but retry.best_of is %d: set best_of to 2 or more, or remove agents", r.BestOf)
	}
	if len(r.Agents) > MaxBestOf {
		at("retry.agents", "retry.agents: %d agents; at most %d (one per attempt)", len(r.Agents), MaxBestOf)
	}
	build := l.AgentFor("build", false)
	for i, a := range r.Agents {
		p := fmt.Sprintf("retry.agents[%d]", i)
		switch {
		case a.Backend == "" && a.Model == "":
			at(p, "%s: name the attempt's agent: a model, or a backend and model", p)
		case a.Backend != "" && !contains(Backends, a.Backend):
			at(p+".backend", "%s.backend: %q is not a backend (%s)", p, a.Backend, strings.Join(Backends, ", "))
		case a.Backend == "command" && build.Backend != "command":
			at(p+".backend", "%s.backend: command runs the build agent's command, and the build agent is %s: name another backend", p, build.Backend)
		}
	}
}

// AttemptAgent is the agent of attempt k (0-based) of a best-of: the build
// agent, with Retry.Agents[k mod len] laid over it when retry names agents.
func (l *Loop) AttemptAgent(k int) Agent {
	a := l.AgentFor("build", false)
	if n := len(l.Retry.Agents); n > 0 && k >= 0 {
		r := l.Retry.Agents[k%n]
		a = merge(a, Agent{Backend: r.Backend, Model: r.Model})
	}
	return a
}

// RetryBestOf is how many attempts retry asks for a task's next run, given
// how many times it failed and how many times in a row the same failure
// came back: 1 when retry does not apply (yet).
func (l *Loop) RetryBestOf(failed, same int) int {
	if l.Retry.BestOf < 2 {
		return 1
	}
	switch l.Retry.After {
	case RetryAfterSameFailure:
		if same >= 2 {
			return l.Retry.BestOf
		}
	default:
		if failed >= 1 {
			return l.Retry.BestOf
		}
	}
	return 1
}

// BestOfWarning says why retry.best_of runs a failed task's tries one at
// a time under the sandbox kind in force ("" under bubblewrap with
// copy-on-write layers, layered, and for a loop without best_of).
func (l *Loop) BestOfWarning(kind string, layered bool) string {
	if l.Retry.BestOf < 2 || l.Shape != ShapeCycle || (kind == "bwrap" && layered) {
		return ""
	}
	what := "sandbox " + kind
	if kind == "bwrap" {
		what = "bwrap without copy-on-write layers on this machine"
	}
	return fmt.Sprintf("retry.best_of: %d: a failed task runs again once at a time here, and so does a plan's task with attempts: %s gives no attempt a copy-on-write layer of its own (only bubblewrap with layers does)", l.Retry.BestOf, what)
}
