package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/looprinter/looprinter/loop"
)

// memoLoop is the memo field that names a workflow's loop: a loop started
// by a schedule has a workflow id with the firing's time appended.
const memoLoop = "looprinter-loop"

// Submit starts a loop's workflow. A loop of that name already running
// (submitted, or started by its schedule) is an error.
func Submit(ctx context.Context, c client.Client, queue string, in LoopInput) (client.WorkflowRun, error) {
	if id := scheduledRunning(ctx, c, in.Name); id != "" {
		return nil, fmt.Errorf("a fleet loop named %s is already running, started by its schedule (workflow %s): `looprinter stop %s` first", in.Name, id, in.Name)
	}
	o := client.StartWorkflowOptions{ID: WorkflowID(in.Name), TaskQueue: queue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		Memo:                     map[string]any{memoLoop: in.Name}}
	run, err := c.ExecuteWorkflow(ctx, o, WorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil, fmt.Errorf("a fleet loop named %s is already running (workflow %s): `looprinter fleet stop %s` first", in.Name, o.ID, in.Name)
	}
	return run, err
}

// ErrNotFound is a loop name the fleet does not know.
var ErrNotFound = errors.New("no fleet loop of that name")

func notFound(name string) error { return fmt.Errorf("%w: %s", ErrNotFound, name) }

// resolve finds the workflow that runs a loop now, or ran it last: the one
// `submit` started (id looprinter-NAME) or the last one its schedule
// started, whichever started later; a running one first.
func resolve(ctx context.Context, c client.Client, name string) (string, bool, error) {
	id := WorkflowID(name)
	var started time.Time
	running, found := false, false
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	switch {
	case err == nil:
		found = true
		running = d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		started = d.GetWorkflowExecutionInfo().GetStartTime().AsTime()
	case !errors.As(err, &nf):
		return "", false, err
	}
	if running {
		return id, true, nil
	}
	if sd, err := c.ScheduleClient().GetHandle(ctx, ScheduleID(name)).Describe(ctx); err == nil {
		if r := sd.Info.RunningWorkflows; len(r) > 0 {
			return r[len(r)-1].WorkflowID, true, nil
		}
		if ra := sd.Info.RecentActions; len(ra) > 0 {
			last := ra[len(ra)-1]
			if last.StartWorkflowResult != nil && (!found || last.ActualTime.After(started)) {
				return last.StartWorkflowResult.WorkflowID, false, nil
			}
		}
	}
	if !found {
		// A run of a schedule removed since: visibility, by the memo.
		if id, running := byMemo(ctx, c, name); id != "" {
			return id, running, nil
		}
		return "", false, notFound(name)
	}
	return id, false, nil
}

// byMemo is the latest workflow visibility lists for a loop name (a
// running one first), or "".
func byMemo(ctx context.Context, c client.Client, name string) (string, bool) {
	for _, q := range []string{" AND ExecutionStatus = 'Running'", ""} {
		var token []byte
		for {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowType = '%s'%s", WorkflowName, q), NextPageToken: token})
			if err != nil {
				return "", false
			}
			for _, e := range resp.GetExecutions() {
				if loopName(e.GetMemo(), e.GetExecution().GetWorkflowId()) == name {
					return e.GetExecution().GetWorkflowId(), e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
				}
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
	}
	return "", false
}

// scheduledRunning is the id of a workflow of the loop's schedule that runs
// now, or "".
func scheduledRunning(ctx context.Context, c client.Client, name string) string {
	sd, err := c.ScheduleClient().GetHandle(ctx, ScheduleID(name)).Describe(ctx)
	if err != nil || len(sd.Info.RunningWorkflows) == 0 {
		return ""
	}
	return sd.Info.RunningWorkflows[0].WorkflowID
}

// LoopStatus is a fleet loop's status, running or ended.
//
// Only the workflow's result says how a loop ended: the status a running
// workflow answers (and the search attributes it upserts) never make a loop
// DONE, whatever they claim, and an ended workflow's result outcome wins
// over the status it carries.
func LoopStatus(ctx context.Context, c client.Client, name string) (*Status, error) {
	s, _, err := LoopStatusAt(ctx, c, name)
	return s, err
}

// LoopStatusAt is LoopStatus and the id of the workflow it came from.
func LoopStatusAt(ctx context.Context, c client.Client, name string) (*Status, string, error) {
	id, running, err := resolve(ctx, c, name)
	if err != nil {
		return nil, "", err
	}
	var s *Status
	if running {
		s, err = queryStatus(ctx, c, id, name)
	} else {
		s, err = endedStatus(ctx, c, id, "", name)
	}
	return s, id, err
}

func queryStatus(ctx context.Context, c client.Client, id, name string) (*Status, error) {
	v, err := c.QueryWorkflow(ctx, id, "", QueryStatus)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, notFound(name)
		}
		return nil, fmt.Errorf("%s is running but no worker answered its status query (are workers up?): %w", name, err)
	}
	var s Status
	if err := v.Get(&s); err != nil {
		return nil, fmt.Errorf("%s: its status query answered %w", name, err)
	}
	s.Loop = name
	s.Outcome, s.ExitCode, s.Summary = "", 0, "" // running: no outcome yet, whatever it says
	return &s, nil
}

