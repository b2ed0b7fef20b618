package loop

import (
	"context"
	"sync"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// Parallel build runs and best of N, the engine's side: the types the wave
// files share (waveRun, one run of a wave or one attempt of a best-of;
// waves, built from the runner, the tagger and the engine's verdict of a
// task; the hosts wave.Wave and wave.BestOf drive; an apply's notes; a
// run's checks judged on its prefix's tree), and the names of wave's the
// engine uses. Which ready tasks a wave starts, within the free slots, the
// budgets and the tasks' declared files, is wave.Pick's.

// waveBudget is what the budgets leave for the runs of a wave.
type waveBudget = wave.Budget

// runReserve is what a run reserves of the cost budget (wave.RunReserve).
func runReserve(maxBudgetUSD, buildCostUSD float64, builds int) float64 {
	return wave.RunReserve(maxBudgetUSD, buildCostUSD, builds)
}

// pickWave lists, in plan order, the ready tasks of p to start now
// (wave.Pick).
func pickWave(p *Plan, inFlight map[string]bool, slots int, b waveBudget) []Task {
	return wave.Pick(p.Ready(), inFlight, slots, b)
}

// parallelSaving is what running build runs at once saved (wave.Saving).
func parallelSaving(runs []time.Duration, wall time.Duration) (time.Duration, string) {
	return wave.Saving(runs, wall)
}

// ParallelSaving is the report's line on what running builds at once
// saved in a loop ("" when nothing was).
func ParallelSaving(st *State) string {
	if st == nil {
		return ""
	}
	_, line := parallelSaving([]time.Duration{time.Duration(st.AgentMS) * time.Millisecond}, time.Duration(st.WallMS)*time.Millisecond)
	return line
}

// WaveInFlight lists the build runs of a wave under way in st, in slot
// order (none when builds run one at a time).
func WaveInFlight(st *State) []*InFlight {
	if st == nil {
		return nil
	}
	var out []*InFlight
	for _, f := range append([]*InFlight{st.InFlight}, st.InFlightMore...) {
		if f != nil && f.Run != "" {
			out = append(out, f)
		}
	}
	return out
}

// judgingOf is rn's judging with its task and iteration.
func judgingOf(rn *waveRun) judging {
	return judging{run: rn.id, slot: rn.slot + 1, task: rn.task.ID, iter: rn.req.Iteration}
}

// runOf tags records with rn's run and slot only (their iteration is the
// loop's last, as for the records of a best-of's attempts).
func runOf(rn *waveRun) judging { return judging{run: rn.id, slot: rn.slot + 1} }

// waveRun is one build run of a wave.
type waveRun struct {
	slot   int
	task   Task
	id     string // the records' agent_run
	first  spec.Agent
	a, ran spec.Agent
	ad     agent.Adapter
	req    agent.Request
	cgroup *sandbox.Cgroup
	layer  sandbox.Layer
	trees  []sandbox.Layer
	files  []guard.File
	rules  *guard.ProtectRules
	told   []string
	prompt string
	seq    int
	fl     *InFlight
	base   string      // the transcripts' name
	live   [][2]string // its transcripts while the wave runs, and where they go once it ended

	// A best-of's attempt, once judged (bestof_run.go): the plan it left
	// (taken out of its layer), its agent_end written, its layer cleared.
	after                      *Plan
	afterTaken, ended, dropped bool

	// A wave's run judged at once with the others, before the applies
	// (wave_prefix.go): its verdict on its prefix's tree, and whether it
	// finished as the runs after it assumed.
	pre       *prefixJudged
	asAssumed bool

	// Set by the run's goroutine.
	res        agent.Result
	onlyLimits bool
	stop       error // the wall budget cannot cover a wait: the loop stops
}

// waves runs the build runs of a wave and the attempts of a best-of
// (wave.Wave, wave.BestOf), given what it needs of the engine: the runner
// that starts, judges and applies the runs, the records' tag, and the
// engine's verdict of a task (cycle.go).
type waves struct {
	run  *runner
	roll *rollback // its task gate takes a run's checks run at once (wave_prefix.go)
	tags *tagger
	// prompt is a task's build prompt.
	prompt func(*Plan, Task) (string, error)
	// judgeBuild judges a task after its run was applied.
	judgeBuild func(ctx context.Context, task Task, run *AgentRun, seen, after *Plan) error
	// noteFailure feeds no-progress detection.
	noteFailure func(signal, tried string) error
	// commits says whether the engine commits (a best-of's attempts are
	// then kept on refs).
	commits func() bool
	// writeJudged writes the judged plan to the folder.
	writeJudged func() error
}

// wave tags every record written until the returned func runs with rn's
// run id, slot, task and iteration (set).
func (t *tagger) wave(rn *waveRun) func() { return t.set(judgingOf(rn)) }

// prefixJudged is one run's checks run on its prefix's tree.
type prefixJudged struct {
	laid    *wave.Laid // what the folder must hold when the run is judged
	cmds    []string
	results []CheckResult
	trusted bool // every run before it finished as assumed
	used    bool // its results stood
}

// prefixWave is what the runs judged at once read, readied once.
type prefixWave struct {
	once   sync.Once
	on     bool
	cmds   []string
	plan   []byte // the folder's plan.json as the wave found it
	judged *Plan
}

// waveHost is the engine's side of a wave (wave.Host).
type waveHost struct {
	waveRuns
	plan  *Plan
	tasks []Task
	w     *waveApply // the wave's applies, from the first run finished
	pre   prefixWave // what the runs judged at once only read
}

// waveRuns is the engine's side of running the started runs of a wave or
// a best-of at once (wave.Runs, but for Start): one synced save with every
// run in flight, an agent_start each, the state saved every few seconds
// while they run; then nothing any run started outlives them.
type waveRuns struct {
	ws         *waves
	stopTicker func()
}

// waveApply is what the applies of one wave need: the merger of its runs'
// layers (wave.Merger) and the judged plan every run started from.
type waveApply struct {
	*wave.Merger
	seen *Plan
	// applied are the paths of the wave's applied runs' layers, changed
	// what their applies changed in the folder (wave_prefix.go).
	applied, changed []string
}
