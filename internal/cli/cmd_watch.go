package cli

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/watch"
)

func init() { register(newWatchCmd) }

func newWatchCmd(io *IO) *cobra.Command {
	var file string
	var interval time.Duration
	var once bool
	cmd := &cobra.Command{
		Use:   "watch [NAME...]",
		Short: "A live terminal view of one loop or all of them",
		Long: `A live view of your loops: for the selected one its cycle, phase and task,
both gates, the plan's tasks with their passes, what it spent against each
budget, the current agent run and the live tail of its tool calls.

It only reads the files a run writes, so attach and detach (q) at any time;
the loop goes on. Keys: tab / arrows select a loop, p pause (before the next
agent run), r resume, s then s stop (cleanly, as ` + "`looprinter stop`" + `), q quit.

Without a terminal (or with --once) it prints one frame and exits.`,
		Example: `  looprinter watch
  looprinter watch fix-tests docs-loop
  looprinter watch --once fix-tests`,
		RunE: func(cmd *cobra.Command, args []string) error {
			entries, err := watchEntries(args, file)
			if err != nil {
				return err
			}
			src := watch.NewSource(entries)
			m := watch.New(src.Poll, interval, watch.FileActions{})
			if once || !io.IsTerm {
				next, _ := m.Update(watch.SnapshotMsg(src.Poll()))
				fmt.Fprint(io.Out, next.View())
				return nil
			}
			p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(cmd.Context()))
			_, err = p.Run()
			if err == tea.ErrProgramKilled {
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	cmd.Flags().DurationVar(&interval, "interval", 500*time.Millisecond, "how often to read the loops' files")
	cmd.Flags().BoolVar(&once, "once", false, "print one frame and exit")
	return cmd
}

// watchEntries is what watch shows: the named loops, or every loop
// looprinter knows (re-read at each poll, so new loops appear), or the one
// here.
func watchEntries(args []string, file string) (func() []ops.Entry, error) {
	if len(args) > 0 || file != "" {
		var keys []ops.Entry
		if len(args) == 0 {
			e, err := resolveLoop(nil, file)
			if err != nil {
				return nil, err
			}
			keys = append(keys, e)
		}
		for _, a := range args {
			e, err := resolveLoop([]string{a}, "")
			if err != nil {
				return nil, err
			}
			keys = append(keys, e)
		}
		return func() []ops.Entry {
			out := make([]ops.Entry, len(keys))
			for i, e := range keys {
				if f, err := ops.Load(e.Key); err == nil {
					e = f
				}
				out[i] = e
			}
			return out
		}, nil
	}
	if entries, _ := ops.Entries(); len(entries) == 0 {
		e, err := resolveLoop(nil, "")
		if err != nil {
			return nil, err
		}
		return func() []ops.Entry { return []ops.Entry{e} }, nil
	}
	return func() []ops.Entry {
		entries, _ := ops.Entries()
		return entries
	}, nil
}
