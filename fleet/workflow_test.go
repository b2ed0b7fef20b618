package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/fakeagent"
	"github.com/looprinter/looprinter/internal/testenv"
	"github.com/looprinter/looprinter/loop"
)

func TestMain(m *testing.M) {
	// The loops' agent is `looprinter fake-agent`: this test binary, when
	// looprinter is not on PATH.
	if len(os.Args) > 1 && os.Args[1] == "fake-agent" {
		os.Exit(fakeagent.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	// A worker with Exec set runs each step in this test binary.
	if IsStepProcess() {
		os.Exit(StepProcess(os.Stdin, os.Stdout, cli.RunHooks))
	}
	os.Exit(testenv.Main(m))
}

// script is a fake step activity: each call takes the next reply.
type script struct {
	calls   []StepInput
	queues  []string
	replies []func(in StepInput) (*StepOutput, error)
}

func (s *script) step(ctx context.Context, in StepInput) (*StepOutput, error) {
	s.calls = append(s.calls, in)
	s.queues = append(s.queues, activity.GetInfo(ctx).TaskQueue)
	if len(s.replies) == 0 {
		return ok("build", 0)(in)
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r(in)
}

func ok(phase string, cost float64) func(StepInput) (*StepOutput, error) {
	return func(in StepInput) (*StepOutput, error) {
		return &StepOutput{Commit: fmt.Sprintf("c%d", in.Seq), Private: map[string][]byte{"state.json": []byte(fmt.Sprintf(`{"seq":%d}`, in.Seq))},
			Status: Status{Phase: phase, CostUSD: cost}, Worker: "w1", Queue: "q@w1"}, nil
	}
}

func done(in StepInput) (*StepOutput, error) {
	o, _ := ok(loop.PhaseDone, 1)(in)
	o.Outcome = &Outcome{Reason: loop.ReasonDone, Summary: "both gates passed"}
	return o, nil
}

func env(t *testing.T, s *script) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	e := suite.NewTestWorkflowEnvironment()
	e.RegisterWorkflowWithOptions(LoopWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	e.RegisterActivityWithOptions(s.step, activity.RegisterOptions{Name: StepName})
	return e
}

func input() LoopInput {
	return LoopInput{Name: "demo", LoopFile: "loop.yaml", Spec: []byte("name: demo\n"), Remote: "/r.git", Branch: "main", TaskQueue: "q"}
}

func result(t *testing.T, e *testsuite.TestWorkflowEnvironment) *Result {
	t.Helper()
	if !e.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var r Result
	if err := e.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestStepsCarryStateAndPreferTheLastWorker(t *testing.T) {
	s := &script{replies: []func(StepInput) (*StepOutput, error){ok("baseline", 0), ok("plan", 0.5), done}}
	e := env(t, s)
	e.ExecuteWorkflow(WorkflowName, input())
	r := result(t, e)
	if r.Outcome.Reason != loop.ReasonDone || r.Status.Steps != 3 || r.Commit != "c3" {
		t.Fatalf("result %+v", r)
	}
	if len(s.calls) != 3 {
		t.Fatalf("%d steps, want 3", len(s.calls))
	}
	if s.calls[0].Commit != "" || s.calls[1].Commit != "c1" || string(s.calls[2].Private["state.json"]) != `{"seq":2}` {
		t.Fatalf("the steps did not carry the commit and private files: %+v", s.calls)
	}
	if s.queues[0] != "q" || s.queues[1] != "q@w1" || s.queues[2] != "q@w1" {
		t.Fatalf("task queues %v: the first step on the shared queue, the next on the last worker's", s.queues)
	}
}

func TestStickyWorkerGoneFallsBackWithoutAFailure(t *testing.T) {
	s := &script{}
	s.replies = []func(StepInput) (*StepOutput, error){ok("plan", 0),
		func(StepInput) (*StepOutput, error) {
			return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}, done}
	e := env(t, s)
	e.ExecuteWorkflow(WorkflowName, input())
	r := result(t, e)
	if r.Outcome.Reason != loop.ReasonDone || r.Status.Steps != 2 {
		t.Fatalf("result %+v", r)
	}
	if s.queues[2] != "q" || s.calls[2].Spent != nil || len(s.calls[2].Notes) != 0 {
		t.Fatalf("after the sticky queue timed out the step goes to the shared queue as a first attempt: %v %+v", s.queues, s.calls[2])
	}
}

// A worker that dies mid-step: the step runs again elsewhere, from the last
// pushed commit and state, with what the dead attempt spent counted.
func TestDeadWorkerIsCountedNeverCredited(t *testing.T) {
	inflight := &loop.InFlight{Phase: "build", Task: "t1", Seq: 3, Transcript: "/w1/t.jsonl"}
	s := &script{}
	s.replies = []func(StepInput) (*StepOutput, error){ok("build", 0.5),
		func(StepInput) (*StepOutput, error) {
			return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil,
				&Spent{Iterations: 2, AgentRuns: 3, CostUSD: 0.75, WallMS: 900, InFlight: inflight, Worker: "w1"})
		},
		func(StepInput) (*StepOutput, error) {
			return nil, temporal.NewApplicationErrorWithOptions("refused", ErrPushRefused, temporal.ApplicationErrorOptions{
				Details: []any{&Spent{Iterations: 3, AgentRuns: 4, CostUSD: 1.0, WallMS: 1500, Worker: "w2"}}})
		}, done}
	e := env(t, s)
	e.ExecuteWorkflow(WorkflowName, input())
	r := result(t, e)
	if r.Outcome.Reason != loop.ReasonDone {
		t.Fatalf("result %+v", r)
	}
	second, third, last := s.calls[1], s.calls[2], s.calls[3]
	if second.Seq != 2 || third.Seq != 2 || last.Seq != 2 {
		t.Fatalf("the failed step must run again as step 2: %d %d %d", second.Seq, third.Seq, last.Seq)
	}
	if third.Commit != "c1" || string(third.Private["state.json"]) != `{"seq":1}` {
		t.Fatalf("the retry must start from the last pushed commit and state, got %q %s", third.Commit, third.Private["state.json"])
	}
	if third.Spent == nil || third.Spent.Iterations != 2 || third.Spent.CostUSD != 0.75 || third.Spent.InFlight == nil || third.Spent.InFlight.Task != "t1" {
		t.Fatalf("the dead attempt's spend and run in flight must reach the retry: %+v", third.Spent)
	}
	if last.Spent == nil || last.Spent.Iterations != 3 || last.Spent.AgentRuns != 4 || last.Spent.CostUSD != 1.0 || last.Spent.WallMS != 1500 {
		t.Fatalf("spend must add up over failed attempts, never reset: %+v", last.Spent)
	}
	if len(last.Notes) != 2 || !strings.Contains(last.Notes[0], "worker w1") || !strings.Contains(last.Notes[0], "heartbeat timeout") {
		t.Fatalf("notes %q", last.Notes)
	}
	if s.queues[2] != "q" || s.queues[3] != "q" {
		t.Fatalf("a failed worker is not preferred: %v", s.queues)
	}
}

func TestBlockedAndTooManyFailures(t *testing.T) {
	s := &script{replies: []func(StepInput) (*StepOutput, error){func(StepInput) (*StepOutput, error) {
		return nil, temporal.NewApplicationErrorWithOptions("history rewritten", ErrBlocked, temporal.ApplicationErrorOptions{})
	}}}
	e := env(t, s)
	e.ExecuteWorkflow(WorkflowName, input())
	if r := result(t, e); r.Outcome.Reason != loop.ReasonBlocked || r.Outcome.ExitCode != 4 || r.Outcome.Summary != "history rewritten" {
		t.Fatalf("result %+v", r)
	}

	fails := &script{}
	for range 3 {
		fails.replies = append(fails.replies, func(StepInput) (*StepOutput, error) { return nil, errors.New("disk full") })
	}
	e = env(t, fails)
	in := input()
	in.MaxFailures = 3
	e.ExecuteWorkflow(WorkflowName, in)
	if r := result(t, e); r.Outcome.Reason != loop.ReasonBlocked || !strings.Contains(r.Outcome.Summary, "failed 3 times") {
		t.Fatalf("result %+v", r)
	}
	if len(fails.calls) != 3 {
		t.Fatalf("%d attempts, want 3", len(fails.calls))
	}
}

// Signals: pause holds the loop between steps (status shows it), resume
// goes on, stop ends it after the current step.
func TestPauseResumeStop(t *testing.T) {
	for _, stop := range []bool{false, true} {
		s := &script{replies: []func(StepInput) (*StepOutput, error){ok("plan", 0), done}}
		e := env(t, s)
		var during Status
		e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalPause, nil) }, 0)
		e.RegisterDelayedCallback(func() {
			v, err := e.QueryWorkflow(QueryStatus)
			if err != nil {
				t.Error(err)
				return
			}
			v.Get(&during)
			during.Steps = len(s.calls)
			if stop {
				e.SignalWorkflow(SignalStop, nil)
			} else {
				e.SignalWorkflow(SignalResume, nil)
			}
		}, time.Hour)
		e.ExecuteWorkflow(WorkflowName, input())
		r := result(t, e)
		if !during.Paused || during.Steps != 1 {
			t.Fatalf("status while paused: %+v", during)
		}
		switch {
		case stop && (r.Outcome.Reason != ReasonStopped || r.Outcome.ExitCode != 130 || len(s.calls) != 1):
			t.Fatalf("stopped while paused: %d steps, result %+v", len(s.calls), r)
		case !stop && (r.Outcome.Reason != loop.ReasonDone || len(s.calls) != 2):
			t.Fatalf("resumed: %d steps, result %+v", len(s.calls), r)
		}
	}
}

