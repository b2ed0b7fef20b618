package wave

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// atOnceHost is fakeHost whose Judge waits, up to 20 s, until every
// attempt is being judged, and whose attempt 0 ends its judging last.
type atOnceHost struct {
	*fakeHost
	in, done sync.WaitGroup
	met      []bool
	jmu      sync.Mutex
}

func (h *atOnceHost) Judge(ctx context.Context, r *fakeRun) (Attempt, string) {
	h.in.Done()
	all := make(chan struct{})
	go func() { h.in.Wait(); close(all) }()
	select {
	case <-all:
		h.jmu.Lock()
		h.met[r.k] = true
		h.jmu.Unlock()
	case <-time.After(20 * time.Second):
	}
	if r.k == 0 { // the others' verdicts come first
		others := make(chan struct{})
		go func() { h.done.Wait(); close(others) }()
		select {
		case <-others:
		case <-time.After(20 * time.Second):
		}
	} else {
		defer h.done.Done()
	}
	a := h.results[r.k]
	a.Index = r.k
	return a, h.blocked[r.k]
}

// A best-of judges its attempts at once, up to Workers, and reads their
// verdicts in slot order: every attempt ended without working, attempt
// 0's verdict last, and the stop still names attempt 0's reason; what
// follows the judging keeps its order.
func TestBestOfJudgesAttemptsAtOnce(t *testing.T) {
	base := &fakeHost{
		results: map[int]Attempt{0: {Signal: "x0"}, 1: {Signal: "x1"}, 2: {Signal: "x2"}},
		blocked: map[int]string{0: "reason 0", 1: "reason 1", 2: "reason 2"},
	}
	h := &atOnceHost{fakeHost: base, met: make([]bool, 3)}
	h.in.Add(3)
	h.done.Add(2)
	err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 3, Workers: 3}).Run(context.Background())
	for k, ok := range h.met {
		if !ok {
			t.Fatalf("attempt %d was judged alone: the attempts were judged one after another", k)
		}
	}
	if err == nil || !strings.Contains(err.Error(), "reason 0") {
		t.Fatalf("the stop: %v; want attempt 0's reason (slot order)", err)
	}
	wantLog(t, base, "start 0", "start 1", "start 2", "run 3", "measure 3", "choose", "drop 0", "drop 1", "drop 2")
}