// endedStatus is an ended workflow's status, from its result.
func endedStatus(ctx context.Context, c client.Client, id, runID, name string) (*Status, error) {
	var r Result
	if err := c.GetWorkflow(ctx, id, runID).Get(ctx, &r); err != nil {
		d, derr := c.DescribeWorkflowExecution(ctx, id, runID)
		what := "ended"
		if derr == nil {
			what = strings.ToLower(strings.TrimPrefix(d.GetWorkflowExecutionInfo().GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))
		}
		s := Status{Loop: name, Outcome: loop.ReasonBlocked, ExitCode: loop.ExitCodes[loop.ReasonBlocked],
			Summary: fmt.Sprintf("the workflow %s without a result (%s): %v", id, what, err)}
		return &s, nil
	}
	s := r.Status
	s.Loop = name
	s.Outcome, s.ExitCode, s.Summary = r.Outcome.Reason, r.Outcome.ExitCode, r.Outcome.Summary
	if code, ok := loop.ExitCodes[s.Outcome]; ok {
		s.ExitCode = code
	} else {
		s.Summary = fmt.Sprintf("the workflow ended with an outcome looprinter does not know (%q): %s", s.Outcome, s.Summary)
		s.Outcome, s.ExitCode = loop.ReasonBlocked, loop.ExitCodes[loop.ReasonBlocked]
	}
	return &s, nil
}

// Listed is one fleet loop in `looprinter list`.
type Listed struct {
	Name    string
	ID      string // the workflow's
	Running bool
	Status  *Status // nil when it could not be read
	Err     string
	// From says where Status came from: "search attributes" (visibility,
	// no worker asked), "query" (a worker answered) or "result" (ended).
	From string
}

// List lists the fleet loops the namespace's visibility knows, running
// ones first. A running loop's status comes from its search attributes
// when it has them, else from a query to it; an ended one's from its
// result.
func List(ctx context.Context, c client.Client) ([]Listed, error) {
	var out []Listed
	seen := map[string]bool{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowType = '%s'", WorkflowName), NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			if e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
				continue // its next run is listed
			}
			id := e.GetExecution().GetWorkflowId()
			name := loopName(e.GetMemo(), id)
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			l := Listed{Name: name, ID: id, Running: e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}
			var s *Status
			switch {
			case !l.Running:
				s, err = endedStatus(ctx, c, id, e.GetExecution().GetRunId(), name)
				l.From = "result"
			default:
				if s = fromSearchAttributes(e.GetSearchAttributes()); s != nil {
					s.Loop = name
					l.From = "search attributes"
				} else {
					s, err = queryStatus(ctx, c, id, name)
					l.From = "query"
				}
			}
			if err != nil {
				l.Err = err.Error()
			} else {
				l.Status = s
			}
			out = append(out, l)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Running != out[j].Running {
			return out[i].Running
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// loopName is the loop a workflow runs: its memo, else its id. A memo
// counts only when the id is the loop's (or its schedule's run of it): a
// workflow cannot pass for another loop by its memo.
func loopName(m *commonpb.Memo, id string) string {
	if p := m.GetFields()[memoLoop]; p != nil {
		var name string
		if converter.GetDefaultDataConverter().FromPayload(p, &name) == nil && name != "" &&
			(id == WorkflowID(name) || strings.HasPrefix(id, WorkflowID(name)+"-")) {
			return name
		}
	}
	name, _ := strings.CutPrefix(id, "looprinter-")
	if name == id {
		return ""
	}
	return name
}

// fromSearchAttributes is a running loop's status from its search
// attributes, or nil when it has none yet (not registered, or no step
// ended yet). The outcome attribute is not read: a running loop has none.
func fromSearchAttributes(sa *commonpb.SearchAttributes) *Status {
	f := sa.GetIndexedFields()
	if f[SASteps] == nil {
		return nil
	}
	dc := converter.GetDefaultDataConverter()
	var s Status
	var cycle, steps int64
	get := func(name string, v any) { _ = dc.FromPayload(f[name], v) }
	if f[SAShape] != nil {
		get(SAShape, &s.Shape)
	}
	if f[SAPhase] != nil {
		get(SAPhase, &s.Phase)
	}
	get(SASteps, &steps)
	if f[SACycle] != nil {
		get(SACycle, &cycle)
	}
	if f[SACycleGate] != nil {
		get(SACycleGate, &s.CycleGate)
	}
	if f[SAObjectiveGate] != nil {
		get(SAObjectiveGate, &s.ObjectiveGate)
	}
	if f[SACostUSD] != nil {
		get(SACostUSD, &s.CostUSD)
	}
	if f[SAPaused] != nil {
		get(SAPaused, &s.Paused)
	}
	s.Cycle, s.Steps = int(cycle), int(steps)
	return &s
}

// Signal sends pause, resume or stop to a running fleet loop.
func Signal(ctx context.Context, c client.Client, name, signal string) error {
	id, running, err := resolve(ctx, c, name)
	if err != nil {
		return err
	}
	if !running {
		return fmt.Errorf("the fleet loop %s is not running (it ended)", name)
	}
	err = c.SignalWorkflow(ctx, id, "", signal, nil)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("no running fleet loop named %s", name)
	}
	return err
}

// LoopInputOf is the input of the workflow that runs (or ran last) a loop:
// its remote and branch, where its records are.
func LoopInputOf(ctx context.Context, c client.Client, name string) (*LoopInput, error) {
	id, _, err := resolve(ctx, c, name)
	if err != nil {
		return nil, err
	}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, fmt.Errorf("%s: the workflow %s has no history", name, id)
	}
	ev, err := it.Next()
	if err != nil {
		return nil, err
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil || len(attrs.GetInput().GetPayloads()) == 0 {
		return nil, fmt.Errorf("%s: the workflow %s has no input", name, id)
	}
	var in LoopInput
	if err := converter.GetDefaultDataConverter().FromPayload(attrs.GetInput().GetPayloads()[0], &in); err != nil {
		return nil, fmt.Errorf("%s: the workflow's input: %w", name, err)
	}
	return &in, nil
}
