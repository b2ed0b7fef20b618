package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

func init() { register(newLogsCmd) }

type logsOptions struct {
	file    string
	follow  bool
	lines   int
	asJSON  bool
	noTools bool
	poll    time.Duration
}

func newLogsCmd(io *IO) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs [NAME] [-F]",
		Short: "The loop's records, one readable line each",
		Long: `Print a loop's records (working-records/*.jsonl) as readable lines, oldest
first: agent runs, tool calls, gates with each check, tasks that passed,
commits, notifications, the stop and its reason. With --follow (-F), keep
printing new records while a run holds the loop, and return when it stops.
As in every command, -f names the loop file. A fleet loop's records are
read from its branch, fetched here (docs/fleet.md).`,
		Example: `  looprinter logs
  looprinter logs -F fix-tests
  looprinter logs -f loops/fix-tests.yaml
  looprinter logs -n 20 --no-tools fix-tests
  looprinter logs --json fix-tests | jq .event`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := resolveLoop(args, o.file)
			if err != nil {
				if o.file != "" {
					return err
				}
				return remoteLogs(cmd, io, o, args, err)
			}
			return runLogs(cmd, io, o, runDir(e))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "the loop file")
	f.BoolVarP(&o.follow, "follow", "F", false, "keep printing new records while the loop runs")
	f.IntVarP(&o.lines, "lines", "n", 0, "print only the last N records first (0: all)")
	f.BoolVar(&o.asJSON, "json", false, "print the raw JSON records")
	f.BoolVar(&o.noTools, "no-tools", false, "leave out the agents' tool calls")
	f.DurationVar(&o.poll, "poll", 200*time.Millisecond, "how often --follow looks for new records")
	return cmd
}

func runLogs(cmd *cobra.Command, io *IO, o *logsOptions, dir string) error {
	live := func() bool { l, _ := loopdir.Locked(dir); return l }
	return followLogs(cmd, io, o, dir, live, nil)
}

// followLogs prints a folder's records and, with --follow, new ones while
// live says the loop runs; refresh (fleet loops: fetch the branch again)
// runs before each look for new records.
func followLogs(cmd *cobra.Command, io *IO, o *logsOptions, dir string, live func() bool, refresh func()) error {
	if refresh == nil {
		refresh = func() {}
	}
	records := loopdir.Dir(dir)
	print := func(evs []record.Event) {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].TS.Before(evs[j].TS) })
		for _, ev := range evs {
			if o.noTools && ev.Event == record.ToolCall {
				continue
			}
			if o.asJSON {
				b, _ := json.Marshal(ev)
				fmt.Fprintln(io.Out, string(b))
				continue
			}
			fmt.Fprintln(io.Out, ops.Summarize(ev))
		}
	}
	var first []record.Event
	var fl *record.Follower
	if o.lines > 0 {
		// Only the records' ends are read: as fast for a long loop as for
		// a new one.
		var offsets map[string]int64
		first, offsets, _ = records.Tail(o.lines, func(ev record.Event) bool { return !o.noTools || ev.Event != record.ToolCall })
		fl = records.FollowAt(offsets)
	} else {
		fl = records.Follow(true)
		first = fl.Poll()
		if o.noTools {
			kept := first[:0]
			for _, ev := range first {
				if ev.Event != record.ToolCall {
					kept = append(kept, ev)
				}
			}
			first = kept
		}
		sort.SliceStable(first, func(i, j int) bool { return first[i].TS.Before(first[j].TS) })
	}
	print(first)
	if !o.follow {
		return nil
	}
	if !live() {
		fmt.Fprintln(io.Err, "(no run holds the loop now; nothing to follow)")
		return nil
	}
	ctx := cmd.Context()
	tick := time.NewTicker(o.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		refresh()
		print(fl.Poll())
		if !live() {
			// The run ended: print what it wrote last, then return.
			refresh()
			print(fl.Poll())
			return nil
		}
	}
}
