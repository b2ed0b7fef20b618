package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/spec"
)

// Worker runs step activities in its work folder: one checkout per loop.
type Worker struct {
	// Dir is the work folder (one per worker process).
	Dir string
	// Identity names the worker in notes and status.
	Identity string
	// Queue is this worker's own task queue: the next step of a loop it ran
	// is offered there first, where its checkout is warm.
	Queue string
	// Hooks are the hooks of each step's engine (git commits, notifications).
	Hooks func(*spec.Loop) []loop.Hook
	// HeartbeatEvery is how often a step heartbeats (default 1s).
	HeartbeatEvery time.Duration
	// Slots bounds the steps this worker runs at once (default 1).
	Slots int
	// Client, when set, sends the steps' heartbeats (RunWorker sets it).
	Client client.Client
	// Exec, when set, is this program: each step then runs in a process of
	// its own (Exec started with LOOPRINTER_FLEET_STEP set, which calls
	// StepProcess), so that steps in parallel cannot end each other's
	// processes. Empty: steps run in this process.
	Exec string

	once    sync.Once
	slots   chan struct{}
	foldMu  sync.Mutex
	folders map[string]*sync.Mutex
}

// Step is the step activity: fetch the loop's branch, put the workflow's
// private files in place, run one engine step, commit and push. A failure
// carries what the attempt spent (ApplicationError details), and so does
// every heartbeat, so that the workflow counts it if this worker dies.
func (w *Worker) Step(ctx context.Context, in StepInput) (out *StepOutput, err error) {
	w.once.Do(func() {
		w.slots = make(chan struct{}, max(w.Slots, 1))
		w.folders = map[string]*sync.Mutex{}
	})
	var spent atomic.Pointer[Spent]
	spent.Store(in.Spent.merge(&Spent{Worker: w.Identity}))
	every := w.HeartbeatEvery
	if every <= 0 {
		every = time.Second
	}
	// The step's own context: ended when the worker stops or the server no
	// longer waits for this attempt.
	ctx, cancelStep := context.WithCancelCause(ctx)
	defer cancelStep(nil)
	hbCtx, stopHB := context.WithCancel(ctx)
	defer stopHB()
	beat := w.heartbeat(ctx, cancelStep, &spent)
	beat()
	var cur atomic.Pointer[spec.Loop]
	var loopDir atomic.Value
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-t.C:
			}
			if d, ok := loopDir.Load().(string); ok {
				if s := spentNow(cur.Load(), d, w.Identity); s != nil {
					spent.Store(spent.Load().merge(s))
				}
			}
			beat()
		}
	}()
	defer func() {
		if err == nil {
			return
		}
		var app *temporal.ApplicationError
		if errors.As(err, &app) {
			return
		}
		err = temporal.NewApplicationErrorWithOptions(err.Error(), "StepFailed", temporal.ApplicationErrorOptions{Details: []any{spent.Load()}})
	}()
	fail := func(kind string, e error) error {
		return temporal.NewApplicationErrorWithOptions(e.Error(), kind, temporal.ApplicationErrorOptions{Details: []any{spent.Load()}})
	}

	select {
	case w.slots <- struct{}{}:
		defer func() { <-w.slots }()
	case <-ctx.Done():
		return nil, fail(ErrInterrupted, ctx.Err())
	}
	rel, err := cleanRel(in.LoopFile)
	if err != nil {
		return nil, fail(ErrBlocked, err)
	}
	folder := filepath.Join(w.Dir, safeName(in.WorkflowID))
	mu := w.folder(folder)
	mu.Lock()
	defer mu.Unlock()
	repo := filepath.Join(folder, "repo")
	loopPath := filepath.Join(repo, filepath.FromSlash(rel))
	dir := filepath.Dir(loopPath)
	if st, err := readState(dir); err == nil {
		loop.KillOrphans(dir, st) // what an earlier attempt on this machine left
	}

	notes := append([]string(nil), in.Notes...)
	warm, head, replace, note, err := checkout(ctx, folder, repo, in)
	if err != nil {
		var b *blockedError
		if errors.As(err, &b) {
			return nil, fail(ErrBlocked, err)
		}
		return nil, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(loopPath, in.Spec, 0o644); err != nil {
		return nil, err
	}
	l, err := spec.Load(loopPath)
	if err != nil {
		return nil, fail(ErrBlocked, fmt.Errorf("the loop file: %w", err))
	}
	st, err := install(dir, in.Private, spent.Load())
	if err != nil {
		return nil, err
	}
	if in.Commit == "" {
		// The loop's first step: the head it starts from is what a review
		// reviews, whichever step begins the review.
		if err := os.WriteFile(loopdir.PrivateOf(dir).FleetStart(), []byte(startOf(repo, head, in.WorkflowID)+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	if l.Shape == spec.ShapeReview && l.Review.Base == "" {
		l.Review.Base = reviewBase(repo, dir, l)
	}
	if !warm && st.SetupDone && len(l.Setup) > 0 {
		// The setup ran on another machine: its effects (installed
		// dependencies) are not in a fresh checkout.
		if err := runSetup(ctx, l); err != nil {
			return nil, err
		}
	}
	cur.Store(l)
	loopDir.Store(dir)

	o, err := w.runStep(ctx, l, in.WorkflowID, notes)
	// Heartbeats go on until the step's commit is pushed.
	if s := spentNow(l, dir, w.Identity); s != nil {
		spent.Store(spent.Load().merge(s))
	}
	if err != nil {
		return nil, err
	}
	if o != nil && o.Reason == loop.ReasonInterrupted && ctx.Err() != nil {
		return nil, fail(ErrInterrupted, fmt.Errorf("the worker stopped during the step: %w", ctx.Err()))
	}
	final, err := readState(dir)
	if err != nil {
		return nil, err
	}
	priv, err := readPrivate(dir)
	if err != nil {
		return nil, err
	}
	phase := final.Phase
	if o != nil {
		phase = o.Reason
	}
	commit, err := commitStep(repo, rel, head, fmt.Sprintf("looprinter: %s step %d (%s)", in.Name, in.Seq, phase),
		fmt.Sprintf("Looprinter-Workflow: %s\nLooprinter-Step: %d\nLooprinter-Worker: %s", in.WorkflowID, in.Seq, w.Identity))
	if err != nil {
		return nil, err
	}
	if beforePush != nil {
		beforePush()
	}
	if ctx.Err() != nil {
		// The server no longer waits for this attempt (its heartbeat timed
		// out, or it was cancelled): another one runs the step.
		return nil, fail(ErrInterrupted, fmt.Errorf("the step's attempt was given up before its push: %w", ctx.Err()))
	}
	if err := pushKept(repo, in.Name); err != nil {
		return nil, fail("PushFailed", err)
	}
	if err := push(repo, in.Branch, head, replace, commit); err != nil {
		var r *refusedError
		if errors.As(err, &r) {
			kept := keepRefused(repo, in.Branch, in.Seq, commit)
			spent.Store(spent.Load().merge(countersOf(final, w.Identity)))
			return nil, fail(ErrPushRefused, fmt.Errorf("the push to %s was refused because the branch moved (%s); %s", in.Branch, r.msg, kept))
		}
		return nil, fail("PushFailed", err)
	}
	os.WriteFile(filepath.Join(folder, "pushed"), []byte(commit+"\n"), 0o600)
	out = &StepOutput{Commit: commit, Private: priv, Status: statusOf(final), Worker: w.Identity, Queue: w.Queue}
	if o != nil {
		out.Outcome = outcomeOf(o)
		out.Status.Outcome, out.Status.ExitCode, out.Status.Summary = o.Reason, o.ExitCode, o.Summary
	}
	return out, nil
}

// reviewBase is the base of a review loop whose loop file names none: as a
// local review of a clean tree diffs from HEAD~1 (the last commit is the
// change), a fleet review diffs from the parent of the commit the loop
// started from — or from that commit when a writer step drafts the change.
// The steps after the first add commits of their own, so HEAD~1 would no
// longer be the change. "" when the start has no parent (the engine then
// decides as it does locally).
func reviewBase(repo, dir string, l *spec.Loop) string {
	b, err := os.ReadFile(loopdir.PrivateOf(dir).FleetStart())
	start := strings.TrimSpace(string(b))
	if err != nil || start == "" {
		return ""
	}
	if strings.TrimSpace(l.Review.Writer) != "" {
		return start
	}
	parent, err := git(repo, "rev-parse", "--verify", "-q", start+"~1^{commit}")
	if err != nil {
		return ""
	}
	return parent
}

// startOf is the commit a loop starts from at head: head itself, or below
// the commits of attempts of its first step that pushed but never reported.
func startOf(repo, head, workflowID string) string {
	for range 100 {
		out, err := git(repo, "log", "-1", "--format=%(trailers:key=Looprinter-Workflow,valueonly,separator=,) %(trailers:key=Looprinter-Step,valueonly,separator=,)", head)
		if err != nil || strings.TrimSpace(out) != workflowID+" 1" {
			return head
		}
		parent, err := git(repo, "rev-parse", "--verify", "-q", head+"~1^{commit}")
		if err != nil {
			return head
		}
		head = parent
	}
	return head
}

// heartbeat returns the function that sends the step's spend to the
// server. With a client it sends the heartbeat itself, once at a time and
// never waiting: the SDK's own heartbeats, sent every second, would give
// each call one second and end the step when one call takes longer (a busy
// server, a slow network), though the server still waits for the step. A
// call is given most of the heartbeat timeout, and only the server's word
// (the attempt is cancelled, timed out or gone) ends the step. Without a
// client (the SDK's test environment) the SDK sends it.
func (w *Worker) heartbeat(ctx context.Context, cancelStep context.CancelCauseFunc, spent *atomic.Pointer[Spent]) func() {
	if w.Client == nil {
		return func() { activity.RecordHeartbeat(ctx, spent.Load()) }
	}
	info := activity.GetInfo(ctx)
	token, window := info.TaskToken, max(info.HeartbeatTimeout*4/5, 2*time.Second)
	var busy atomic.Bool
	return func() {
		if !busy.CompareAndSwap(false, true) {
			return // the previous call is under way: the next tick sends the newer spend
		}
		go func() {
			defer busy.Store(false)
			rctx, cancel := context.WithTimeout(context.Background(), window)
			defer cancel()
			err := w.Client.RecordActivityHeartbeat(rctx, token, spent.Load())
			var nf *serviceerror.NotFound
			if temporal.IsCanceledError(err) || errors.As(err, &nf) {
				cancelStep(fmt.Errorf("the server no longer waits for this attempt: %w", err))
			}
		}()
	}
}

// beforePush lets a test move the branch between a step's fetch and push.
var beforePush func()

func (w *Worker) folder(f string) *sync.Mutex {
	w.foldMu.Lock()
	defer w.foldMu.Unlock()
	m := w.folders[f]
	if m == nil {
		m = &sync.Mutex{}
		w.folders[f] = m
	}
	return m
}

// spentNow is what the step under way has spent so far, from the engine's
// own state and the transcript of the run in flight.
func spentNow(l *spec.Loop, dir, worker string) *Spent {
	st, err := readState(dir)
	if err != nil {
		return nil
	}
	s := countersOf(st, worker)
	if l != nil && st.InFlight != nil {
		s.CostUSD += loop.InFlightCost(l, st)
		s.InFlight = st.InFlight
	}
	return s
}

func countersOf(st *loop.State, worker string) *Spent {
	return &Spent{Iterations: st.Iterations, AgentRuns: st.AgentRuns, PlanRuns: st.PlanRuns, CostUSD: st.CostUSD, WallMS: st.WallMS, Worker: worker}
}

// readState is the engine's own copy of the state (its journal: a run in
// flight is saved there before its agent starts).
func readState(dir string) (*loop.State, error) { return loop.ReadState(dir) }

// notCarried are private files that stay on the worker: the snapshot of the
// protected files is made again before every agent run, and the checkout a
// step starts from is the pushed commit, so a dead run's changes are gone.
var notCarried = map[string]bool{"protected.json": true, "lock": true}

// readPrivate is the engine's private files of a loop folder, to be carried
// by the workflow to the next step's worker.
func readPrivate(dir string) (map[string][]byte, error) {
	priv := string(loopdir.PrivateOf(dir))
	ents, err := os.ReadDir(priv)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	total := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || notCarried[e.Name()] || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(priv, e.Name()))
		if err != nil {
			return nil, err
		}
		total += len(data)
		out[e.Name()] = data
	}
	if total > 1<<20 {
		return nil, fmt.Errorf("the engine's private files weigh %d bytes, more than the 1 MiB a workflow carries", total)
	}
	return out, nil
}

// keptOnWorker are the entries of the engine's private folder that stay on
// the worker from step to step of a loop instead of being replaced by the
// workflow's files: the agents' HOME and caches (the copy-on-write layers
// over them under bubblewrap, the private HOME and caches elsewhere), which
// hold an agent CLI's login refresh and sessions and which persist from run
// to run of a loop, as they do locally. They are too big to travel with the
// workflow: a step on another worker starts them afresh there.
var keptOnWorker = map[string]bool{"layers": true, "home": true, "cache": true}

// clearPrivate empties the engine's private folder priv but for what stays
// on the worker (keptOnWorker). The loop folder's own layer goes too: what
// a run of an earlier attempt wrote there is not on the branch the step
// starts from.
func clearPrivate(p loopdir.Private) error {
	priv := string(p)
	ents, err := os.ReadDir(priv)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		if keptOnWorker[e.Name()] && e.IsDir() {
			continue
		}
		if err := os.RemoveAll(filepath.Join(priv, e.Name())); err != nil {
			return err
		}
	}
	return os.RemoveAll(filepath.Dir(p.LayerUpper("loop")))
}

