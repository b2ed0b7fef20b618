package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// memoSchedule is the schedule's memo field that says when it fires, as
// the user wrote it.
const memoSchedule = "looprinter-schedule"

// ScheduleID is the id of a loop's Temporal Schedule.
func ScheduleID(name string) string { return "looprinter-" + name }

// When says when a schedule fires: every Every, or on Cron.
type When struct {
	Every time.Duration
	Cron  string
}

func (w When) String() string {
	if w.Cron != "" {
		return "cron " + w.Cron
	}
	return "every " + w.Every.String()
}

// CreateSchedule makes a Temporal Schedule that starts the loop's workflow
// at each firing. A firing while the loop's last run still runs is skipped
// (overlap policy skip: a loop never runs twice at once) and counted by
// the schedule; a firing after it ended starts a new run from the branch.
func CreateSchedule(ctx context.Context, c client.Client, queue string, in LoopInput, w When) error {
	spec := client.ScheduleSpec{}
	if w.Cron != "" {
		spec.CronExpressions = []string{w.Cron}
	} else {
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: w.Every}}
	}
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   ScheduleID(in.Name),
		Spec: spec,
		Action: &client.ScheduleWorkflowAction{ID: WorkflowID(in.Name), Workflow: WorkflowName, Args: []any{in}, TaskQueue: queue,
			Memo: map[string]any{memoLoop: in.Name}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Memo:    map[string]any{memoLoop: in.Name, memoSchedule: w.String()},
		Note:    "looprinter loop " + in.Name,
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("the fleet loop %s has a schedule already: `looprinter schedule --fleet --remove %s` first", in.Name, in.Name)
	}
	return err
}

// ScheduleInfo is one fleet schedule.
type ScheduleInfo struct {
	Loop     string      `json:"loop"`
	ID       string      `json:"id"`
	When     string      `json:"when"`
	Paused   bool        `json:"paused,omitempty"`
	Next     []time.Time `json:"next,omitempty"`
	Actions  int         `json:"actions"`         // runs started
	Skipped  int         `json:"skipped_overlap"` // firings skipped because the loop still ran
	Running  []string    `json:"running,omitempty"`
	LastRuns []string    `json:"last_runs,omitempty"`
}

// DescribeSchedule is a loop's schedule.
func DescribeSchedule(ctx context.Context, c client.Client, name string) (*ScheduleInfo, error) {
	d, err := c.ScheduleClient().GetHandle(ctx, ScheduleID(name)).Describe(ctx)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("%w: no schedule for %s", ErrNotFound, name)
		}
		return nil, err
	}
	s := &ScheduleInfo{Loop: name, ID: ScheduleID(name), Paused: d.Schedule.State != nil && d.Schedule.State.Paused, Next: d.Info.NextActionTimes,
		Actions: d.Info.NumActions, Skipped: d.Info.NumActionsSkippedOverlap}
	if p := d.Memo.GetFields()[memoSchedule]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &s.When)
	}
	for _, r := range d.Info.RunningWorkflows {
		s.Running = append(s.Running, r.WorkflowID)
	}
	for _, a := range d.Info.RecentActions {
		if a.StartWorkflowResult != nil {
			s.LastRuns = append(s.LastRuns, a.StartWorkflowResult.WorkflowID)
		}
	}
	return s, nil
}

// Schedules lists the loops' schedules on the namespace.
func Schedules(ctx context.Context, c client.Client) ([]ScheduleInfo, error) {
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return nil, err
	}
	var out []ScheduleInfo
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, err
		}
		if e.WorkflowType.Name != WorkflowName {
			continue
		}
		name := loopName(e.Memo, e.ID)
		if name == "" {
			continue
		}
		s, err := DescribeSchedule(ctx, c, name)
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Loop < out[j].Loop })
	return out, nil
}

// DeleteSchedule removes a loop's schedule; a run it started goes on.
func DeleteSchedule(ctx context.Context, c client.Client, name string) error {
	err := c.ScheduleClient().GetHandle(ctx, ScheduleID(name)).Delete(ctx)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: no schedule for %s", ErrNotFound, name)
	}
	return err
}
