package fleetdev

// Server-backed fleet tests: an embedded Temporal server in the test
// process, workers as `looprinter worker` processes (built once by
// TestMain), bare git repositories as remotes, the scripted agent. Run by
// scripts/test.sh (GOTOOLCHAIN=go1.26.10+auto): the server takes minutes to
// compile, so the main module's `go test ./...` does not include them.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/protobuf/encoding/protojson"

	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/looprinter/looprinter/fleet"
	"github.com/looprinter/looprinter/internal/fleettest"
	"github.com/looprinter/looprinter/internal/testenv"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
)

var binDir string

func TestMain(m *testing.M) {
	os.Setenv("TEMPORAL_VERSION_CHECK_DISABLED", "1")
	dir, err := os.MkdirTemp("", "looprinter-fleet-bin-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	build := exec.Command("go", "build", "-tags", "fleet", "-o", filepath.Join(dir, "looprinter"), "github.com/looprinter/looprinter/cmd/looprinter")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build looprinter:", err)
		os.Exit(1)
	}
	// Local runs and workers alike find the scripted agent on PATH.
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := testenv.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

type env struct {
	t       *testing.T
	ts      *temporaltest.TestServer
	c       client.Client
	addr    string // what workers dial (the frontend, or a proxy before it)
	workers map[string]*exec.Cmd
	dirs    map[string]string
	killed  map[string]bool // workers the test killed on purpose
	mu      sync.Mutex
}

func newEnv(t *testing.T) *env {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	return &env{t: t, ts: ts, c: ts.GetDefaultClient(), addr: ts.GetFrontendHostPort(), workers: map[string]*exec.Cmd{}, dirs: map[string]string{}, killed: map[string]bool{}}
}

// worker starts `looprinter worker` with its own work and state folders.
func (e *env) worker(id string, flags ...string) {
	e.t.Helper()
	root := e.t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "looprinter"), append([]string{"worker", "--temporal", e.addr, "--namespace", e.ts.GetDefaultNamespace(),
		"--identity", id, "--dir", filepath.Join(root, "work")}, flags...)...)
	cmd.Env = append(os.Environ(), "LOOPRINTER_STATE_DIR="+filepath.Join(root, "state"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	e.workers[id], e.dirs[id] = cmd, filepath.Join(root, "work")
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	e.t.Cleanup(func() {
		select {
		case <-done:
			e.mu.Lock()
			if !e.killed[id] {
				// Nothing but the test may end a worker: a worker gone
				// leaves its loops without anyone to run their steps.
				e.t.Errorf("worker %s ended before the test did: %v", id, cmd.ProcessState)
			}
			e.mu.Unlock()
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if e.t.Failed() {
			o := out.String()
			if len(o) > 6000 {
				o = o[len(o)-6000:]
			}
			e.t.Logf("worker %s:\n%s", id, o)
		}
	})
}

func (e *env) submit(name, remote string, p fleettest.Project) { e.submitRun(name, remote, p, 0) }

// submitRun submits with a number of steps before continue-as-new.
func (e *env) submitRun(name, remote string, p fleettest.Project, perRun int) {
	e.t.Helper()
	in := fleet.LoopInput{Name: name, LoopFile: "loop.yaml", Spec: []byte(p["loop.yaml"]), Remote: remote, Branch: "main",
		TaskQueue: "looprinter", HeartbeatTimeout: 10 * time.Second, StepsPerRun: perRun}
	if _, err := fleet.Submit(context.Background(), e.c, "looprinter", in); err != nil {
		e.t.Fatal(err)
	}
}

// pending is the loop's step activity under way, nil when none is.
func (e *env) pending(name string) *workflowpb.PendingActivityInfo {
	e.t.Helper()
	d, err := e.c.DescribeWorkflowExecution(context.Background(), fleet.WorkflowID(name), "")
	if err != nil {
		e.t.Fatal(err)
	}
	if pa := d.GetPendingActivities(); len(pa) > 0 {
		return pa[0]
	}
	return nil
}

// heartbeat waits until the loop's step under way has sent a heartbeat
// whose spend satisfies ok. The deadline only guards against a hang.
func (e *env) heartbeat(name string, ok func(*fleet.Spent) bool) {
	e.t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if pa := e.pending(name); pa != nil && pa.GetHeartbeatDetails() != nil {
			var s fleet.Spent
			if err := converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &s); err == nil && ok(&s) {
				return
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no heartbeat of %s told the spend awaited", name)
		}
	}
}

// noStep waits until no step of the loop is under way. The deadline only
// guards against a hang.
func (e *env) noStep(name string) {
	e.t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); e.pending(name) != nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("a step of %s is still under way", name)
		}
	}
}

