package fleet

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/looprinter/looprinter/loop"
)

// LoopWorkflow runs one loop: one step activity at a time until a step
// returns the loop's outcome. It holds between steps while paused, ends
// after the current step when stopped, retries a failed step (its worker
// died, its push was refused) with what the failed attempt spent counted,
// prefers the worker of the previous step, and continues as new every
// StepsPerRun steps so its history stays bounded.
//
// Everything here must stay deterministic: a change to the order of
// commands breaks the replay test (fleet/replay_test.go) on purpose.
func LoopWorkflow(ctx workflow.Context, in LoopInput) (*Result, error) {
	c := in.Carry
	if c == nil {
		c = &Carry{Status: Status{Loop: in.Name}}
	}
	stopping := false
	status := func() Status {
		s := c.Status
		s.Steps, s.Failures, s.Paused, s.Stopping, s.Commit = c.Steps, c.Failures, c.Paused, stopping, c.Commit
		s.Notes = c.Notes
		return s
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return status(), nil }); err != nil {
		return nil, err
	}
	upsert := upserter(ctx, in) // search attributes for `looprinter list`, when registered (fleet/search.go)
	pauseCh := workflow.GetSignalChannel(ctx, SignalPause)
	resumeCh := workflow.GetSignalChannel(ctx, SignalResume)
	stopCh := workflow.GetSignalChannel(ctx, SignalStop)
	drain := func() {
		for pauseCh.ReceiveAsync(nil) {
			c.Paused = true
		}
		for resumeCh.ReceiveAsync(nil) {
			c.Paused = false
		}
		for stopCh.ReceiveAsync(nil) {
			stopping = true
		}
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			s := workflow.NewSelector(ctx)
			s.AddReceive(pauseCh, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil); c.Paused = true; upsert(status()) })
			s.AddReceive(resumeCh, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil); c.Paused = false; upsert(status()) })
			s.AddReceive(stopCh, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil); stopping = true })
			s.Select(ctx)
		}
	})

	hb, stepTimeout := orDefault(in.HeartbeatTimeout, DefaultHeartbeatTimeout), orDefault(in.StepTimeout, DefaultStepTimeout)
	maxFailures, perRun := orDefaultInt(in.MaxFailures, DefaultMaxFailures), orDefaultInt(in.StepsPerRun, DefaultStepsPerRun)
	queue := in.TaskQueue
	if queue == "" {
		queue = workflow.GetInfo(ctx).TaskQueueName
	}
	end := func(o Outcome) (*Result, error) {
		s := status()
		s.Outcome, s.ExitCode, s.Summary = o.Reason, o.ExitCode, o.Summary
		c.Status = s
		upsert(s)
		return &Result{Outcome: o, Status: s, Commit: c.Commit, Branch: in.Branch}, nil
	}
	ranHere := 0
	for {
		if err := workflow.Await(ctx, func() bool { return !c.Paused || stopping }); err != nil {
			return nil, err
		}
		drain() // signals sent together (resume, then stop) are all seen before a step starts
		if stopping {
			return end(Outcome{Reason: ReasonStopped, ExitCode: loop.ExitCodes[ReasonStopped],
				Summary: fmt.Sprintf("stopped through the fleet after %d steps; the branch %s holds the work and the records", c.Steps, in.Branch)})
		}
		if ranHere >= perRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			drain()
			next := in
			next.Carry = c
			return nil, workflow.NewContinueAsNewError(ctx, LoopWorkflow, next)
		}
		step := StepInput{WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, Seq: c.Steps + 1, Name: in.Name, LoopFile: in.LoopFile,
			Spec: in.Spec, Remote: in.Remote, Branch: in.Branch, Commit: c.Commit, Private: c.Private, Spent: c.Spent, Notes: c.Notes}
		opts := workflow.ActivityOptions{
			TaskQueue:           queue,
			StartToCloseTimeout: stepTimeout,
			HeartbeatTimeout:    hb,
			// A failed step is retried by this workflow, not by the server,
			// so that what the failed attempt spent is carried to the next.
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		}
		sticky := c.Sticky != "" && c.Sticky != queue
		if sticky {
			opts.TaskQueue, opts.ScheduleToStartTimeout = c.Sticky, StickyWait
		}
		var out StepOutput
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), StepName, step).Get(ctx, &out)
		if err != nil {
			c.Sticky = ""
			if sticky && isTimeout(err, enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START) {
				continue // that worker is gone or busy: any worker takes the step
			}
			spent, kind, msg := failureOf(err)
			c.Spent = c.Spent.merge(spent)
			if kind == ErrBlocked {
				return end(Outcome{Reason: loop.ReasonBlocked, ExitCode: loop.ExitCodes[loop.ReasonBlocked], Summary: msg})
			}
			c.Failures++
			c.Notes = append(c.Notes, fmt.Sprintf("attempt %d of step %d failed%s: %s; the step runs again from the last pushed commit, and what the failed attempt spent is counted",
				c.Failures, c.Steps+1, onWorker(spent), msg))
			if c.Failures >= maxFailures {
				return end(Outcome{Reason: loop.ReasonBlocked, ExitCode: loop.ExitCodes[loop.ReasonBlocked],
					Summary: fmt.Sprintf("step %d failed %d times in a row; the last failure: %s", c.Steps+1, c.Failures, msg)})
			}
			if kind != ErrPushRefused {
				if err := workflow.Sleep(ctx, backoff(c.Failures)); err != nil {
					return nil, err
				}
			}
			continue
		}
		c.Steps++
		ranHere++
		c.Failures, c.Spent, c.Notes = 0, nil, nil
		c.Private, c.Commit, c.Sticky = out.Private, out.Commit, out.Queue
		c.Status = out.Status
		c.Status.Worker = out.Worker
		upsert(status())
		if out.Outcome != nil {
			return end(*out.Outcome)
		}
	}
}

// failureOf is what a failed step attempt left: what it spent (from its
// error's details or its last heartbeat), the kind of failure and a message.
func failureOf(err error) (*Spent, string, string) {
	var spent *Spent
	var app *temporal.ApplicationError
	var to *temporal.TimeoutError
	kind, msg := "", err.Error()
	var act *temporal.ActivityError
	if errors.As(err, &act) && act.Unwrap() != nil {
		msg = act.Unwrap().Error()
	}
	switch {
	case errors.As(err, &app):
		kind, msg = app.Type(), app.Message()
		var s Spent
		if app.HasDetails() && app.Details(&s) == nil {
			spent = &s
		}
	case errors.As(err, &to):
		msg = "its worker stopped answering (" + timeoutName(to.TimeoutType()) + " timeout)"
		var s Spent
		if to.HasLastHeartbeatDetails() && to.LastHeartbeatDetails(&s) == nil {
			spent = &s
		}
	}
	return spent, kind, msg
}

func isTimeout(err error, t enumspb.TimeoutType) bool {
	var to *temporal.TimeoutError
	return errors.As(err, &to) && to.TimeoutType() == t
}

func timeoutName(t enumspb.TimeoutType) string {
	switch t {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return "heartbeat"
	case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return "step"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return "schedule-to-start"
	}
	return "unknown"
}

func onWorker(s *Spent) string {
	if s == nil || s.Worker == "" {
		return ""
	}
	return " on worker " + s.Worker
}

// backoff is the wait before the next attempt of a failed step: 1s, 2s, 4s…
// at most a minute.
func backoff(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func orDefaultInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
