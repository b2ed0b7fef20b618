package failover

import (
	"fmt"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Escalation on repeated failure (agent.escalate). A build run of a task
// (a ralph attempt: the loop's one task; the review shape's fixer, whose
// every run follows a review that found something) that already failed
// After times,
// or whose last failures were the same one After times in a row, goes to
// the escalation step's stronger agent; the highest step reached holds for
// the task's later runs. A task's runs are counted per cycle; the next task
// starts on the base agent again. An escalated run is an ordinary run: the
// same budgets bound it and the cost model prices it by its backend and
// model. Each change of agent is an `escalated` record with its reason,
// and the report keeps "T-004 needed the stronger model … after 2 same
// failures".

// Escalation is what the engine knows of escalations.
type Escalation struct {
	// Tries counts the runs started per task (c<cycle>/<task>).
	Tries map[string]int `json:"tries,omitempty"`
	// Level is the escalation step in force per task (0: the base agent).
	Level map[string]int `json:"level,omitempty"`
	// Escalated is the task whose runs are on a stronger agent ("" none).
	Escalated string `json:"escalated,omitempty"`
	// InUse is, per phase, the agent an escalating phase's last run used.
	InUse map[string]string `json:"in_use,omitempty"`
	// Notes say which task needed which agent and why, for the report.
	Notes []string `json:"notes,omitempty"`
}

// maxEscalationNotes bounds the notes kept.
const maxEscalationNotes = 20

func (s *Switch) escalation() *Escalation {
	if *s.Escalation == nil {
		*s.Escalation = &Escalation{}
	}
	es := *s.Escalation
	if es.Tries == nil {
		es.Tries = map[string]int{}
	}
	if es.Level == nil {
		es.Level = map[string]int{}
	}
	if es.InUse == nil {
		es.InUse = map[string]string{}
	}
	return es
}

// escalatedAgent is a with escalation step e applied: another backend gets
// its own model and command and no arguments.
func escalatedAgent(a spec.Agent, e spec.Escalation) spec.Agent {
	if e.Backend != "" && e.Backend != a.Backend {
		a.Backend, a.Model, a.Command, a.Args = e.Backend, "", "", nil
	}
	if e.Model != "" {
		a.Model = e.Model
	}
	if e.Command != "" {
		a.Command = e.Command
	}
	return a
}

// Escalate gives the agent a run of phase for task starts with: a (the
// phase's agent after failover), or the escalation step the task's
// failures reached. Only build runs and ralph attempts escalate.
func (s *Switch) Escalate(phase, task string, first, a spec.Agent) spec.Agent {
	if phase == "reviewer" {
		return s.reviewerOffEscalated(a)
	}
	if len(first.Escalate) == 0 || (phase != "build" && phase != "ralph" && phase != "fixer") {
		return a
	}
	es := s.escalation()
	name := task
	if name == "" {
		name = "the task"
	}
	key := fmt.Sprintf("c%d/%s", *s.Cycle, task)
	if task == "" || phase == "fixer" {
		// The fixer's runs are one task: its rounds (round-1, round-2 …)
		// each follow a review that found something.
		key = fmt.Sprintf("c%d/%s", *s.Cycle, phase)
	}
	if phase == "fixer" {
		name = "the fix"
	}
	tries := es.Tries[key] // the task's runs before this one: each failed
	es.Tries[key]++
	// The same failure in a row, counted within this task's runs.
	same := min(*s.SameCount, tries)
	level, reason := 0, ""
	for i, step := range first.Escalate {
		switch {
		case same >= step.After:
			level, reason = i+1, fmt.Sprintf("after %d same failures", same)
		case tries >= step.After:
			level, reason = i+1, fmt.Sprintf("after %d failed tries", tries)
		}
	}
	level = max(level, es.Level[key]) // a task never steps down while it fails
	chosen := a
	if level > 0 {
		chosen = escalatedAgent(a, first.Escalate[level-1])
	}
	if prev := es.Level[key]; level != prev {
		from := Key(a)
		if prev > 0 {
			from = Key(escalatedAgent(a, first.Escalate[prev-1]))
		}
		msg := fmt.Sprintf("%s's next run goes to %s %s (was %s)", name, Key(chosen), reason, from)
		s.Emit(record.Event{Event: record.Escalated, Phase: phase, Task: task, From: from, To: Key(chosen), Backend: chosen.Backend, Model: chosen.Model, Reason: reason, Message: msg})
		es.Notes = append(es.Notes, fmt.Sprintf("%s needed the stronger model %s %s", name, Key(chosen), reason))
		if len(es.Notes) > maxEscalationNotes {
			es.Notes = es.Notes[len(es.Notes)-maxEscalationNotes:]
		}
		es.Level[key] = level
		es.Escalated = key
	} else if level == 0 && es.Escalated != "" && es.Escalated != key {
		from := es.Escalated
		s.Emit(record.Event{Event: record.Escalated, Kind: "back", Phase: phase, Task: task, To: Key(chosen), Backend: chosen.Backend, Model: chosen.Model,
			Message: fmt.Sprintf("%s runs on the base agent %s (the escalation of %s ended)", name, Key(chosen), from)})
		es.Escalated = ""
	}
	// The review's reviewer keeps off the agent in use.
	es.InUse[phase] = Key(chosen)
	return chosen
}

// Untry takes back one run of task from the count Escalate keeps (a build
// run's Escalate counted it): the attempts of a best-of after its first
// are one try with it, and start from the step the first one reached.
func (s *Switch) Untry(task string, first spec.Agent) {
	es := *s.Escalation
	if len(first.Escalate) == 0 || es == nil {
		return
	}
	key := fmt.Sprintf("c%d/%s", *s.Cycle, task)
	if es.Tries[key] > 0 {
		es.Tries[key]--
	}
}

// reviewerOffEscalated keeps the review's reviewer on another model than
// the fixer's and writer's after an escalation: a reviewer that would run
// on the agent a fixer was escalated to runs on the fixer's base agent
// instead (an escalated record of kind reviewer says so).
func (s *Switch) reviewerOffEscalated(a spec.Agent) spec.Agent {
	es := *s.Escalation
	if es == nil {
		return a
	}
	for _, p := range []string{"fixer", "writer"} {
		if k, ok := es.InUse[p]; ok && k == Key(a) && es.Level[fmt.Sprintf("c%d/%s", *s.Cycle, p)] > 0 {
			base := s.Spec().AgentFor(p, false)
			if Key(base) == Key(a) {
				return a
			}
			b := a
			b.Backend, b.Model, b.Command = base.Backend, base.Model, base.Command
			if base.Backend != a.Backend {
				b.Args = nil
			}
			s.Emit(record.Event{Event: record.Escalated, Kind: "reviewer", Phase: "reviewer", From: Key(a), To: Key(b), Backend: b.Backend, Model: b.Model,
				Message: fmt.Sprintf("the reviewer runs on %s: the %s was escalated to %s, and a review is never by the model under review", Key(b), p, k)})
			s.failover().InUse["reviewer"] = Key(b)
			return b
		}
	}
	return a
}

// Lines are the escalations es noted, for status and the report.
func Lines(es *Escalation) []string {
	if es == nil {
		return nil
	}
	return append([]string(nil), es.Notes...)
}
