package wave

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// specHost is a fake engine that judges a wave's runs at once before the
// applies (Speculator): Speculate waits, with meet set, until every run's
// judging has started; Trust and AsAssumed are logged in the order asked.
type specHost struct {
	fakeHost
	meet     *sync.WaitGroup
	notAsAs  map[int]bool // AsAssumed(k) is false: run k did not finish as assumed
	smu      sync.Mutex
	judged   []int
	judging  int
	atOnce   int // the most speculations at once
	finished bool
}

func (h *specHost) Speculate(_ context.Context, runs []*fakeRun, k int) {
	h.smu.Lock()
	if h.finished {
		h.smu.Unlock()
		panic("a run judged at once after a run was finished")
	}
	h.judging++
	h.atOnce = max(h.atOnce, h.judging)
	h.judged = append(h.judged, k)
	h.smu.Unlock()
	if h.meet != nil {
		h.meet.Done()
		h.meet.Wait()
	} else {
		time.Sleep(5 * time.Millisecond)
	}
	h.smu.Lock()
	h.judging--
	h.smu.Unlock()
}

func (h *specHost) Finish(ctx context.Context, r *fakeRun) error {
	h.smu.Lock()
	h.finished = true
	h.smu.Unlock()
	return h.fakeHost.Finish(ctx, r)
}

func (h *specHost) Trust(r *fakeRun, ok bool) { h.note("trust %d %v", r.k, ok) }
func (h *specHost) AsAssumed(r *fakeRun) bool { return !h.notAsAs[r.k] }

// A wave whose host is a Speculator judges every run at once (all of them
// meet inside Speculate) before the first apply, then finishes them in plan
// order, each trusted while every run before it finished as assumed.
func TestWaveJudgesItsRunsAtOnce(t *testing.T) {
	var meet sync.WaitGroup
	meet.Add(3)
	h := &specHost{meet: &meet}
	done := make(chan error, 1)
	go func() { done <- (Wave[*fakeRun]{Host: h, N: 3, Workers: 3}).Run(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the runs were not judged at once: Speculate never met the others")
	}
	if h.atOnce != 3 || len(h.judged) != 3 {
		t.Errorf("judged %v, %d at once; want all 3 at once", h.judged, h.atOnce)
	}
	want := []string{"start 0", "start 1", "start 2", "run 3",
		"trust 0 true", "finish 0", "save", "saved 0",
		"trust 1 true", "finish 1", "save", "saved 1",
		"trust 2 true", "finish 2", "save", "saved 2"}
	wantLog(t, &h.fakeHost, want...)
}

// From the first run that did not finish as assumed (rolled back, refused,
// a conflict: AsAssumed false) or whose Finish failed, no run after it is
// trusted: each is judged on the tree as its apply leaves it.
func TestWaveTrustsOnlyWhatWentAsAssumed(t *testing.T) {
	h := &specHost{notAsAs: map[int]bool{1: true}}
	if err := (Wave[*fakeRun]{Host: h, N: 4, Workers: 2}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantLog(t, &h.fakeHost, "start 0", "start 1", "start 2", "start 3", "run 4",
		"trust 0 true", "finish 0", "save", "saved 0",
		"trust 1 true", "finish 1", "save", "saved 1",
		"trust 2 false", "finish 2", "save", "saved 2",
		"trust 3 false", "finish 3", "save", "saved 3")
	if h.atOnce > 2 {
		t.Errorf("%d judged at once, over Workers 2", h.atOnce)
	}

	failed := errors.New("judge 0")
	h = &specHost{}
	h.finish = map[int]error{0: failed}
	if err := (Wave[*fakeRun]{Host: h, N: 2, Workers: 2}).Run(context.Background()); !errors.Is(err, failed) {
		t.Errorf("err = %v", err)
	}
	wantLog(t, &h.fakeHost, "start 0", "start 1", "run 2",
		"trust 0 true", "finish 0", "save", "saved 0",
		"trust 1 false", "finish 1", "save", "saved 1")
}

// With fewer than 2 workers, a wave of one, or a host that is no
// Speculator, nothing is judged before its apply: the serial order, record
// for record.
func TestWaveSerialWithoutWorkers(t *testing.T) {
	for _, c := range []struct{ n, workers int }{{3, 1}, {3, 0}, {1, 4}} {
		h := &specHost{}
		if err := (Wave[*fakeRun]{Host: h, N: c.n, Workers: c.workers}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(h.judged) != 0 {
			t.Errorf("n %d workers %d: judged at once %v", c.n, c.workers, h.judged)
		}
		var want []string
		for k := 0; k < c.n; k++ {
			want = append(want, fmt.Sprintf("start %d", k))
		}
		want = append(want, fmt.Sprintf("run %d", c.n))
		for k := 0; k < c.n; k++ {
			want = append(want, fmt.Sprintf("finish %d", k), "save", fmt.Sprintf("saved %d", k))
		}
		wantLog(t, &h.fakeHost, want...)
	}
}

// An interrupted wave judges nothing at once.
func TestWaveInterruptedJudgesNothingAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := &specHost{}
	(Wave[*fakeRun]{Host: h, N: 2, Workers: 2}).Run(ctx)
	if len(h.judged) != 0 {
		t.Errorf("judged at once %v after the interrupt", h.judged)
	}
}
