package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/schedule"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

func init() { register(newScheduleCmd) }

type scheduleOptions struct {
	start startOptions // the run flags, passed on to each firing
	once  bool
	count int
	print string
}

func newScheduleCmd(io *IO) *cobra.Command {
	o := &scheduleOptions{}
	cmd := &cobra.Command{
		Use:   "schedule [-f loop.yaml] [--every D | --cron EXPR] [--once | --print crontab|systemd]",
		Short: "Fire a loop on a schedule (built-in scheduler, or crontab/systemd lines)",
		Long: `Run the loop every N minutes or on a cron expression: schedule.every or
schedule.cron in the loop file, or --every / --cron. The built-in scheduler
stays in the foreground (` + "`looprinter start --schedule`" + ` runs it in the background)
and starts the loop at each firing in a session of its own.

A firing while a run still holds the loop is refused by the lock and
recorded as a schedule_fire record (status refused): a loop never runs
twice at once. A firing after the loop ended DONE starts a fresh round
(--fresh); after any other stop it resumes the loop.

--once is one firing, in the foreground: what a crontab line or a systemd
timer calls (exit 75 when refused). --print prints those lines instead.`,
		Example: `  looprinter schedule --every 30m
  looprinter start --schedule                     # the loop file's schedule, in the background
  looprinter schedule --cron "0 3 * * *" --print crontab
  looprinter schedule --print systemd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSchedule(cmd, io, o)
		},
	}
	f := cmd.Flags()
	s := &o.start
	f.StringVarP(&s.file, "file", "f", "loop.yaml", "the loop file")
	f.StringVar(&s.every, "every", "", "fire every DURATION (e.g. 30m)")
	f.StringVar(&s.cron, "cron", "", `fire on a cron expression (e.g. "0 3 * * *")`)
	f.BoolVar(&o.once, "once", false, "fire once now, in the foreground (for crontab and systemd)")
	f.IntVar(&o.count, "count", 0, "stop after this many firings (0: never)")
	f.StringVar(&o.print, "print", "", "print the crontab line or the systemd units instead (crontab | systemd)")
	f.StringVar(&s.backend, "backend", "", "override agent.backend")
	f.StringVar(&s.model, "model", "", "override agent.model")
	f.IntVar(&s.maxIterations, "max-iterations", 0, "override budget.iterations")
	f.IntVar(&s.maxCycles, "max-cycles", 0, "override budget.cycles")
	f.Float64Var(&s.maxCost, "max-cost", 0, "override budget.cost_usd")
	f.StringVar(&s.wall, "wall", "", "override budget.wall")
	return cmd
}

// scheduleOf is the loop's schedule, the flags overriding the file.
func scheduleOf(l *spec.Loop, every, cronExpr string) (*schedule.Schedule, error) {
	var d time.Duration
	if every != "" {
		v, err := time.ParseDuration(every)
		if err != nil {
			return nil, fmt.Errorf("--every %q: want a duration like 30m", every)
		}
		d = v
	}
	if every == "" && cronExpr == "" {
		d, cronExpr = l.Schedule.Every.D(), l.Schedule.Cron
	}
	return schedule.Parse(d, cronExpr)
}

func runSchedule(cmd *cobra.Command, io *IO, o *scheduleOptions) error {
	l, err := loadLoop(o.start.file)
	if err != nil {
		return err
	}
	if o.once {
		return fireOnce(cmd, io, l, o)
	}
	sch, err := scheduleOf(l, o.start.every, o.start.cron)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	key := ops.KeyFor(l.Name, l.Path)
	log := filepath.Join(ops.LogDir(), key+".log")
	fire := fmt.Sprintf("cd %s && %s schedule --once -f %s >> %s 2>&1", schedule.ShellQuote(l.Dir), schedule.ShellQuote(ops.Self()),
		schedule.ShellQuote(l.Path), schedule.ShellQuote(log))
	switch o.print {
	case "":
	case "crontab", "cron":
		line, err := sch.Crontab(fire)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		fmt.Fprintf(io.Out, "# looprinter loop %s, %s (add with `crontab -e`)\n%s\n", l.Name, sch, line)
		return nil
	case "systemd":
		svc, timer, err := sch.Systemd(l.Name, l.Dir, fire)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		fmt.Fprintf(io.Out, "# ~/.config/systemd/user/looprinter-%[1]s.service\n%[2]s\n# ~/.config/systemd/user/looprinter-%[1]s.timer\n%[3]s\n# then: systemctl --user daemon-reload && systemctl --user enable --now looprinter-%[1]s.timer\n", l.Name, svc, timer)
		return nil
	default:
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--print %q: crontab or systemd", o.print)}
	}
	return runScheduler(cmd, io, l, sch, o, log)
}

// runScheduler is the built-in scheduler: it fires the loop at each
// scheduled time, refusing (and recording) a firing while a run holds it.
func runScheduler(cmd *cobra.Command, io *IO, l *spec.Loop, sch *schedule.Schedule, o *scheduleOptions, log string) error {
	ctx := cmd.Context()
	key := ops.KeyFor(l.Name, l.Path)
	ops.Update(ops.Entry{Key: key, Name: l.Name, LoopFile: l.Path, Dir: l.Dir, RunDir: l.Dir, RunFile: l.Path}, func(e *ops.Entry) {
		e.SchedulerPID, e.Schedule, e.Log = os.Getpid(), sch.String(), log
	})
	fmt.Fprintf(io.Out, "scheduler for %s: %s (pid %d)\n", l.Name, sch, os.Getpid())
	writers := map[string]*record.Writer{}
	defer func() {
		for _, w := range writers {
			w.Close()
		}
	}()
	var child *ops.Detached
	fires := 0
	next := sch.Next(time.Now())
	for {
		fmt.Fprintf(io.Out, "next firing: %s\n", next.Format(time.RFC3339))
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			fmt.Fprintln(io.Out, "scheduler stopped")
			return nil
		case <-timer.C:
		}
		fires++
		dir := scheduledRunDir(l, key)
		live, pid := loop.Locked(dir)
		starting := false
		if child != nil {
			if done, _ := child.Exited(); !done && !live {
				starting, pid = true, child.PID
			}
		}
		switch {
		case live || starting:
			w := writers[dir]
			if w == nil {
				if nw, err := ops.SideRecords(dir, "schedule"); err == nil {
					w, writers[dir] = nw, nw
				}
			}
			ev := refusal(sch, pid, starting)
			if w != nil {
				w.Write(ev)
			}
			fmt.Fprintf(io.Out, "%s %s\n", time.Now().Format(time.RFC3339), ev.Message)
		default:
			args := append([]string{"schedule", "--once", "-f", l.Path}, o.start.runFlags()...)
			d, err := ops.SpawnDetached(l.Dir, log, args, append(os.Environ(), "LOOPRINTER_SCHEDULE="+sch.String()))
			if err != nil {
				fmt.Fprintf(io.Out, "%s firing failed: %v\n", time.Now().Format(time.RFC3339), err)
			} else {
				child = d
				ops.Update(ops.Entry{Key: key}, func(e *ops.Entry) { e.LauncherPID = d.PID })
				fmt.Fprintf(io.Out, "%s fired: started the loop (pid %d)\n", time.Now().Format(time.RFC3339), d.PID)
			}
		}
		if o.count > 0 && fires >= o.count {
			if child != nil {
				for {
					if done, _ := child.Exited(); done {
						break
					}
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
			fmt.Fprintf(io.Out, "scheduler done after %d firings\n", fires)
			return nil
		}
		next = sch.Next(time.Now())
	}
}

func refusal(sch fmt.Stringer, pid int, starting bool) record.Event {
	msg := fmt.Sprintf("schedule (%s) fired but a run (pid %d) still holds the loop: refused, not started twice", sch, pid)
	if starting {
		msg = fmt.Sprintf("schedule (%s) fired but the run it started last (pid %d) is still starting: refused", sch, pid)
	}
	return record.Event{Event: record.ScheduleFire, Status: "refused", Reason: "locked", Pass: record.Bool(false), PID: pid, Message: msg}
}

// scheduledRunDir is where a scheduled loop's lock is: its worktree's
// copy while it has one, else its own directory.
func scheduledRunDir(l *spec.Loop, key string) string {
	if e, err := ops.Load(key); err == nil && e.RunDir != "" && !e.Archived {
		if _, err := os.Stat(e.RunDir); err == nil {
			return e.RunDir
		}
	}
	return l.Dir
}

// fireOnce is one firing in the foreground: refused and recorded while a
// run holds the loop (exit 75), else the loop runs, fresh after DONE.
func fireOnce(cmd *cobra.Command, io *IO, l *spec.Loop, o *scheduleOptions) error {
	key := ops.KeyFor(l.Name, l.Path)
	what := os.Getenv("LOOPRINTER_SCHEDULE")
	if what == "" {
		what = "external"
		if sch, err := scheduleOf(l, o.start.every, o.start.cron); err == nil {
			what = sch.String()
		}
	}
	dir := scheduledRunDir(l, key)
	refuse := func(pid int) error {
		ev := refusal(stringer(what), pid, false)
		if w, err := ops.SideRecords(dir, "schedule"); err == nil {
			w.Write(ev)
			w.Close()
		}
		return &ExitError{Code: ExitLocked, Err: errors.New(ev.Message)}
	}
	if live, pid := loop.Locked(dir); live {
		return refuse(pid)
	}
	fresh := false
	if st, err := loop.LoadState(dir); err == nil && st.Outcome == loop.ReasonDone {
		fresh = true
	}
	extraHooks = append(extraHooks, func(ev record.Event, emit func(record.Event)) error {
		if ev.Event == record.LoopStart {
			msg := fmt.Sprintf("schedule (%s) fired: the loop started", what)
			if fresh {
				msg += " a fresh round (it was DONE)"
			}
			emit(record.Event{Event: record.ScheduleFire, Status: "started", Pass: record.Bool(true), PID: os.Getpid(), Message: msg})
		}
		return nil
	})
	s := o.start
	ro := &runOptions{file: l.Path, fresh: fresh || s.fresh, backend: s.backend, model: s.model, maxIterations: s.maxIterations,
		maxCycles: s.maxCycles, maxCost: s.maxCost, wall: s.wall}
	err := runRun(cmd, io, ro)
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code == ExitLocked {
		_, pid := loop.Locked(dir)
		return refuse(pid)
	}
	return err
}

type stringer string

func (s stringer) String() string { return string(s) }
