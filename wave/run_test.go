package wave

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// fakeRun is a fake engine's handle on one started run.
type fakeRun struct{ k int }

// fakeHost is an engine of its own for Wave and BestOf: it logs what it
// is asked, in order, and answers from its fields.
type fakeHost struct {
	log      []string
	startErr map[int]error // Start(k) fails
	runErr   error         // RunAll fails
	stopped  map[int]error // the attempt met a stop while it ran
	finish   map[int]error // Finish(k) fails (a wave)
	saveErr  error
	results  map[int]Attempt // Judge's result of attempt k
	blocked  map[int]string  // Judge's reason to stop of attempt k
	keep     map[int]bool    // Keep(k): passes on the applied tree
	keepErr  map[int]error
	choice   Choice
	cancel   func() // called by Judge of attempt 0: the loop is interrupted
	events   []record.Event

	mu            sync.Mutex
	barrier       *sync.WaitGroup // every Try waits for the others
	trying, tried int
	endEarly      bool // End ran before every Try returned
}

func (h *fakeHost) note(f string, a ...any) { h.log = append(h.log, fmt.Sprintf(f, a...)) }

func (h *fakeHost) Start(k int) (*fakeRun, error) {
	if err := h.startErr[k]; err != nil {
		h.note("start %d refused", k)
		return nil, err
	}
	h.note("start %d", k)
	return &fakeRun{k}, nil
}

func (h *fakeHost) Begin(runs []*fakeRun) error {
	h.note("run %d", len(runs))
	return h.runErr
}

// Try runs on a goroutine of its own: it counts under mu, and, with
// barrier set, waits until every run of the wave is in its Try.
func (h *fakeHost) Try(_ context.Context, r *fakeRun) {
	h.mu.Lock()
	h.trying++
	h.mu.Unlock()
	if h.barrier != nil {
		h.barrier.Done()
		h.barrier.Wait()
	}
	h.mu.Lock()
	h.trying--
	h.tried++
	h.mu.Unlock()
}

func (h *fakeHost) End(runs []*fakeRun) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.trying != 0 || h.tried != len(runs) {
		h.endEarly = true
	}
}

func (h *fakeHost) Save() error {
	h.note("save")
	return h.saveErr
}

func (h *fakeHost) Saved(r *fakeRun) { h.note("saved %d", r.k) }

func (h *fakeHost) Finish(_ context.Context, r *fakeRun) error {
	h.note("finish %d", r.k)
	return h.finish[r.k]
}

func (h *fakeHost) Unstart(r *fakeRun)         { h.note("unstart %d", r.k) }
func (h *fakeHost) Stopped(r *fakeRun) error   { return h.stopped[r.k] }
func (h *fakeHost) Abandon(r *fakeRun)         { h.note("abandon %d", r.k) }
func (h *fakeHost) Drop(r *fakeRun)            { h.note("drop %d", r.k) }
func (h *fakeHost) Iteration(r *fakeRun) int   { return 10 + r.k }
func (h *fakeHost) Emit(ev record.Event)       { h.events = append(h.events, ev) }
func (h *fakeHost) Interrupted(s string) error { return errors.New("interrupted: " + s) }
func (h *fakeHost) Blocked(s string) error     { return errors.New("blocked: " + s) }

func (h *fakeHost) EmitFor(r *fakeRun, ev record.Event) {
	ev.AgentRun = fmt.Sprintf("r%d", r.k)
	h.events = append(h.events, ev)
}

func (h *fakeHost) Judge(_ context.Context, r *fakeRun) (Attempt, string) {
	h.note("judge %d", r.k)
	if r.k == 0 && h.cancel != nil {
		h.cancel()
	}
	a := h.results[r.k]
	a.Index = r.k
	return a, h.blocked[r.k]
}

func (h *fakeHost) Measure(_ context.Context, runs []*fakeRun, results []Attempt) {
	h.note("measure %d", len(runs))
}

func (h *fakeHost) Choose(_ context.Context, runs []*fakeRun, results []Attempt) (Choice, error) {
	h.note("choose")
	return h.choice, nil
}

func (h *fakeHost) Keep(_ context.Context, r *fakeRun, a *Attempt) (bool, error) {
	h.note("keep %d", r.k)
	if err := h.keepErr[r.k]; err != nil {
		return false, err
	}
	if !h.keep[r.k] {
		a.Pass = false
		a.Signal = "VIOLATION: passed on its own layer but its checks fail on the applied tree"
		return false, nil
	}
	return true, nil
}

func (h *fakeHost) Failed(signal, summary string) error {
	h.note("failed %s", summary)
	if !strings.Contains(signal, "none passed") {
		return errors.New("the failure is not every attempt's: " + signal)
	}
	return nil
}