func (e *env) wait(name string, d time.Duration) *fleet.Result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	r, err := fleet.Wait(ctx, e.c, name)
	if err != nil {
		s, serr := fleet.LoopStatus(context.Background(), e.c, name)
		d, _ := e.c.DescribeWorkflowExecution(context.Background(), fleet.WorkflowID(name), "")
		e.t.Fatalf("%s: %v\nstatus %+v %v\npending activities %v\npending workflow task %v\nlast events:\n%s",
			name, err, s, serr, d.GetPendingActivities(), d.GetPendingWorkflowTask(), e.lastEvents(name, 25))
	}
	return r
}

// lastEvents is the tail of a loop's workflow history, one event a line,
// for a test's failure message.
func (e *env) lastEvents(name string, n int) string {
	it := e.c.GetWorkflowHistory(context.Background(), fleet.WorkflowID(name), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var lines []string
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			lines = append(lines, err.Error())
			break
		}
		line := fmt.Sprintf("%d %s %s", ev.GetEventId(), ev.GetEventTime().AsTime().Format("15:04:05.000"), ev.GetEventType())
		if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
			line += fmt.Sprintf(" cause=%s identity=%s: %s", a.GetCause(), a.GetIdentity(), a.GetFailure().GetMessage())
		}
		if a := ev.GetWorkflowTaskTimedOutEventAttributes(); a != nil {
			line += " " + a.GetTimeoutType().String()
		}
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
			line += " identity=" + a.GetIdentity()
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			line += " queue=" + a.GetTaskQueue().GetName()
		}
		if a := ev.GetActivityTaskFailedEventAttributes(); a != nil {
			line += ": " + a.GetFailure().GetMessage()
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
			line += ": " + a.GetFailure().GetMessage()
		}
		lines = append(lines, line)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// history writes the loop's workflow history under fleet/testdata/histories
