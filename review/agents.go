package review

import (
	"fmt"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/textcut"
)

// AgentName names an agent for records and reports: backend/model, and a
// command backend's command.
func AgentName(a spec.Agent) string {
	s := a.Backend
	if a.Model != "" {
		s += "/" + a.Model
	}
	if a.Backend == "command" && a.Command != "" {
		s += " (" + textcut.Short(a.Command) + ")"
	}
	return s
}

// otherModel is the reviewer's default model when the loop file names no
// reviewer: another model family of the fixer's backend, where it declares
// them (agent.Backend.Families).
func otherModel(fixer spec.Agent) string {
	return agent.OtherModel(fixer.Backend, fixer.Model)
}

// OtherModelFor gives role another model of of's backend in l, where it
// has one, when the loop file names no agent for role. It says whether it
// did.
func OtherModelFor(l *spec.Loop, role string, of spec.Agent) bool {
	if _, ok := l.Agents[role]; ok {
		return false
	}
	m := otherModel(of)
	if m == "" {
		return false
	}
	agents := map[string]spec.Agent{}
	for k, v := range l.Agents {
		agents[k] = v
	}
	agents[role] = spec.Agent{Model: m}
	l.Agents = agents
	return true
}

// SameAgent says a and b are the same backend and model (and command).
func SameAgent(a, b spec.Agent) bool {
	return a.Backend == b.Backend && a.Model == b.Model && (a.Backend != "command" || a.Command == b.Command)
}

// reviewAgents gives the reviewer a different model from the fixer when the
// loop file names no reviewer, and warns (once) when they are the same.
func (s *Shape) reviewAgents(rs *State) {
	fixer := s.spec().AgentFor("fixer", false)
	var notes []string
	if OtherModelFor(s.spec(), "reviewer", fixer) {
		notes = append(notes, fmt.Sprintf("no agents.reviewer in the loop file: the reviewer runs %s, a different model from the fixer's %s (set agents.reviewer to choose; another vendor's backend is better still)",
			AgentName(s.spec().AgentFor("reviewer", false)), AgentName(fixer)))
	}
	reviewer := s.spec().AgentFor("reviewer", false)
	if SameAgent(reviewer, fixer) {
		notes = append(notes, fmt.Sprintf("the reviewer and the fixer are the same model (%s): self-preference and shared blind spots weaken the review; set agents.reviewer to another backend or model", AgentName(fixer)))
	}
	rs.Reviewer, rs.Fixer = AgentName(reviewer), AgentName(fixer)
	if s.spec().Review.Writer != "" {
		rs.Writer = AgentName(s.spec().AgentFor("writer", false))
	}
	if !rs.Warned {
		rs.Warned = true
		for _, n := range notes {
			s.h.Emit(record.Event{Event: record.Warning, Message: n})
		}
	}
}
