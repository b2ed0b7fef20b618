package loop

import (
	"sync"

	"github.com/looprinter/looprinter/record"
)

// judging is one run of a wave, or one attempt of a best-of, as it is
// judged: what tags the records written for it (its agent_run, its slot
// from 1, its build run's iteration) and the task its failures count
// against. The attempts of a best-of are judged at once (wave.BestOf),
// each on a goroutine of its own: each carries its judging explicitly
// (tagger.emitAs, recordTamperTo), never through the engine's tag. The
// runs applied on the engine's goroutine, one at a time, set it as the
// engine's tag for the time of their apply (tagger.set).
type judging struct {
	run  string // the records' agent_run ("": not a run of a wave)
	slot int    // from 1
	task string // its failures are counted per task ("": the loop's)
	iter int    // its build run's iteration (0: the loop's last)
}

// mark tags ev with j where ev names no run or iteration of its own.
func (j judging) mark(ev *record.Event) {
	if ev.AgentRun == "" && j.run != "" {
		ev.AgentRun, ev.Slot = j.run, j.slot
	}
	if ev.Iteration == 0 && j.iter > 0 {
		ev.Iteration = j.iter
	}
}

// tagger is the tag of the records the engine writes: the run of a wave
// (or the attempt of a best-of) applied or judged on the engine's
// goroutine, whose run, slot and iteration every record written meanwhile
// carries, and whose task its failures count against (noteFailure,
// noprogress.go). Its lock orders the records written at once (the
// attempts judged at once, the checks' proxy) and guards the tag.
type tagger struct {
	mu   sync.Mutex
	cur  judging
	emit func(record.Event) // the engine's emit, which marks with cur
}

// emitAs writes ev tagged with j, whatever the engine's tag.
func (t *tagger) emitAs(j judging, ev record.Event) {
	j.mark(&ev)
	t.emit(ev)
}

// set tags every record the engine writes with j until the returned
// func runs, and counts its failures against j's task: for a run applied
// or judged on the engine's goroutine, never for ones judged at once.
func (t *tagger) set(j judging) func() {
	t.mu.Lock()
	t.cur = j
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.cur = judging{}
		t.mu.Unlock()
	}
}

// task is the task the failures noted now count against ("": the
// loop's).
func (t *tagger) task() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur.task
}