// when LOOPRINTER_RECORD_HISTORIES is set (for the replay test).
func (e *env) history(name, file string) {
	if os.Getenv("LOOPRINTER_RECORD_HISTORIES") == "" {
		return
	}
	it := e.c.GetWorkflowHistory(context.Background(), fleet.WorkflowID(name), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			e.t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	data, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&h)
	if err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join("..", "testdata", "histories", file)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// Three workers, six loops of each shape (cycle, ralph, review) and a cost
// budget: each ends as the same loop run locally ends, with the same
// counters and records.
func TestFleetMatchesLocal(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"w1", "w2", "w3"} {
		e.worker(id)
	}
	review, change := fleettest.Review("review-a")
	loops := []struct {
		name      string
		p, change fleettest.Project
	}{
		{"cycle-a", fleettest.Cycle("cycle-a"), nil}, {"cycle-b", fleettest.Cycle("cycle-b"), nil},
		{"ralph-a", fleettest.Ralph("ralph-a"), nil}, {"ralph-b", fleettest.Ralph("ralph-b"), nil},
		{"budget-a", fleettest.CycleBudget("budget-a"), nil}, {"review-a", review, change},
	}
	remotes := map[string]string{}
	srcs := map[string]string{}
	for _, l := range loops {
		srcs[l.name], remotes[l.name] = fleettest.RepoWithChange(t, l.p, l.change)
		e.submit(l.name, remotes[l.name], l.p)
	}
	workersSeen := map[string]bool{}
	for _, l := range loops {
		r := e.wait(l.name, 6*time.Minute)
		local, localEvents := runLocal(t, srcs[l.name])
		if r.Outcome.Reason != local.Reason || r.Outcome.ExitCode != local.ExitCode {
			t.Errorf("%s: fleet %s (%s), local %s (%s)", l.name, r.Outcome.Reason, r.Outcome.Summary, local.Reason, local.Summary)
			continue
		}
		s, ls := r.Status, local.State
		if s.Iterations != ls.Iterations || s.AgentRuns != ls.AgentRuns || s.TasksPassed != ls.TasksPassed || s.Cycle != ls.Cycle || s.CostUSD != ls.CostUSD {
			t.Errorf("%s: counters differ: fleet %+v, local %d/%d/%d/%d/$%.2f", l.name, s, ls.Iterations, ls.AgentRuns, ls.TasksPassed, ls.Cycle, ls.CostUSD)
		}
		dir := fleettest.Clone(t, remotes[l.name])
		if got := fleettest.Events(t, loopdir.Dir(dir).Records()); !reflect.DeepEqual(got, localEvents) {
			t.Errorf("%s: records differ:\nfleet %q\nlocal %q", l.name, got, localEvents)
		}
		for _, w := range strings.Split(fleettest.Git(t, dir, "log", "--format=%(trailers:key=Looprinter-Worker,valueonly)"), "\n") {
			if w = strings.TrimSpace(w); w != "" {
				workersSeen[w] = true
			}
		}
	}
	if len(workersSeen) < 2 {
		t.Errorf("the steps ran on %v: the loops should spread over the workers", workersSeen)
	}
	e.history("cycle-a", "cycle.json")
	e.history("ralph-a", "ralph.json")
	e.history("budget-a", "budget.json")
	e.history("review-a", "review.json")
}

