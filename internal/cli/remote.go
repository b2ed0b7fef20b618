package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spend"
)

// RemoteLoops are loops that run elsewhere: the fleet's, on Temporal. The
// ordinary commands (status, list, logs, watch, pause, resume, stop, cost,
// schedule) reach them by name when no local loop has that name. The fleet
// build (internal/fleetcmd, `-tags fleet`) sets Remote; the default build
// has none, and no Temporal code.
type RemoteLoops interface {
	// Where says which frontend and namespace, for messages.
	Where() string
	// Find is one loop's status; an error wrapping ErrNoRemoteLoop when the
	// fleet has no loop of that name.
	Find(ctx context.Context, name string) (*RemoteStatus, error)
	// List is every fleet loop, running ones first.
	List(ctx context.Context) ([]RemoteStatus, error)
	// Control pauses, resumes or stops a running loop ("pause", "resume",
	// "stop").
	Control(ctx context.Context, name, action string) error
	// Records fetches the loop's records from its branch into a folder of
	// this machine's state folder and returns the folder that holds
	// working-records/.
	Records(ctx context.Context, name string) (string, error)
	// Schedule makes a Temporal Schedule for a loop file; Schedules lists
	// them; Unschedule removes one.
	Schedule(ctx context.Context, r RemoteScheduleRequest) (string, error)
	Schedules(ctx context.Context) ([]RemoteSchedule, error)
	Unschedule(ctx context.Context, name string) error
	Close()
}

// ErrNoRemoteLoop: the fleet has no loop of that name.
var ErrNoRemoteLoop = errors.New("no fleet loop of that name")

// RemoteStatus is a fleet loop as status and list show it: the fields a
// local loop has (State, Line, Loop with phase, counters, gates, spend and
// outcome), and where it runs.
type RemoteStatus struct {
	ops.Status
	Fleet    bool     `json:"fleet"`
	Workflow string   `json:"workflow,omitempty"`
	Remote   string   `json:"remote,omitempty"`
	Branch   string   `json:"branch,omitempty"`
	Steps    int      `json:"steps"`
	Worker   string   `json:"worker,omitempty"` // the worker of the last step
	Commit   string   `json:"commit,omitempty"` // the branch head the last step pushed
	Notes    []string `json:"notes,omitempty"`
	Stopping bool     `json:"stopping,omitempty"`
	From     string   `json:"from,omitempty"` // where the status came from: search attributes, query, result
	Err      string   `json:"error,omitempty"`
}

// RemoteScheduleRequest is `schedule --fleet`.
type RemoteScheduleRequest struct {
	File, Every, Cron, Remote, Branch, TaskQueue string
}

// RemoteSchedule is one fleet loop's schedule.
type RemoteSchedule struct {
	Loop    string      `json:"loop"`
	ID      string      `json:"id"`
	When    string      `json:"when"`
	Paused  bool        `json:"paused,omitempty"`
	Next    []time.Time `json:"next,omitempty"`
	Actions int         `json:"actions"`
	Skipped int         `json:"skipped_overlap"`
	Running []string    `json:"running,omitempty"`
}

// Remote connects to the fleet: nil, nil when this build has no fleet or
// no Temporal frontend is configured ($LOOPRINTER_TEMPORAL, or a running
// `fleet dev`).
var Remote func() (RemoteLoops, error)

// remoteTimeout bounds each remote call of an ordinary command.
const remoteTimeout = 20 * time.Second

// remote is the fleet, when there is one; its error is a configured
// frontend that cannot be reached.
func remote() (RemoteLoops, error) {
	if Remote == nil {
		return nil, nil
	}
	return Remote()
}

// findRemote looks a name up on the fleet after resolveLoop found no local
// loop: the remote loop, or the local error when there is no fleet or it
// has no such loop.
func findRemote(ctx context.Context, args []string, localErr error) (RemoteLoops, *RemoteStatus, error) {
	if len(args) == 0 || args[0] == "" {
		return nil, nil, localErr
	}
	r, err := remote()
	if err != nil {
		// Whether the fleet runs it is not known: not a usage error.
		return nil, nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("%q is not a local loop, and %w", args[0], err)}
	}
	if r == nil {
		return nil, nil, localErr
	}
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	s, err := r.Find(ctx, args[0])
	if err != nil {
		r.Close()
		if errors.Is(err, ErrNoRemoteLoop) {
			return nil, nil, localErr
		}
		return nil, nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("%s: %w", args[0], err)}
	}
	return r, s, nil
}

