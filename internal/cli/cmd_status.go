package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
)

func init() { register(newStatusCmd) }

func newStatusCmd(io *IO) *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [NAME] [--json]",
		Short: "One line per loop, or every detail of one loop",
		Long: `Without a name, status prints one line per loop looprinter knows:

  fix-tests  running   [Cycle 3] T-001..T-003 complete, T-004 in progress. Cycle gate: pending. Objective gate: pending. $1.42 spent.

With a name (or -f), it prints every detail of that loop: where it runs, its
phase and task, the plan, both gates, what it spent against its budgets,
its last records. A run whose process died without writing its final
record is shown as crashed.

In the fleet build with a Temporal frontend configured ($LOOPRINTER_TEMPORAL),
fleet loops are shown too, and a NAME no local loop has is looked up on the
fleet (docs/fleet.md).`,
		Example: `  looprinter status
  looprinter status fix-tests
  looprinter status --json fix-tests`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && file == "" {
				entries, _ := ops.Entries()
				remotes := remoteList(cmd.Context(), io)
				if len(entries) > 0 || len(remotes) > 0 {
					return statusAll(io, entries, remotes, asJSON)
				}
				if _, err := os.Stat("loop.yaml"); err != nil {
					if asJSON {
						fmt.Fprintln(io.Out, "[]")
					}
					fmt.Fprintln(io.Err, "no loops yet: `looprinter start` runs one in the background")
					return nil
				}
			}
			e, err := resolveLoop(args, file)
			if err != nil {
				if file != "" {
					return err
				}
				r, rs, err := findRemote(cmd.Context(), args, err)
				if err != nil {
					return err
				}
				r.Close()
				return statusRemote(io, rs, asJSON)
			}
			return statusOne(io, e, asJSON)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func statusAll(io *IO, entries []ops.Entry, remotes []RemoteStatus, asJSON bool) error {
	sts := make([]ops.Status, len(entries))
	for i, e := range entries {
		sts[i] = ops.Inspect(e)
	}
	if asJSON {
		return encodeStatuses(io.Out, sts, remotes)
	}
	for _, r := range remotes {
		r.Status.State = "fleet " + r.Status.State
		sts = append(sts, r.Status)
	}
	printStatusLines(io.Out, sts)
	return nil
}