// install replaces the engine's private folder of dir with the workflow's
// files and the public state.json with the trusted one, keeping the agents'
// HOME and caches this worker holds for the loop (keptOnWorker). What failed
// attempts of the step spent is folded into the state's counters (the
// higher of each), and their run in flight is left for the engine to judge
// as a run that died with its engine.
func install(dir string, files map[string][]byte, spent *Spent) (*loop.State, error) {
	priv := string(loopdir.PrivateOf(dir))
	if err := clearPrivate(loopdir.PrivateOf(dir)); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(priv, 0o700); err != nil {
		return nil, err
	}
	for name, data := range files {
		if name != filepath.Base(name) || name == "." || name == ".." || notCarried[name] {
			return nil, fmt.Errorf("the workflow carries a private file with a bad name %q", name)
		}
		if err := os.WriteFile(filepath.Join(priv, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	var st *loop.State
	if data, ok := files["state.json"]; ok {
		st = &loop.State{}
		if err := json.Unmarshal(data, st); err != nil {
			return nil, fmt.Errorf("the workflow's state: %w", err)
		}
	} else {
		// The first step: the engine starts a fresh state, unless a state
		// committed on the branch would be taken for its own.
		os.Remove(loopdir.Dir(dir).State())
		if spent == nil || spent.AgentRuns == 0 && spent.CostUSD == 0 && spent.WallMS == 0 {
			return &loop.State{}, nil
		}
		st = &loop.State{V: loop.StateVersion, Cycle: 1, CycleGate: "pending", ObjectiveGate: "pending"}
	}
	if s := spent; s != nil {
		st.Iterations, st.AgentRuns, st.PlanRuns = max(st.Iterations, s.Iterations), max(st.AgentRuns, s.AgentRuns), max(st.PlanRuns, s.PlanRuns)
		st.CostUSD, st.WallMS = max(st.CostUSD, s.CostUSD), max(st.WallMS, s.WallMS)
		if s.InFlight != nil {
			st.InFlight = s.InFlight
		}
	}
	st.AgentPGID = 0 // a process group of another machine
	if err := st.Save(dir); err != nil {
		return nil, err
	}
	return st, nil
}

// runSetup runs the loop's setup commands in a checkout that has not seen
// them (the setup step ran on another worker).
func runSetup(ctx context.Context, l *spec.Loop) error {
	for _, c := range l.Setup {
		cctx, cancel := context.WithTimeout(ctx, l.CheckTimeout.D())
		cmd := exec.CommandContext(cctx, "/bin/sh", "-c", c)
		cmd.Dir = l.Dir
		cmd.Env = append(os.Environ(), "LOOPRINTER_DIR="+l.Dir)
		cmd.SysProcAttr = proc.GroupAttr()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("setup `%s` failed on this worker: %v: %s", c, err, tail(string(out), 400))
		}
	}
	return nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// cleanRel checks a loop file's path in the repository.
func cleanRel(p string) (string, error) {
	c := path.Clean(strings.ReplaceAll(p, "\\", "/"))
	if p == "" || path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", fmt.Errorf("the loop file's path %q must be relative and inside the repository", p)
	}
	return c, nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName is a workflow id as a folder name.
func safeName(id string) string {
	s := unsafeChars.ReplaceAllString(id, "_")
	if s == "" || s == "." || s == ".." {
		s = "_" + s
	}
	return s
}
