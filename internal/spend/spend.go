// Package spend adds up what a loop has spent so far from its records
// (working-records/*.jsonl): by phase, task, backend and model, with tokens,
// and the cost per passed task (docs/cost.md): cost per task = cost per
// attempt ÷ success rate. An attempt is a build run (ralph: an attempt);
// a success is a task that passed (ralph: an attempt whose verify checks
// passed).
package spend

import (
	"sort"

	"github.com/looprinter/looprinter/record"
)

// Line is the spend of one phase, task, backend or model.
type Line struct {
	Key          string  `json:"key"`
	Runs         int     `json:"runs"`    // agent runs that ended (agent_end records)
	Retries      int     `json:"retries"` // tries that hit a rate limit or an API error and were retried
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	Turns        int     `json:"turns"`
	Estimated    bool    `json:"estimated,omitempty"` // some cost was estimated from tokens, not reported by the CLI
}

// Report is the spend of one loop directory.
type Report struct {
	Total     Line   `json:"total"`
	ByPhase   []Line `json:"by_phase"`
	ByTask    []Line `json:"by_task"`
	ByBackend []Line `json:"by_backend"`
	ByModel   []Line `json:"by_model"`

	Invocations int `json:"invocations"` // `run` invocations (record files with a loop_start)
	// Started agent runs without an end record (a crash): their spend is unknown.
	Unfinished int `json:"unfinished,omitempty"`

	// The cost per task (docs/cost.md).
	Attempts          int      `json:"attempts"`             // build runs (ralph: attempts), started
	AttemptCostUSD    float64  `json:"attempt_cost_usd"`     // what those runs cost
	Passed            int      `json:"passed"`               // tasks passed (ralph: verify passes)
	CostPerAttempt    *float64 `json:"cost_per_attempt"`     // AttemptCostUSD ÷ Attempts
	SuccessRate       *float64 `json:"success_rate"`         // Passed ÷ Attempts
	CostPerPassedTask *float64 `json:"cost_per_passed_task"` // CostPerAttempt ÷ SuccessRate; nil while nothing passed
	// AllInPerPassedTask counts every run (plan, re-plan, post phases) against
	// the passed tasks, not only the attempts.
	AllInPerPassedTask *float64 `json:"all_in_per_passed_task"`
}

// attemptPhases are the phases whose runs are attempts.
var attemptPhases = map[string]bool{"build": true, "ralph": true}

const none = "(none)"

// FromEvents adds up events, in the order they were written.
func FromEvents(evs []record.Event) *Report {
	r := &Report{}
	type key struct{ run, phase, task string }
	started := map[key]record.Event{} // open agent_start per run, phase and task
	lastStart := map[string]record.Event{}
	phase, task, backend, model := map[string]*Line{}, map[string]*Line{}, map[string]*Line{}, map[string]*Line{}
	add := func(m map[string]*Line, k string, e record.Event, retry bool) {
		if k == "" {
			k = none
		}
		l := m[k]
		if l == nil {
			l = &Line{Key: k}
			m[k] = l
		}
		addTo(l, e, retry)
	}
	for _, e := range evs {
		switch e.Event {
		case record.LoopStart:
			r.Invocations++
		case record.AgentStart:
			started[key{e.Run, e.Phase, e.Task}] = e
			lastStart[e.Run] = e
			if attemptPhases[e.Phase] {
				r.Attempts++
			}
		case record.AgentEnd, record.AgentRetry:
			retry := e.Event == record.AgentRetry
			if retry && (e.Backend == "" || e.Model == "") {
				// Retry records name the phase and task only; the run's
				// start names its backend and model.
				if s, ok := started[key{e.Run, e.Phase, e.Task}]; ok {
					e.Backend, e.Model = s.Backend, s.Model
				} else if s, ok := lastStart[e.Run]; ok {
					e.Backend, e.Model = s.Backend, s.Model
				}
			}
			if !retry {
				delete(started, key{e.Run, e.Phase, e.Task})
			}
			addTo(&r.Total, e, retry)
			add(phase, e.Phase, e, retry)
			add(task, e.Task, e, retry)
			add(backend, e.Backend, e, retry)
			add(model, e.Model, e, retry)
			if attemptPhases[e.Phase] {
				r.AttemptCostUSD += e.CostUSD
			}
		case record.TaskPassed:
			r.Passed++
		case record.Verify:
			if e.Gate == "verify" && e.Pass != nil && *e.Pass {
				r.Passed++ // ralph: the attempt passed
			}
		}
	}
	r.Unfinished = len(started)
	r.ByPhase, r.ByTask, r.ByBackend, r.ByModel = sorted(phase), sorted(task), sorted(backend), sorted(model)
	if r.Attempts > 0 {
		cpa := r.AttemptCostUSD / float64(r.Attempts)
		rate := float64(r.Passed) / float64(r.Attempts)
		r.CostPerAttempt, r.SuccessRate = &cpa, &rate
		if rate > 0 {
			cpt := cpa / rate
			r.CostPerPassedTask = &cpt
		}
	}
	if r.Passed > 0 {
		all := r.Total.CostUSD / float64(r.Passed)
		r.AllInPerPassedTask = &all
	}
	return r
}

// FromDir reads every record file of a records directory.
func FromDir(dir string) (*Report, error) {
	evs, err := record.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	return FromEvents(evs), nil
}

func addTo(l *Line, e record.Event, retry bool) {
	if retry {
		l.Retries++
	} else {
		l.Runs++
	}
	l.CostUSD += e.CostUSD
	l.InputTokens += e.InputTokens
	l.OutputTokens += e.OutputTokens
	l.CachedTokens += e.CachedTokens
	l.Turns += e.Turns
	l.Estimated = l.Estimated || e.CostEstimated
}

// sorted lists lines by cost, highest first, then by key.
func sorted(m map[string]*Line) []Line {
	out := make([]Line, 0, len(m))
	for _, l := range m {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CostUSD != out[j].CostUSD {
			return out[i].CostUSD > out[j].CostUSD
		}
		return out[i].Key < out[j].Key
	})
	return out
}