func (h *fakeHost) JudgeKept(_ context.Context, r *fakeRun) error {
	h.note("judge kept %d", r.k)
	return nil
}

func wantLog(t *testing.T, h *fakeHost, want ...string) {
	t.Helper()
	if !slices.Equal(h.log, want) {
		t.Errorf("the engine was asked:\n  %s\nwant:\n  %s", strings.Join(h.log, "\n  "), strings.Join(want, "\n  "))
	}
}

// A wave starts its runs in slot order, runs them at once, then finishes
// them one by one in plan order, each verdict saved before the next.
func TestWaveOrdersTheApplies(t *testing.T) {
	h := &fakeHost{}
	if err := (Wave[*fakeRun]{Host: h, N: 3}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantLog(t, h, "start 0", "start 1", "start 2", "run 3",
		"finish 0", "save", "saved 0", "finish 1", "save", "saved 1", "finish 2", "save", "saved 2")
}

// A run the budgets refuse stops the starts: the runs started run and are
// finished, then the refusal is the wave's error; a failed finish does
// not stop the others', and the first error is the one returned.
func TestWaveStartRefusedFinishesTheStarted(t *testing.T) {
	refused := errors.New("iteration budget spent")
	h := &fakeHost{startErr: map[int]error{2: refused}, finish: map[int]error{0: errors.New("judge 0")}}
	err := (Wave[*fakeRun]{Host: h, N: 4}).Run(context.Background())
	if !errors.Is(err, refused) {
		t.Errorf("err = %v, want the refusal", err)
	}
	wantLog(t, h, "start 0", "start 1", "start 2 refused", "run 2", "finish 0", "save", "saved 0", "finish 1", "save", "saved 1")

	// No run started: nothing runs.
	h = &fakeHost{startErr: map[int]error{0: refused}}
	if err := (Wave[*fakeRun]{Host: h, N: 2}).Run(context.Background()); !errors.Is(err, refused) {
		t.Errorf("err = %v", err)
	}
	wantLog(t, h, "start 0 refused")
}

// A save that fails keeps the note of the apply (its verdict is not
// saved) and is the wave's error.
func TestWaveSaveFails(t *testing.T) {
	h := &fakeHost{saveErr: errors.New("disk full")}
	if err := (Wave[*fakeRun]{Host: h, N: 2}).Run(context.Background()); err == nil || err.Error() != "disk full" {
		t.Errorf("err = %v", err)
	}
	if slices.ContainsFunc(h.log, func(s string) bool { return strings.HasPrefix(s, "saved") }) {
		t.Errorf("a verdict counted as saved: %v", h.log)
	}
}

// The rule keeps the smallest passing change; the failing attempts are
// dropped before any apply, the other passing ones once the kept one
// passed on the applied tree; the kept attempt's record names where the
// others are, and best_of_chosen says the rule chose.
func TestBestOfKeepsTheBestAndItsRefs(t *testing.T) {
	h := &fakeHost{
		results: map[int]Attempt{
			0: {Pass: true, Change: Change{Lines: 9, Files: 2}, Ref: "refs/a0"},
			1: {Signal: "FAIL x", Ref: "refs/a1"},
			2: {Pass: true, Change: Change{Lines: 3, Files: 1}, Ref: "refs/a2"},
		},
		keep: map[int]bool{0: true, 2: true},
	}
	if err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 3}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantLog(t, h, "start 0", "start 1", "start 2", "run 3", "judge 0", "judge 1", "judge 2", "measure 3", "choose",
		"drop 1", "keep 2", "drop 0", "judge kept 2", "save", "saved 2")
	if len(h.events) != 4 {
		t.Fatalf("events: %+v", h.events)
	}
	kept := h.events[2]
	if kept.AgentRun != "r2" || !strings.Contains(kept.Message, "passed, kept") || !strings.Contains(kept.Message, "the other attempts on refs/a0, refs/a1") {
		t.Errorf("kept attempt's record: %+v", kept)
	}
	if strings.Count(kept.Message, "refs/a2") != 1 || strings.Contains(h.events[0].Message, "the other attempts") {
		t.Errorf("refs named wrongly: %q / %q", kept.Message, h.events[0].Message)
	}
	if ch := h.events[3]; ch.Event != record.BestOfChosen || ch.Attempt != 3 || ch.AgentRun != "" {
		t.Errorf("best_of_chosen: %+v", ch)
	}
}