// kill -9 of the worker running a build: the loop finishes on another
// worker, the dead run counted once and nothing credited twice, the budget
// not reset, no agent process left.
func TestKillWorkerMidBuild(t *testing.T) {
	e := newEnv(t)
	e.worker("w1")
	e.worker("w2")
	p := fleettest.SlowBuild("slow")
	src, remote := fleettest.Repo(t, p)
	e.submit("slow", remote, p)
	victim := ""
	deadline := time.Now().Add(2 * time.Minute)
	for victim == "" && time.Now().Before(deadline) {
		e.mu.Lock()
		for id, d := range e.dirs {
			// The agent writes started.txt in the loop folder, or (under
			// the default sandbox, while its run goes on) in the
			// copy-on-write layer over it, in the worker's state folder.
			layer := filepath.Join(filepath.Dir(d), "state", "engine", "*", "layers", "loop", "upper", "started.txt")
			m, _ := filepath.Glob(filepath.Join(d, "*", "repo", "started.txt"))
			l, _ := filepath.Glob(layer)
			if len(m)+len(l) > 0 {
				victim = id
			}
		}
		e.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
	if victim == "" {
		t.Fatal("no build started")
	}
	// The agent is asleep in its build run: killed once a heartbeat has
	// told the server the run in flight (however late on a loaded machine).
	e.heartbeat("slow", func(s *fleet.Spent) bool { return s.InFlight != nil })
	e.mu.Lock()
	e.killed[victim] = true
	e.mu.Unlock()
	e.workers[victim].Process.Signal(syscall.SIGKILL)
	r := e.wait("slow", 3*time.Minute)
	local, _ := runLocal(t, src)
	if r.Outcome.Reason != loop.ReasonDone {
		t.Fatalf("outcome %+v", r.Outcome)
	}
	if r.Status.Iterations != local.State.Iterations+1 || r.Status.AgentRuns != local.State.AgentRuns+1 || r.Status.TasksPassed != local.State.TasksPassed {
		t.Fatalf("the killed build must be counted once, credited never: fleet %d iterations %d runs %d passed; local %d %d %d",
			r.Status.Iterations, r.Status.AgentRuns, r.Status.TasksPassed, local.State.Iterations, local.State.AgentRuns, local.State.TasksPassed)
	}
	if r.Status.CostUSD < local.State.CostUSD {
		t.Fatalf("the budget was reset: fleet $%.2f, local $%.2f", r.Status.CostUSD, local.State.CostUSD)
	}
	dir := fleettest.Clone(t, remote)
	if !fleettest.RecordsMention(loopdir.Dir(dir).Records(), "the engine died during this run") {
		t.Fatal("the killed run is not in the records")
	}
	if !strings.Contains(fleettest.Git(t, dir, "log", "--format=%B"), "Looprinter-Worker: w") {
		t.Fatal("no step commit names its worker")
	}
	if left := agentsUnder(e.dirs[victim]); len(left) > 0 {
		t.Fatalf("agent processes of the killed worker are left: %v", left)
	}
}

// runLocal runs the loop in a copy of src with `looprinter run`, in a
// process of its own, and returns its outcome and the shape of its records.
// Not in this process: after each agent run the engine ends every process
// that descends from the process it runs in (what an agent left behind),
// and the workers of the test are children of this one.
func runLocal(t *testing.T, src string) (*loop.Outcome, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "local")
	if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cmd := exec.Command(filepath.Join(binDir, "looprinter"), "run", "-f", "loop.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput() // the test's LOOPRINTER_STATE_DIR: the engine's private state is read below
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("looprinter run: %v\n%s", err, out)
	}
	st, err := loop.ReadState(dir)
	if err != nil {
		t.Fatalf("the local run left no state: %v\n%s", err, out)
	}
	if st.Outcome == "" || loop.ExitCodes[st.Outcome] != code {
		t.Fatalf("the local run ended %q with exit code %d:\n%s", st.Outcome, code, out)
	}
	return &loop.Outcome{Reason: st.Outcome, ExitCode: code, Summary: st.Summary, State: st}, fleettest.Events(t, loopdir.Dir(dir).Records())
}

// A worker with two slots runs two loops' steps at once, neither ending the
// other's agent: after its agent run each step's engine ends what descends
// from its process, so each step runs in a process of its own. Loop b's
// build runs are still under way when loop a's end.
func TestTwoSlotsKeepEachOthersAgents(t *testing.T) {
	e := newEnv(t)
	e.worker("w1", "--slots", "2")
	a := fleettest.SlowBuild("slot-a")
	b := fleettest.SlowBuild("slot-b")
	b["agent.txt"] = strings.ReplaceAll(b["agent.txt"], "sleep 4s", "sleep 9s")
	srcA, remoteA := fleettest.Repo(t, a)
	srcB, remoteB := fleettest.Repo(t, b)
	e.submit("slot-a", remoteA, a)
	e.submit("slot-b", remoteB, b)
	for _, l := range []struct{ name, src string }{{"slot-a", srcA}, {"slot-b", srcB}} {
		r := e.wait(l.name, 5*time.Minute)
		local, _ := runLocal(t, l.src)
		if r.Outcome.Reason != local.Reason || r.Status.Iterations != local.State.Iterations || r.Status.AgentRuns != local.State.AgentRuns {
			t.Errorf("%s: fleet %s with %d iterations, %d agent runs; local %s with %d, %d: a step's agent was ended by the other step",
				l.name, r.Outcome.Reason, r.Status.Iterations, r.Status.AgentRuns, local.Reason, local.State.Iterations, local.State.AgentRuns)
		}
	}
}

// agentsUnder lists processes whose LOOPRINTER_DIR is under dir.
func agentsUnder(dir string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var out []int
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte("LOOPRINTER_DIR="+dir)) {
			var pid int
			fmt.Sscanf(filepath.Base(filepath.Dir(p)), "%d", &pid)
			out = append(out, pid)
		}
	}
	return out
}

