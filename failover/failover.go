// Package failover decides which agent a run starts with and goes on with,
// below the engine and testable without it: failover on usage limits (this
// file) and escalation to a stronger agent after repeated failures
// (escalate.go). What it decides is kept in the engine's state (State,
// Escalation); the engine's runner composes a Switch (loop/failover.go).
package failover

import (
	"fmt"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// Failover on usage limits. A phase's agent comes with agent.fallback: the
// agents that take over, in order. When the agent in use reports a usage
// limit that resets later than fallback_after, its reset time is kept in
// the state and the same run goes on with the first candidate that is
// installed and not limited (an agent_failover record; the try that hit the
// limit is not an attempt). Every run starts again with the first choice
// whose limit has passed. When every candidate is limited, the run waits
// for the earliest reset, as without fallbacks. In the review shape, the
// reviewer never takes the model its writer or fixer is on, nor they the
// reviewer's.

// State is what the engine knows about usage limits.
type State struct {
	// Limits is, per agent (backend/model), when its usage limit resets.
	Limits map[string]time.Time `json:"limits,omitempty"`
	// InUse is, per phase, the agent its last run used.
	InUse map[string]string `json:"in_use,omitempty"`
}

// Switch chooses the agent of each run: the first choice, a fallback, an
// escalation step. It is built from the loop file in force, the loop
// folder, the state's records of limits and escalations and its counters.
type Switch struct {
	Spec func() *spec.Loop // the loop file in force
	Dir  string            // the loop folder
	Emit func(record.Event)
	// Failover and Escalation are the state's, made on first use.
	Failover   **State
	Escalation **Escalation
	// Cycle and SameCount are the state's: the cycle, and how many times
	// in a row the last failure came back.
	Cycle     *int
	SameCount *int
}

// Key names an agent for limits and records: backend/model; for the
// command backend without a model, its program (two programs are two
// agents).
func Key(a spec.Agent) string { return wave.AgentKey(a) }

// Candidates are a phase's agent and its fallbacks, in order, as the
// engine tries them. A fallback keeps the first choice's limits and
// environment; a different backend gets its own model, command and no
// arguments.
func Candidates(a spec.Agent) []spec.Agent {
	out := []spec.Agent{a}
	for _, f := range a.Fallback {
		c := a
		if f.Backend != a.Backend {
			c.Args = nil
		}
		c.Backend, c.Model, c.Command = f.Backend, f.Model, f.Command
		out = append(out, c)
	}
	return out
}

func (s *Switch) failover() *State {
	if *s.Failover == nil {
		*s.Failover = &State{}
	}
	fs := *s.Failover
	if fs.Limits == nil {
		fs.Limits = map[string]time.Time{}
	}
	if fs.InUse == nil {
		fs.InUse = map[string]string{}
	}
	return fs
}

// avoidKeys are the agents a phase may not take: the reviewer stays off the
// writer's and fixer's, and they off the reviewer's.
func (s *Switch) avoidKeys(phase string) map[string]bool {
	if s.Spec().Shape != spec.ShapeReview {
		return nil
	}
	fs := s.failover()
	out := map[string]bool{}
	add := func(p string) {
		if k, ok := fs.InUse[p]; ok {
			out[k] = true
		} else {
			out[Key(s.Spec().AgentFor(p, false))] = true
		}
	}
	if phase == "reviewer" {
		add("writer")
		add("fixer")
	} else if phase == "writer" || phase == "fixer" {
		add("reviewer")
	}
	return out
}

// usable says whether a candidate can run now: not limited, not avoided,
// and its program installed.
func (s *Switch) usable(c spec.Agent, avoid map[string]bool, now time.Time) bool {
	k := Key(c)
	if avoid[k] || s.failover().Limits[k].After(now) {
		return false
	}
	ad, err := agent.Lookup(c.Backend)
	if err != nil {
		return false
	}
	req := agent.Request{Dir: s.Dir, Backend: c.Backend, Model: c.Model, Command: c.Command, Args: c.Args, Env: c.Env, Permissions: c.Permissions}
	_, err = ad.Invocation(req)
	return err == nil
}

// Choose is the agent a run of phase starts with: the first candidate
// that can run now (the first choice again once its limit has passed). With
// no fallback it is the phase's agent, unchanged.
func (s *Switch) Choose(phase, task string, a spec.Agent) spec.Agent {
	if len(a.Fallback) == 0 {
		return a
	}
	fs := s.failover()
	now := time.Now()
	chosen := a
	if avoid := s.avoidKeys(phase); !s.usable(a, avoid, now) {
		for _, c := range Candidates(a)[1:] {
			if s.usable(c, avoid, now) {
				chosen = c
				break
			}
		}
	}
	prev, had := fs.InUse[phase]
	if k := Key(chosen); had && prev != k {
		msg := fmt.Sprintf("the %s run goes to %s (was %s)", phase, k, prev)
		if k == Key(a) {
			msg = fmt.Sprintf("back to the first choice %s: its usage limit has reset", k)
		}
		s.Emit(record.Event{Event: record.AgentFailover, Phase: phase, Task: task, From: prev, To: k, Backend: chosen.Backend, Model: chosen.Model, Message: msg})
	}
	fs.InUse[phase] = Key(chosen)
	return chosen
}

// OnLimit is called when a try of a run hit a usage limit resetting in
// wait. It keeps the limit and returns the candidate to go on with (ok),
// or, when every candidate is limited, the one whose limit resets first and
// how long until then.
func (s *Switch) OnLimit(phase, task string, first, cur spec.Agent, wait time.Duration) (spec.Agent, time.Duration, bool) {
	if len(first.Fallback) == 0 || wait <= first.FallbackAfter.D() {
		return cur, wait, false
	}
	fs := s.failover()
	now := time.Now()
	fs.Limits[Key(cur)] = now.Add(wait)
	avoid := s.avoidKeys(phase)
	for _, c := range Candidates(first) {
		if Key(c) == Key(cur) || !s.usable(c, avoid, now) {
			continue
		}
		from := Key(cur)
		fs.InUse[phase] = Key(c)
		s.Emit(record.Event{Event: record.AgentFailover, Phase: phase, Task: task, From: from, To: Key(c), Backend: c.Backend, Model: c.Model,
			WaitMS: wait.Milliseconds(), Message: fmt.Sprintf("%s reported a usage limit resetting in %s (more than fallback_after %s): the run goes on with %s; no attempt counted",
				from, wait.Round(time.Second), first.FallbackAfter, Key(c))})
		return c, 0, true
	}
	// Every candidate is limited: wait for the earliest reset, then go on
	// with the agent it belongs to.
	next, earliest := cur, wait
	for _, c := range Candidates(first) {
		if avoid[Key(c)] {
			continue
		}
		if t, ok := fs.Limits[Key(c)]; ok && t.After(now) && t.Sub(now) < earliest {
			next, earliest = c, t.Sub(now)
		}
	}
	fs.InUse[phase] = Key(next)
	return next, earliest, false
}

// SetAgent points a request at another agent.
func SetAgent(req *agent.Request, a spec.Agent) {
	req.Backend, req.Model, req.Command, req.Args, req.Env, req.Permissions = a.Backend, a.Model, a.Command, a.Args, a.Env, a.Permissions
}

// Backoff is the wait before try n+1 of a run that hit a rate limit
// without a reset time, or an API error: 5s, tripled, at most 10m.
func Backoff(n int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < n && d < 10*time.Minute; i++ { // bounded whatever n is
		d *= 3
	}
	if d > 10*time.Minute {
		d = 10 * time.Minute
	}
	return d
}