// statusRemote prints every detail the fleet has of one of its loops.
func statusRemote(io *IO, r *RemoteStatus, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	// Everything here comes from the workflow or the agents' work: it all
	// goes through termtext.Clean.
	w := &strings.Builder{}
	defer func() { fmt.Fprint(io.Out, termtext.Clean(w.String())) }()
	state := r.State
	if r.Stopping && !r.Stopped() {
		state += ", stopping after the step under way"
	}
	fmt.Fprintf(w, "loop:       %s\n", r.Name)
	fmt.Fprintf(w, "state:      %s (on the fleet: workflow %s)\n", state, r.Workflow)
	fmt.Fprintf(w, "status:     %s\n", r.Line)
	if r.Branch != "" {
		fmt.Fprintf(w, "branch:     %s on %s\n", r.Branch, r.Remote)
	}
	if r.Worker != "" {
		fmt.Fprintf(w, "last step:  %d on worker %s, branch head %s\n", r.Steps, r.Worker, r.Commit)
	}
	if st := r.Loop; st != nil {
		fmt.Fprintf(w, "phase:      %s\n", orDash(st.Phase))
		wall := time.Duration(st.WallMS) * time.Millisecond
		fmt.Fprintf(w, "spent:      cycle %d, %s, %s, $%.2f, %s of step time\n", st.Cycle, count(st.Iterations, "build run"), count(st.AgentRuns, "agent run"), st.CostUSD, wall.Round(time.Second))
		fmt.Fprintf(w, "gates:      cycle %s, objective %s\n", orDash(st.CycleGate), orDash(st.ObjectiveGate))
		if st.Outcome != "" {
			fmt.Fprintf(w, "outcome:    %s (exit %d): %s\n", loop.Title(st.Outcome), st.ExitCode, st.Summary)
		}
		if st.Landing != "" {
			fmt.Fprintf(w, "landing:    %s\n", st.Landing)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note:       %s\n", n)
	}
	fmt.Fprintf(w, "records:    on the branch (`looprinter logs %s` fetches them)\n", r.Name)
	return nil
}

func printStatusLines(w io.Writer, sts []ops.Status) {
	nw, sw := 4, 5
	for _, s := range sts {
		nw = max(nw, len(s.Name))
		sw = max(sw, len(s.State))
	}
	for _, s := range sts {
		line := s.Line
		if s.Private != nil && s.Private.Warning != "" {
			line += fmt.Sprintf(" Private folder over budget: %s of %s.", ops.Bytes(s.Private.Bytes), ops.Bytes(s.Private.Budget))
		}
		fmt.Fprintf(w, "%-*s  %-*s  %s\n", nw, termtext.Line(s.Name), sw, s.State, termtext.Line(line))
	}
}

func statusOne(io *IO, e ops.Entry, asJSON bool) error {
	d, l := ops.DetailOf(e)
	s, last := d.Status, d.LastRecords
	dir := runDir(e)
	if asJSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	// Plan titles, summaries and records hold text agents wrote: the whole
	// page goes through termtext.Clean.
	w := &strings.Builder{}
	defer func() { fmt.Fprint(io.Out, termtext.Clean(w.String())) }()
	state := s.State
	if s.PID != 0 && !s.Stopped() {
		state += fmt.Sprintf(" (pid %d)", s.PID)
	}
	if s.PausePending && s.State == ops.StateRunning {
		state += ", pausing before the next agent run"
	}
	fmt.Fprintf(w, "loop:       %s\n", s.Name)
	fmt.Fprintf(w, "state:      %s\n", state)
	fmt.Fprintf(w, "status:     %s\n", s.Line)
	fmt.Fprintf(w, "loop file:  %s\n", e.LoopFile)
	switch {
	case e.Worktree != "":
		fmt.Fprintf(w, "runs in:    %s (git worktree on branch %s; steer it through %s)\n", dir, e.Branch, e.RunFile)
	case e.Archived:
		fmt.Fprintf(w, "archive:    %s (the worktree was removed; the work is on branch %s)\n", dir, e.Branch)
	case dir != e.Dir:
		fmt.Fprintf(w, "runs in:    %s\n", dir)
	}
	if e.Schedule != "" && ops.IsScheduler(e.SchedulerPID) {
		fmt.Fprintf(w, "schedule:   %s (scheduler pid %d)\n", e.Schedule, e.SchedulerPID)
	}
	if st := s.Loop; st != nil {
		phase := st.Phase
		switch busy := loop.TasksInProgress(st); len(busy) {
		case 0:
		case 1:
			phase += ", task " + busy[0]
		default:
			phase += ", tasks " + strings.Join(busy, ", ")
		}
		fmt.Fprintf(w, "phase:      %s\n", phase)
		for _, f := range loop.WaveInFlight(st) {
			task := f.Task
			if f.Attempt > 0 {
				task += fmt.Sprintf(" attempt %d", f.Attempt)
			}
			fmt.Fprintf(w, "in flight:  %s, slot %d, %s, %s (run %s)\n", task, f.Slot+1, orDash(f.Backend), time.Since(f.Started).Round(time.Second), f.Run)
		}
		wall := time.Duration(st.WallMS) * time.Millisecond
		if l != nil {
			b := l.Budget
			fmt.Fprintf(w, "spent:      cycle %d of %d, %s of %d, %s, $%.2f of $%.2f, %s of %s\n",
				st.Cycle, b.Cycles, count(st.Iterations, "build run"), b.Iterations, count(st.AgentRuns, "agent run"), st.CostUSD, b.CostUSD, wall.Round(time.Second), b.Wall)
		} else {
			fmt.Fprintf(w, "spent:      cycle %d, %s, %s, $%.2f, %s\n", st.Cycle, count(st.Iterations, "build run"), count(st.AgentRuns, "agent run"), st.CostUSD, wall.Round(time.Second))
		}
		fmt.Fprintf(w, "gates:      cycle %s, objective %s\n", st.CycleGate, st.ObjectiveGate)
		if st.Outcome != "" {
			fmt.Fprintf(w, "outcome:    %s (exit %d): %s\n", loop.Title(st.Outcome), st.ExitCode, st.Summary)
		}
		if st.Landing != "" {
			fmt.Fprintf(w, "landing:    %s\n", st.Landing)
		}
		for _, nv := range st.NotVerified {
			fmt.Fprintf(w, "NOT VERIFIED: %s\n", nv)
		}
		for _, f := range loop.FlakyLines(st) {
			fmt.Fprintf(w, "FLAKY:      %s\n", termtext.Clean(f))
		}
		for _, l := range loop.EscalationLines(st) {
			fmt.Fprintf(w, "escalated:  %s\n", termtext.Clean(l))
		}
		for _, l := range loop.StrengthLines(st, 10) {
			fmt.Fprintf(w, "strength:   %s\n", termtext.Clean(l))
		}
		if len(st.NetRefused) > 0 {
			fmt.Fprintf(w, "network:    refused %s (add what the agent needs to network.allow)\n", strings.Join(st.NetRefused, ", "))
		}
		if p := loop.ParallelSaving(st); p != "" {
			fmt.Fprintf(w, "parallel:   %s\n", p)
		}
	}
	if pu := s.Private; pu != nil {
		at := ""
		if pu.Partial {
			at = "at least "
		}
		fmt.Fprintf(w, "private:    %s%s of the agents' HOME and caches (budget %s) in %s\n", at, ops.Bytes(pu.Bytes), ops.Bytes(pu.Budget), pu.Folder)
		if pu.Warning != "" {
			fmt.Fprintf(w, "warning:    %s\n", pu.Warning)
		}
	}
	printChannel(w, s)
	if len(s.Tasks) > 0 {
		fmt.Fprintln(w, "plan:")
		for _, t := range s.Tasks {
			mark := "[ ]"
			switch {
			case t.Passes:
				mark = "[x]"
			case t.Active:
				mark = "[>]"
			}
			waits := ""
			if len(t.Waits) > 0 {
				waits = " (waits for " + strings.Join(t.Waits, ", ") + ")"
			}
			fmt.Fprintf(w, "  %s %s %s%s\n", mark, t.ID, t.Title, waits)
		}
	}
	if len(last) > 0 {
		fmt.Fprintln(w, "last records:")
		for _, ev := range last {
			fmt.Fprintf(w, "  %s\n", firstLineOf(ops.Summarize(ev)))
		}
	}
	fmt.Fprintf(w, "records:    %s\n", loopdir.Dir(dir).Records())
	if e.Log != "" {
		if _, err := os.Stat(e.Log); err == nil {
			fmt.Fprintf(w, "log:        %s\n", e.Log)
		}
	}
	return nil
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// printChannel prints the question a loop waits on and the guidance no agent
// run has acknowledged yet.
func printChannel(w io.Writer, s ops.Status) {
	if s.Loop != nil && s.Loop.PlanWait != nil {
		pw := s.Loop.PlanWait
		fmt.Fprintf(w, "waiting:    waiting for plan approval: the first plan (%d task(s), output/plan.json) since %s, until %s\n", pw.Tasks, pw.AskedAt.Local().Format(time.DateTime), pw.Deadline.Local().Format(time.DateTime))
		fmt.Fprintf(w, "  approve:  looprinter approve %s\n", s.Name)
	}
	if q := s.Question; q != nil {
		fmt.Fprintf(w, "question:   %s (asked by the %s run, %s; ask_timeout ends %s)\n", q.ID, q.Phase, q.AskedAt.Local().Format(time.DateTime), q.Deadline.Local().Format(time.DateTime))
		for _, l := range strings.Split(q.Text, "\n") {
			fmt.Fprintf(w, "  > %s\n", l)
		}
		fmt.Fprintf(w, "  answer:   looprinter answer %s %s \"…\"\n", s.Name, q.ID)
	}
	for _, g := range s.Guidance {
		seen := "not delivered yet"
		if g.Told > 0 {
			seen = fmt.Sprintf("shown to %s, not acknowledged", count(g.Told, "run"))
		}
		fmt.Fprintf(w, "guidance:   %s (%s): %s\n", g.ID, seen, firstLineOf(g.Text))
	}
}

// encodeStatuses prints local loops' statuses, then fleet loops', as one
// JSON array (an empty one when there are none).
func encodeStatuses(w io.Writer, sts []ops.Status, remotes []RemoteStatus) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(remotes) == 0 {
		if sts == nil {
			sts = []ops.Status{}
		}
		return enc.Encode(sts)
	}
	all := make([]any, 0, len(sts)+len(remotes))
	for _, s := range sts {
		all = append(all, s)
	}
	for _, r := range remotes {
		all = append(all, r)
	}
	return enc.Encode(all)
}
