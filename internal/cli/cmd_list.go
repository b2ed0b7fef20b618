package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
)

func init() {
	register(newListCmd)
}

func newListCmd(io *IO) *cobra.Command {
	var asJSON, prune bool
	var forget string
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "The loops looprinter knows: running, finished, crashed",
		Long: `List every loop you have run or started (from any directory): whether it
is running (or paused, or starting), finished (with its outcome), or crashed
(its process died without writing its final record), where it lives and
what it spent. The registry is kept in $XDG_STATE_HOME/looprinter
(~/.local/state/looprinter); the loops' own files are never touched.
In the fleet build with a Temporal frontend configured ($LOOPRINTER_TEMPORAL),
the fleet's loops are listed after them (docs/fleet.md).`,
		Example: `  looprinter list
  looprinter list --forget old-loop
  looprinter list --prune     # forget loops whose directory is gone`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if forget != "" {
				e, err := ops.Find(forget)
				if err != nil {
					return &ExitError{Code: ExitUsage, Err: err}
				}
				if err := ops.Forget(e.Key); err != nil {
					return err
				}
				fmt.Fprintf(io.Err, "forgot %s (%s)\n", e.Name, e.LoopFile)
				return nil
			}
			entries, err := ops.Entries()
			if err != nil {
				return err
			}
			var sts []ops.Status
			for _, e := range entries {
				s := ops.Inspect(e)
				if prune && s.State == ops.StateGone {
					ops.Forget(e.Key)
					fmt.Fprintf(io.Err, "forgot %s (%s is gone)\n", e.Name, e.Dir)
					continue
				}
				sts = append(sts, s)
			}
			remotes := remoteList(cmd.Context(), io)
			if asJSON {
				return encodeStatuses(io.Out, sts, remotes)
			}
			if len(sts) == 0 && len(remotes) == 0 {
				fmt.Fprintln(io.Err, "no loops yet: `looprinter start` runs one in the background")
				return nil
			}
			tw := tabwriter.NewWriter(io.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tDETAIL\tSPENT\tDIR")
			for _, s := range sts {
				detail, spent := "", "-"
				if st := s.Loop; st != nil {
					spent = fmt.Sprintf("$%.2f", st.CostUSD)
					switch s.State {
					case ops.StateFinished, ops.StateInterrupted:
						detail = fmt.Sprintf("%s (exit %d)", loop.Title(st.Outcome), st.ExitCode)
						if st.Landing != "" {
							detail += ", landing: " + st.Landing
						}
					case ops.StateCrashed:
						detail = fmt.Sprintf("pid %d died without a final record", s.PID)
					case ops.StateRunning, ops.StatePaused, ops.StateWaiting:
						detail = fmt.Sprintf("pid %d, cycle %d, %s", s.PID, st.Cycle, st.Phase)
					}
				}
				if nv := ops.NotVerifiedPhrase(s.Loop); nv != "" {
					detail += ", " + nv
				}
				if s.State == ops.StateStarting {
					detail = fmt.Sprintf("pid %d", s.PID)
				}
				if s.Schedule != "" && ops.IsScheduler(s.SchedulerPID) {
					detail += " [scheduled: " + s.Schedule + "]"
				}
				dir := s.Dir
				if s.Worktree != "" {
					dir = s.RunDir + " (worktree)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Line(s.Name), s.State, termtext.Line(detail), spent, termtext.Line(dir))
			}
			for _, r := range remotes {
				detail, spent := r.Err, "-"
				if st := r.Loop; st != nil {
					spent = fmt.Sprintf("$%.2f", st.CostUSD)
					if st.Outcome != "" {
						detail = fmt.Sprintf("%s (exit %d)", loop.Title(st.Outcome), st.ExitCode)
					} else {
						detail = fmt.Sprintf("cycle %d, %s, gates %s/%s, step %d", st.Cycle, orDash(st.Phase), orDash(st.CycleGate), orDash(st.ObjectiveGate), r.Steps)
					}
				}
				where := "fleet: " + r.Workflow
				if r.Branch != "" {
					where = "fleet: branch " + r.Branch
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Line(r.Name), termtext.Line(r.State), termtext.Line(detail), spent, termtext.Line(where))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&prune, "prune", false, "forget loops whose directory no longer exists")
	cmd.Flags().StringVar(&forget, "forget", "", "forget a loop (its files stay)")
	return cmd
}
