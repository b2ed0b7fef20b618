package cli

import (
	"context"
	"fmt"
	"strings"
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
			var names []string // fleet loops named
			var local []string
			for _, a := range args {
				if _, err := resolveLoop([]string{a}, ""); err != nil {
					if r, _, rerr := findRemote(cmd.Context(), []string{a}, err); rerr == nil {
						r.Close()
						names = append(names, a)
						continue
					}
				}
				local = append(local, a)
			}
			var entries func() []ops.Entry
			var noLocal error
			if len(local) > 0 || len(names) == 0 {
				var err error
				if entries, err = watchEntries(local, file); err != nil {
					if len(args) > 0 || file != "" || Remote == nil {
						return err
					}
					entries, noLocal = func() []ops.Entry { return nil }, err // no local loop: the fleet's alone
				}
			} else {
				entries = func() []ops.Entry { return nil }
			}
			src := watch.NewSource(entries)
			poll := src.Poll
			var actions watch.Actions = watch.FileActions{}
			if len(names) > 0 || len(args) == 0 && file == "" {
				r, err := remote()
				if err != nil {
					fmt.Fprintf(io.Err, "fleet loops not watched: %v\n", err)
				} else if r != nil {
					defer r.Close()
					fw := newFleetWatch(cmd.Context(), r, names)
					poll = func() []watch.LoopView { return append(src.Poll(), fw.poll()...) }
					actions = fleetActions{local: watch.FileActions{}, r: r, ctx: cmd.Context()}
					noLocal = nil
				}
			}
			if noLocal != nil {
				return noLocal
			}
			m := watch.New(poll, interval, actions)
			if once || !io.IsTerm {
				next, _ := m.Update(watch.SnapshotMsg(poll()))
				fmt.Fprint(io.Out, next.View())
				return nil
			}
			p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(cmd.Context()))
			_, err := p.Run()
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

// fleetWatch gives watch the fleet's loops: their status from Temporal and
// their records from their branches (fetched into the state folder), read
// again at most every few seconds.
type fleetWatch struct {
	ctx     context.Context
	r       RemoteLoops
	names   []string // the loops named, or every fleet loop
	src     *watch.Source
	dirs    map[string]string
	last    time.Time
	fetched time.Time
	views   []watch.LoopView
}

func newFleetWatch(ctx context.Context, r RemoteLoops, names []string) *fleetWatch {
	fw := &fleetWatch{ctx: ctx, r: r, names: names, dirs: map[string]string{}}
	fw.src = watch.NewSource(func() []ops.Entry {
		var es []ops.Entry
		for _, v := range fw.views {
			if d := fw.dirs[v.Status.Name]; d != "" {
				es = append(es, ops.Entry{Key: "fleet:" + v.Status.Name, Name: v.Status.Name, Dir: d, RunDir: d})
			}
		}
		return es
	})
	return fw
}

func (fw *fleetWatch) poll() []watch.LoopView {
	if time.Since(fw.last) < remotePoll && fw.views != nil {
		return fw.views
	}
	fw.last = time.Now()
	ctx, cancel := context.WithTimeout(fw.ctx, remoteTimeout)
	defer cancel()
	var sts []RemoteStatus
	if len(fw.names) == 0 {
		sts, _ = fw.r.List(ctx)
	} else {
		for _, n := range fw.names {
			if s, err := fw.r.Find(ctx, n); err == nil {
				sts = append(sts, *s)
			}
		}
	}
	refetch := time.Since(fw.fetched) >= 5*remotePoll
	views := make([]watch.LoopView, 0, len(sts))
	for _, s := range sts {
		if _, ok := fw.dirs[s.Name]; !ok || refetch {
			if d, err := fw.r.Records(ctx, s.Name); err == nil {
				fw.dirs[s.Name] = d
			}
		}
		views = append(views, watch.LoopView{Status: s.Status})
	}
	if refetch {
		fw.fetched = time.Now()
	}
	fw.views = views
	// The records' views (agent runs, last records) with the fleet's status.
	byName := map[string]watch.LoopView{}
	for _, v := range fw.src.Poll() {
		byName[v.Status.Name] = v
	}
	for i, v := range views {
		if rv, ok := byName[v.Status.Name]; ok {
			rv.Status = v.Status
			views[i] = rv
		}
		views[i].Status.Entry.Dir = "fleet: " + sts[i].Workflow
		views[i].Status.Entry.RunDir = views[i].Status.Entry.Dir
	}
	return views
}

// fleetActions pause, resume and stop fleet loops by signals, local ones
// as watch always does.
type fleetActions struct {
	local watch.Actions
	r     RemoteLoops
	ctx   context.Context
}

func (a fleetActions) do(e ops.Entry, action, says string) (string, error) {
	ctx, cancel := context.WithTimeout(a.ctx, remoteTimeout)
	defer cancel()
	if err := a.r.Control(ctx, e.Name, action); err != nil {
		return "", err
	}
	return e.Name + " (fleet) " + says, nil
}

func (a fleetActions) Stop(e ops.Entry) (string, error) {
	if !strings.HasPrefix(e.Key, "fleet:") {
		return a.local.Stop(e)
	}
	return a.do(e, "stop", "stops after the step under way")
}

func (a fleetActions) Pause(e ops.Entry) (string, error) {
	if !strings.HasPrefix(e.Key, "fleet:") {
		return a.local.Pause(e)
	}
	return a.do(e, "pause", "pauses before its next step")
}

func (a fleetActions) Resume(e ops.Entry) (string, error) {
	if !strings.HasPrefix(e.Key, "fleet:") {
		return a.local.Resume(e)
	}
	return a.do(e, "resume", "resumes")
}