func TestContinueAsNewCarriesTheLoop(t *testing.T) {
	s := &script{replies: []func(StepInput) (*StepOutput, error){ok("plan", 0), ok("build", 0)}}
	e := env(t, s)
	in := input()
	in.StepsPerRun = 2
	e.ExecuteWorkflow(WorkflowName, in)
	err := e.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("want continue-as-new, got %v", err)
	}
	var next LoopInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	if next.Carry == nil || next.Carry.Steps != 2 || next.Carry.Commit != "c2" || next.Name != "demo" {
		t.Fatalf("carried %+v", next.Carry)
	}
	// The continued run goes on from there.
	s2 := &script{replies: []func(StepInput) (*StepOutput, error){done}}
	e2 := env(t, s2)
	e2.ExecuteWorkflow(WorkflowName, next)
	if r := result(t, e2); r.Outcome.Reason != loop.ReasonDone || r.Status.Steps != 3 || s2.calls[0].Seq != 3 || s2.calls[0].Commit != "c2" {
		t.Fatalf("continued: %+v %+v", r, s2.calls)
	}
}

// With the search attributes registered (the input says so), the workflow
// upserts the loop's progress after each step, on pause, and its outcome
// at the end; without them it never upserts (an unregistered attribute
// would fail the workflow task, and so the loop).
func TestSearchAttributesUpsertedOnlyWhenRegistered(t *testing.T) {
	for _, registered := range []bool{true, false} {
		s := &script{replies: []func(StepInput) (*StepOutput, error){ok("plan", 0.5), ok("build", 0.25), done}}
		e := env(t, s)
		var upserts []temporal.SearchAttributes
		e.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
			upserts = append(upserts, args.Get(0).(temporal.SearchAttributes))
		})
		in := input()
		in.SearchAttributes = registered
		e.ExecuteWorkflow(WorkflowName, in)
		result(t, e)
		if !registered {
			if len(upserts) != 0 {
				t.Fatalf("%d upserts without registered search attributes", len(upserts))
			}
			continue
		}
		if len(upserts) != 4 {
			t.Fatalf("%d upserts, want one per step and one at the end", len(upserts))
		}
		first, last := upserts[0], upserts[len(upserts)-1]
		if p, _ := first.GetKeyword(saPhase); p != "plan" {
			t.Fatalf("first upsert: phase %q", p)
		}
		if n, _ := first.GetInt64(saSteps); n != 1 {
			t.Fatalf("first upsert: steps %d", n)
		}
		if o, _ := last.GetKeyword(saOutcome); o != loop.ReasonDone {
			t.Fatalf("last upsert: outcome %q", o)
		}
		if o, _ := upserts[1].GetKeyword(saOutcome); o != "" {
			t.Fatalf("a running loop's upsert has an outcome: %q", o)
		}
	}
}
