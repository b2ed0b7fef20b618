// Package spend adds up what a loop has spent so far from its records
// (working-records/*.jsonl): by phase, task, backend and model, with tokens,
// and the cost per passed task (docs/cost.md): cost per task = cost per
// attempt ÷ success rate. An attempt is a build run (ralph: an attempt);
// a success is a task that passed (ralph: an attempt whose verify checks
// passed).
package spend

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	t := NewTally()
	for _, e := range evs {
		t.Add(e)
	}
	return t.Report()
}

// Tally is a running total of a loop's spend: events are added one at a
// time, in the order each record file holds them, and it can be saved and
// taken up again (FromDirCached), so that a loop's long history is read
// once, not at every `cost`.
type Tally struct {
	Total          Line             `json:"total"`
	Phase          map[string]*Line `json:"phase"`
	Task           map[string]*Line `json:"task"`
	Backend        map[string]*Line `json:"backend"`
	Model          map[string]*Line `json:"model"`
	Invocations    int              `json:"invocations"`
	Attempts       int              `json:"attempts"`
	AttemptCostUSD float64          `json:"attempt_cost_usd"`
	Passed         int              `json:"passed"`
	// Started are the open agent_start records (run, phase and task) with
	// their backend and model; LastStart the last start of each run.
	Started   map[string]Who `json:"started"`
	LastStart map[string]Who `json:"last_start"`
	// Offsets is how far each record file was read.
	Offsets map[string]int64 `json:"offsets"`
}

// Who ran an agent.
type Who struct{ Backend, Model string }

// NewTally is an empty tally.
func NewTally() *Tally {
	return &Tally{Phase: map[string]*Line{}, Task: map[string]*Line{}, Backend: map[string]*Line{}, Model: map[string]*Line{},
		Started: map[string]Who{}, LastStart: map[string]Who{}, Offsets: map[string]int64{}}
}

// Add counts one event.
func (t *Tally) Add(e record.Event) {
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
	key := e.Run + "\x00" + e.Phase + "\x00" + e.Task
	switch e.Event {
	case record.LoopStart:
		t.Invocations++
	case record.AgentStart:
		t.Started[key] = Who{e.Backend, e.Model}
		t.LastStart[e.Run] = Who{e.Backend, e.Model}
		if attemptPhases[e.Phase] {
			t.Attempts++
		}
	case record.AgentEnd, record.AgentRetry:
		retry := e.Event == record.AgentRetry
		if retry && (e.Backend == "" || e.Model == "") {
			// Retry records name the phase and task only; the run's
			// start names its backend and model.
			if s, ok := t.Started[key]; ok {
				e.Backend, e.Model = s.Backend, s.Model
			} else if s, ok := t.LastStart[e.Run]; ok {
				e.Backend, e.Model = s.Backend, s.Model
			}
		}
		if !retry {
			delete(t.Started, key)
		}
		addTo(&t.Total, e, retry)
		add(t.Phase, e.Phase, e, retry)
		add(t.Task, e.Task, e, retry)
		add(t.Backend, e.Backend, e, retry)
		add(t.Model, e.Model, e, retry)
		if attemptPhases[e.Phase] {
			t.AttemptCostUSD += e.CostUSD
		}
	case record.TaskPassed:
		t.Passed++
	case record.Verify:
		if e.Gate == "verify" && e.Pass != nil && *e.Pass {
			t.Passed++ // ralph: the attempt passed
		}
	}
}

// Report is the tally as a report.
func (t *Tally) Report() *Report {
	r := &Report{Total: t.Total, Invocations: t.Invocations, Attempts: t.Attempts, AttemptCostUSD: t.AttemptCostUSD, Passed: t.Passed}
	r.Unfinished = len(t.Started)
	r.ByPhase, r.ByTask, r.ByBackend, r.ByModel = sorted(t.Phase), sorted(t.Task), sorted(t.Backend), sorted(t.Model)
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

// FromDir reads every record file of a records folder.
func FromDir(dir string) (*Report, error) { return FromFiles(record.Glob(dir)) }

// FromFiles reads every record file list names.
func FromFiles(list record.Lister) (*Report, error) {
	evs, err := record.ReadAll(list)
	if err != nil {
		return nil, err
	}
	return FromEvents(evs), nil
}

// FromDirCached is FromDir that reads only what was written since the
// tally saved at cache: the records a file gained since, and files it did
// not know. A file that shrank, or a cache that cannot be read, starts the
// tally over. The tally is saved back (best effort: a read-only cache
// still gives the right report).
func FromDirCached(dir, cache string) (*Report, error) {
	return FromFilesCached(record.Glob(dir), cache)
}

// FromFilesCached is FromDirCached over the files list names.
func FromFilesCached(list record.Lister, cache string) (*Report, error) {
	files, err := list()
	if err != nil {
		return nil, err
	}
	t := loadTally(cache, files)
	for _, path := range files {
		off, err := record.ScanFrom(path, t.Offsets[path], t.Add)
		if err != nil {
			return nil, err
		}
		t.Offsets[path] = off
	}
	if data, err := json.Marshal(t); err == nil {
		if tmp, err := os.CreateTemp(filepath.Dir(cache), ".spend*"); err == nil {
			_, werr := tmp.Write(data)
			if tmp.Close() == nil && werr == nil {
				os.Chmod(tmp.Name(), 0o600)
				os.Rename(tmp.Name(), cache)
			}
			os.Remove(tmp.Name())
		}
	}
	return t.Report(), nil
}

func loadTally(cache string, files []string) *Tally {
	data, err := os.ReadFile(cache)
	if err != nil {
		return NewTally()
	}
	t := NewTally()
	if json.Unmarshal(data, t) != nil || t.Phase == nil || t.Task == nil || t.Backend == nil || t.Model == nil ||
		t.Started == nil || t.LastStart == nil || t.Offsets == nil {
		return NewTally()
	}
	known := map[string]bool{}
	for _, f := range files {
		known[f] = true
	}
	for f, off := range t.Offsets {
		fi, err := os.Stat(f)
		if !known[f] || err != nil || fi.Size() < off {
			return NewTally() // a file gone or rewritten: count again from the start
		}
	}
	return t
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