// The reviewer's pick is tried first; when it fails on the applied tree
// it is taken back and the next passing attempt in the rule's order is
// kept, and the records say the reviewer's pick failed there.
func TestBestOfKeptFailsFallsBackToTheNext(t *testing.T) {
	h := &fakeHost{
		results: map[int]Attempt{
			0: {Pass: true, Change: Change{Lines: 1, Files: 1}},
			1: {Pass: true, Change: Change{Lines: 5, Files: 1}},
			2: {Pass: true, Change: Change{Lines: 2, Files: 1}},
		},
		keep:   map[int]bool{0: false, 1: false, 2: true},
		choice: Choice{Chosen: 2, Reason: "general"},
	}
	if err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 3}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantLog(t, h, "start 0", "start 1", "start 2", "run 3", "judge 0", "judge 1", "judge 2", "measure 3", "choose",
		"keep 1", "keep 0", "keep 2", "drop 0", "drop 1", "judge kept 2", "save", "saved 2")
	ch := h.events[len(h.events)-1]
	if ch.Attempt != 3 || !strings.Contains(ch.Reason, "the reviewer's pick, attempt 2, failed its checks on the applied tree") {
		t.Errorf("best_of_chosen: %+v", ch)
	}
}

// No attempt passing is one failed try whose failure is every attempt's;
// every attempt ending without working stops the loop, with why.
func TestBestOfNonePasses(t *testing.T) {
	h := &fakeHost{results: map[int]Attempt{0: {Signal: "FAIL a"}, 1: {Signal: "FAIL b"}}}
	if err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 2}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantLog(t, h, "start 0", "start 1", "run 2", "judge 0", "judge 1", "measure 2", "choose",
		"drop 0", "drop 1", "failed runs 10–11 on T-1: 2 attempts at once, none passed", "save")
	for _, ev := range h.events {
		if ev.Event == record.BestOfChosen {
			t.Errorf("a best_of_chosen with none kept: %+v", ev)
		}
	}

	h = &fakeHost{blocked: map[int]string{0: "exit 2", 1: "exit 3"}}
	err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 2}).Run(context.Background())
	if err == nil || err.Error() != "blocked: every attempt of T-1 ended without working: exit 2" {
		t.Errorf("err = %v", err)
	}
}

// A best-of starts whole: an attempt the budgets refuse drops the ones
// started, unrun.
func TestBestOfStartsWhole(t *testing.T) {
	h := &fakeHost{startErr: map[int]error{2: errors.New("budget")}}
	if err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 3}).Run(context.Background()); err == nil {
		t.Fatal("no error")
	}
	wantLog(t, h, "start 0", "start 1", "start 2 refused", "unstart 0", "unstart 1")
}

// A stop met while the attempts ran, or an interrupt, judges nothing:
// every attempt is abandoned; an interrupt while they are judged drops
// them all.
func TestBestOfStopsJudgeNothing(t *testing.T) {
	wall := errors.New("wall budget")
	h := &fakeHost{stopped: map[int]error{1: wall}}
	if err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 2}).Run(context.Background()); !errors.Is(err, wall) {
		t.Errorf("err = %v", err)
	}
	wantLog(t, h, "start 0", "start 1", "run 2", "abandon 0", "abandon 1")

	ctx, cancel := context.WithCancel(context.Background())
	h = &fakeHost{cancel: cancel, results: map[int]Attempt{0: {Pass: true}}}
	err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 2}).Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted while the attempts of T-1 were judged") {
		t.Errorf("err = %v", err)
	}
	wantLog(t, h, "start 0", "start 1", "run 2", "judge 0", "drop 0", "drop 1")
}

// An error applying the kept attempt drops it and is the best-of's error;
// its verdict's note goes only with a save that worked.
func TestBestOfKeepErrorDropsIt(t *testing.T) {
	h := &fakeHost{
		results: map[int]Attempt{0: {Pass: true}, 1: {Pass: true, Change: Change{Lines: 1}}},
		keepErr: map[int]error{0: errors.New("cannot back up")},
	}
	if err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 2}).Run(context.Background()); err == nil || err.Error() != "cannot back up" {
		t.Errorf("err = %v", err)
	}
	wantLog(t, h, "start 0", "start 1", "run 2", "judge 0", "judge 1", "measure 2", "choose",
		"keep 0", "drop 1", "drop 0", "save", "saved 0")
}

// The runs of a wave run at once, each in a Try of its own, and End
// follows only once every one returned; a Begin that fails runs none.
func TestWaveRunsAtOnce(t *testing.T) {
	h := &fakeHost{barrier: &sync.WaitGroup{}}
	h.barrier.Add(3)
	done := make(chan error, 1)
	go func() { done <- (Wave[*fakeRun]{Host: h, N: 3}).Run(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the runs of a wave did not run at once")
	}
	if h.tried != 3 || h.endEarly {
		t.Errorf("tried %d, End before every Try returned: %v", h.tried, h.endEarly)
	}

	h = &fakeHost{runErr: errors.New("cannot save state")}
	if err := (BestOf[*fakeRun]{Host: h, Task: "T-1", N: 2}).Run(context.Background()); err == nil || h.tried != 0 {
		t.Errorf("err %v, tried %d", err, h.tried)
	}
}