// Pause holds a loop between steps (status and list show it), resume goes
// on to DONE; stop ends a paused loop.
func TestPauseResumeStopStatusList(t *testing.T) {
	e := newEnv(t)
	e.worker("w1")
	p := fleettest.SlowBuild("held")
	_, remote := fleettest.Repo(t, p)
	e.submit("held", remote, p)
	ctx := context.Background()
	if err := fleet.Signal(ctx, e.c, "held", fleet.SignalPause); err != nil {
		t.Fatal(err)
	}
	var s *fleet.Status
	for i := 0; i < 100; i++ {
		var err error
		if s, err = fleet.LoopStatus(ctx, e.c, "held"); err == nil && s.Paused {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s == nil || !s.Paused {
		t.Fatalf("status %+v", s)
	}
	// The step under way when the pause came finishes (however long it
	// takes on a loaded machine); no other starts.
	e.noStep("held")
	s1, _ := fleet.LoopStatus(ctx, e.c, "held")
	if s1.Steps > s.Steps+1 {
		t.Fatalf("steps ran while paused: %d at the pause, %d later", s.Steps, s1.Steps)
	}
	time.Sleep(2 * time.Second)
	if s2, _ := fleet.LoopStatus(ctx, e.c, "held"); s2.Steps != s1.Steps || !s2.Paused || e.pending("held") != nil {
		t.Fatalf("steps ran while paused: %d then %d", s1.Steps, s2.Steps)
	}
	ls, err := fleet.List(ctx, e.c)
	if err != nil || len(ls) != 1 || ls[0].Name != "held" || !ls[0].Running || ls[0].Status == nil || !ls[0].Status.Paused || ls[0].Status.CycleGate == "" {
		t.Fatalf("list %+v %v", ls, err)
	}
	fleet.Signal(ctx, e.c, "held", fleet.SignalResume)
	if r := e.wait("held", 3*time.Minute); r.Outcome.Reason != loop.ReasonDone {
		t.Fatalf("after resume: %+v", r.Outcome)
	}

	p = fleettest.SlowBuild("stopped")
	_, remote = fleettest.Repo(t, p)
	e.submit("stopped", remote, p)
	fleet.Signal(ctx, e.c, "stopped", fleet.SignalPause)
	fleet.Signal(ctx, e.c, "stopped", fleet.SignalStop)
	r := e.wait("stopped", time.Minute)
	if r.Outcome.Reason != fleet.ReasonStopped || r.Outcome.ExitCode != 130 {
		t.Fatalf("stop: %+v", r.Outcome)
	}
	e.history("held", "paused.json")
}

// The frontend unreachable for a while, mid-loop (workers reach it through
// a proxy that is shut): the loop completes.
func TestFrontendUnreachableForAWhile(t *testing.T) {
	e := newEnv(t)
	px := newProxy(t, e.addr)
	e.addr = px.addr
	e.worker("w1")
	e.worker("w2")
	p := fleettest.SlowBuild("cut")
	src, remote := fleettest.Repo(t, p)
	e.submit("cut", remote, p)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		s, err := fleet.LoopStatus(context.Background(), e.c, "cut")
		if err == nil && s.Phase == loop.PhaseBuild {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	px.cut(5 * time.Second)
	r := e.wait("cut", 3*time.Minute)
	local, _ := runLocal(t, src)
	if r.Outcome.Reason != local.Reason || r.Status.TasksPassed != local.State.TasksPassed {
		t.Fatalf("fleet %+v, local %s", r.Outcome, local.Reason)
	}
}

// proxy forwards TCP to the frontend and can be cut for a while.
type proxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, addr: ln.Addr().String(), target: target, ln: ln}
	go p.serve(ln)
	t.Cleanup(func() { p.close() })
	return p
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// cut closes every connection and refuses new ones for d.
func (p *proxy) cut(d time.Duration) {
	p.close()
	time.Sleep(d)
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.serve(ln)
}

// TestFleetBench measures the fleet (scripts/bench-fleet.sh sets
// LOOPRINTER_FLEET_BENCH=1): the time per step of one loop through Temporal
// against the same loop run locally, then many short loops over three
// workers (steps per second), and the peak memory of the workers and of this
// process (the server, and the test around it).
func TestFleetBench(t *testing.T) {
	if os.Getenv("LOOPRINTER_FLEET_BENCH") == "" {
		t.Skip("set LOOPRINTER_FLEET_BENCH=1 (scripts/bench-fleet.sh)")
	}
	n := 100
	if v := os.Getenv("LOOPRINTER_FLEET_BENCH_LOOPS"); v != "" {
		fmt.Sscan(v, &n)
	}
	e := newEnv(t)
	for _, id := range []string{"w1", "w2", "w3"} {
		e.worker(id)
	}
	// One loop at a time: the time per step, fleet against local.
	var localPer, fleetPer []time.Duration
	for i := range 5 {
		name := fmt.Sprintf("one-%d", i)
		p := fleettest.Cycle(name)
		src, remote := fleettest.Repo(t, p)
		start := time.Now()
		local, _ := runLocal(t, src)
		lt := time.Since(start)
		start = time.Now()
		e.submit(name, remote, p)
		r := e.wait(name, 3*time.Minute)
		ft := time.Since(start)
		if r.Outcome.Reason != local.Reason {
			t.Fatalf("%s: fleet %s, local %s", name, r.Outcome.Reason, local.Reason)
		}
		localPer = append(localPer, lt/time.Duration(r.Status.Steps))
		fleetPer = append(fleetPer, ft/time.Duration(r.Status.Steps))
	}
	lm, fm := median(localPer), median(fleetPer)
	fmt.Printf("per step (cycle loop, %d runs, median): local %s, fleet %s, ratio %.1f, fleet overhead %s\n", len(localPer), lm.Round(time.Millisecond), fm.Round(time.Millisecond), float64(fm)/float64(lm), (fm - lm).Round(time.Millisecond))

	// Many short loops at once over three workers.
	var names []string
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("many-%d", i)
		p := fleettest.Ralph(name)
		_, remote := fleettest.Repo(t, p)
		names = append(names, name)
		e.submit(name, remote, p)
	}
	steps := 0
	for _, name := range names {
		r := e.wait(name, 10*time.Minute)
		if r.Outcome.Reason != loop.ReasonDone {
			t.Fatalf("%s: %+v", name, r.Outcome)
		}
		steps += r.Status.Steps
	}
	el := time.Since(start)
	fmt.Printf("%d ralph loops over 3 workers (1 slot each): %d steps in %s, %.1f steps/s\n", n, steps, el.Round(time.Millisecond), float64(steps)/el.Seconds())
	for id, cmd := range e.workers {
		fmt.Printf("worker %s peak RSS %s\n", id, hwm(cmd.Process.Pid))
	}
	fmt.Printf("server (test process) peak RSS %s\n", hwm(os.Getpid()))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// hwm is a process's peak resident memory (VmHWM).
func hwm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return "?"
}

// A loop that continues as new every 3 steps ends as it would in one run.
func TestContinueAsNewOnServer(t *testing.T) {
	e := newEnv(t)
	e.worker("w1")
	p := fleettest.Cycle("continued")
	src, remote := fleettest.Repo(t, p)
	e.submitRun("continued", remote, p, 3)
	r := e.wait("continued", 4*time.Minute)
	local, _ := runLocal(t, src)
	if r.Outcome.Reason != local.Reason || r.Status.Iterations != local.State.Iterations {
		t.Fatalf("fleet %+v, local %s", r, local.Reason)
	}
	e.history("continued", "cycle-continued.json")
}
