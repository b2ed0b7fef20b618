package loop

import (
	"testing"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
)

// The records' tag alone: a run's tag is set and cleared, counts its
// failures against its task, and an attempt judged at once writes with its
// own tag without touching the engine's.
func TestTaggerSetsAndClearsTheRunsTag(t *testing.T) {
	var got []record.Event
	tg := &tagger{}
	tg.emit = func(ev record.Event) {
		tg.mu.Lock()
		tg.cur.mark(&ev)
		tg.mu.Unlock()
		got = append(got, ev)
	}
	rn := &waveRun{id: "r7", slot: 2, task: Task{ID: "T3"}, req: agent.Request{Iteration: 5}}
	untag := tg.wave(rn)
	if tg.task() != "T3" {
		t.Fatalf("task = %q, want T3", tg.task())
	}
	tg.emit(record.Event{Event: record.Verify})
	tg.emitAs(judging{run: "r9", slot: 1}, record.Event{Event: record.Warning})
	untag()
	tg.emit(record.Event{Event: record.Verify})
	if tg.task() != "" {
		t.Fatalf("task after untag = %q", tg.task())
	}
	if e := got[0]; e.AgentRun != "r7" || e.Slot != 3 || e.Iteration != 5 {
		t.Fatalf("tagged record = %+v", e)
	}
	if e := got[1]; e.AgentRun != "r9" || e.Slot != 1 {
		t.Fatalf("record written as another run = %+v", e)
	}
	if e := got[2]; e.AgentRun != "" || e.Slot != 0 || e.Iteration != 0 {
		t.Fatalf("record after untag = %+v", e)
	}
}