// remoteList is every fleet loop, when a fleet is configured; a fleet
// that cannot be reached is a warning, not an error (local loops still list).
func remoteList(ctx context.Context, io *IO) []RemoteStatus {
	r, err := remote()
	if err != nil {
		fmt.Fprintf(io.Err, "fleet loops not listed: %v\n", err)
		return nil
	}
	if r == nil {
		return nil
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	ls, err := r.List(ctx)
	if err != nil {
		fmt.Fprintf(io.Err, "fleet loops not listed (%s): %v\n", r.Where(), err)
	}
	return ls
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// remoteControl is pause, resume or stop of a fleet loop, for a name no
// local loop has: a signal to its workflow.
func remoteControl(ctx context.Context, io *IO, args []string, file string, localErr error, action string) error {
	if file != "" {
		return localErr
	}
	r, s, err := findRemote(ctx, args, localErr)
	if err != nil {
		return err
	}
	defer r.Close()
	if s.Stopped() {
		if action == "stop" {
			fmt.Fprintf(io.Err, "%s is not running (the fleet loop ended)\n", s.Name)
			fmt.Fprintf(io.Out, "%s  %s\n", s.Name, termtext.Line(s.Line))
			return nil
		}
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("the fleet loop %s has ended (%s): there is nothing to %s", s.Name, s.State, action)}
	}
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	if err := r.Control(ctx, s.Name, action); err != nil {
		return &ExitError{Code: ExitBlocked, Err: err}
	}
	switch action {
	case "pause":
		fmt.Fprintf(io.Err, "%s (fleet) will pause before its next step; `looprinter resume %s` goes on\n", s.Name, s.Name)
	case "resume":
		if s.State != ops.StatePaused {
			fmt.Fprintf(io.Err, "%s (fleet) was not paused\n", s.Name)
			return nil
		}
		fmt.Fprintf(io.Err, "%s (fleet) resumes\n", s.Name)
	case "stop":
		fmt.Fprintf(io.Err, "%s (fleet) stops after the step under way; `looprinter status %s` shows when it has\n", s.Name, s.Name)
	}
	return nil
}

// remoteLogs is `logs` of a fleet loop: its records as its branch holds
// them (each step pushes what it recorded), fetched into this machine's
// state folder; --follow fetches again every few seconds until the loop
// ends.
func remoteLogs(cmd *cobra.Command, io *IO, o *logsOptions, args []string, localErr error) error {
	r, s, err := findRemote(cmd.Context(), args, localErr)
	if err != nil {
		return err
	}
	defer r.Close()
	fetch := func() (string, error) {
		ctx, cancel := context.WithTimeout(cmd.Context(), remoteTimeout)
		defer cancel()
		return r.Records(ctx, s.Name)
	}
	dir, err := fetch()
	if err != nil {
		return &ExitError{Code: ExitBlocked, Err: fmt.Errorf("%s: the records are on its branch, which cannot be fetched here: %w", s.Name, err)}
	}
	oo := *o
	oo.poll = max(o.poll, remotePoll)
	ended := s.Stopped()
	live := func() bool {
		if ended {
			return false
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), remoteTimeout)
		defer cancel()
		if now, err := r.Find(ctx, s.Name); err == nil && now.Stopped() {
			ended = true
		}
		return !ended
	}
	return followLogs(cmd, io, &oo, dir, live, func() {
		if _, err := fetch(); err != nil {
			fmt.Fprintf(io.Err, "(fetching the branch of %s: %v)\n", s.Name, err)
		}
	})
}

// remotePoll is the shortest wait between two fetches of a fleet loop's
// branch (logs -F, watch).
const remotePoll = 2 * time.Second

// remoteCost is `cost` of a fleet loop: the same report from the records
// on its branch, and the workflow's own tally, which also counts attempts
// whose worker died before it pushed.
func remoteCost(stdio *IO, o *costOptions, args []string, localErr error) error {
	ctx := context.Background()
	r, s, err := findRemote(ctx, args, localErr)
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	var rep *spend.Report
	dir, ferr := r.Records(ctx, s.Name)
	if ferr == nil {
		rep, ferr = loopdir.Dir(dir).SpendUncached()
	}
	if o.json {
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		out := struct {
			Fleet   *RemoteStatus `json:"fleet"`
			Records string        `json:"records_error,omitempty"`
			*spend.Report
		}{Fleet: s, Report: rep}
		if ferr != nil {
			out.Records = ferr.Error()
		}
		return enc.Encode(out)
	}
	if st := s.Loop; st != nil {
		fmt.Fprintf(stdio.Out, "%s (fleet, workflow %s): $%.4f over %s (%s), %s of step time, as the workflow counts it\n",
			termtext.Line(s.Name), termtext.Line(s.Workflow), st.CostUSD, count(st.AgentRuns, "agent run"), count(st.Iterations, "build run"), (time.Duration(st.WallMS) * time.Millisecond).Round(time.Second))
	}
	if ferr != nil {
		fmt.Fprintf(stdio.Out, "(no breakdown: the records are on the branch, which cannot be read here: %v)\n", ferr)
		return nil
	}
	fmt.Fprintln(stdio.Out)
	printSpend(stdio, "the records on its branch "+s.Branch, rep)
	return nil
}

// remoteUnsupported is a command that does not reach fleet loops yet
// (answer, guide): it says so when the name is a fleet loop's.
func remoteUnsupported(ctx context.Context, args []string, file string, localErr error, what string) error {
	if file != "" {
		return localErr
	}
	r, s, err := findRemote(ctx, args, localErr)
	if err != nil {
		return err
	}
	r.Close()
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s is a fleet loop: `looprinter %s` does not reach fleet loops yet; an agent's question holds its step on its worker until ask_timeout (docs/fleet.md, \"Not supported yet\")", s.Name, what)}
}
