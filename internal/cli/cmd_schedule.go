package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/schedule"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

func init() { register(newScheduleCmd) }

type scheduleOptions struct {
	start startOptions // the run flags, passed on to each firing
	once  bool
	count int
	print string
	// The fleet: a Temporal Schedule instead of a scheduler here.
	fleet                 bool
	list                  bool
	remove                string
	remote, branch, queue string
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
timer calls (exit 75 when refused). --print prints those lines instead.

--fleet makes a Temporal Schedule instead (the fleet build, docs/fleet.md):
each firing starts the loop's workflow on the fleet, and a firing while the
loop's last run still runs is skipped (overlap policy skip). --fleet --list
lists the fleet's schedules; --fleet --remove NAME removes one.`,
		Example: `  looprinter schedule --every 30m
  looprinter start --schedule                     # the loop file's schedule, in the background
  looprinter schedule --cron "0 3 * * *" --print crontab
  looprinter schedule --print systemd
  looprinter schedule --fleet --every 6h          # a Temporal Schedule; the branch is pushed
  looprinter schedule --fleet --list`,
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
	f.BoolVar(&o.fleet, "fleet", false, "make a Temporal Schedule that starts the loop on the fleet (the fleet build)")
	f.BoolVar(&o.list, "list", false, "with --fleet: list the fleet's schedules")
	f.StringVar(&o.remove, "remove", "", "with --fleet: remove the schedule of the fleet loop NAME")
	f.StringVar(&o.remote, "remote", "", "with --fleet: the git remote workers fetch and push (default: origin)")
	f.StringVar(&o.branch, "branch", "", "with --fleet: the branch that holds the work (default: the current branch)")
	f.StringVar(&o.queue, "task-queue", "looprinter", "with --fleet: the workers' Temporal task queue")
	return cmd
}

func runSchedule(cmd *cobra.Command, io *IO, o *scheduleOptions) error {
	if o.fleet {
		return runFleetSchedule(cmd, io, o)
	}
	if o.list || o.remove != "" {
		return &ExitError{Code: ExitUsage, Err: errors.New("--list and --remove are for fleet schedules (--fleet); `looprinter list` shows local schedulers and `looprinter stop NAME` stops one")}
	}
	if err := checkBudgetFlags(o.start.maxIterations, o.start.maxCycles, o.start.maxCost); err != nil {
		return err
	}
	l, err := loadLoop(o.start.file)
	if err != nil {
		return err
	}
	if o.once {
		return fireOnce(cmd, io, l, o)
	}
	sch, err := schedule.Of(l, o.start.every, o.start.cron)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	log := schedule.LogFile(l)
	fire := schedule.FireCommand(l, ops.Self(), log)
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
	fmt.Fprintf(io.Out, "scheduler for %s: %s (pid %d)\n", l.Name, sch, os.Getpid())
	s := &schedule.Scheduler{Loop: l, Schedule: sch, Log: log, RunFlags: o.start.runFlags(), Count: o.count, Env: os.Environ(),
		OnNext: func(t time.Time) { fmt.Fprintf(io.Out, "next firing: %s\n", t.Format(time.RFC3339)) },
		OnFire: func(f schedule.Firing) {
			at := f.At.Format(time.RFC3339)
			switch {
			case f.Err != nil:
				fmt.Fprintf(io.Out, "%s firing failed: %v\n", at, f.Err)
			case f.Refused:
				fmt.Fprintf(io.Out, "%s %s\n", at, f.Message)
			default:
				fmt.Fprintf(io.Out, "%s fired: started the loop (pid %d)\n", at, f.PID)
			}
		}}
	fires := s.Run(cmd.Context())
	if o.count > 0 && fires >= o.count {
		fmt.Fprintf(io.Out, "scheduler done after %d firings\n", fires)
	} else {
		fmt.Fprintln(io.Out, "scheduler stopped")
	}
	return nil
}

// fireOnce is one firing in the foreground: refused and recorded while a
// run holds the loop (exit 75), else the loop runs, fresh after DONE.
func fireOnce(cmd *cobra.Command, io *IO, l *spec.Loop, o *scheduleOptions) error {
	what := os.Getenv("LOOPRINTER_SCHEDULE")
	if what == "" {
		what = "external"
		if sch, err := schedule.Of(l, o.start.every, o.start.cron); err == nil {
			what = sch.String()
		}
	}
	once := schedule.DecideOnce(l, what)
	if once.Locked {
		schedule.RecordRefusal(once.Dir, once.Refusal)
		return &ExitError{Code: ExitLocked, Err: errors.New(once.Refusal.Message)}
	}
	extraHooks = append(extraHooks, func(ev record.Event, emit func(record.Event)) error {
		if ev.Event == record.LoopStart {
			emit(schedule.Started(what, once.Fresh))
		}
		return nil
	})
	s := o.start
	ro := &runOptions{file: l.Path, fresh: once.Fresh || s.fresh, backend: s.backend, model: s.model, maxIterations: s.maxIterations,
		maxCycles: s.maxCycles, maxCost: s.maxCost, wall: s.wall}
	err := runRun(cmd, io, ro)
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code == ExitLocked {
		again := schedule.DecideOnce(l, what)
		ev := schedule.Refusal(stringer(what), again.PID, false)
		schedule.RecordRefusal(again.Dir, ev)
		return &ExitError{Code: ExitLocked, Err: errors.New(ev.Message)}
	}
	return err
}

type stringer string

func (s stringer) String() string { return string(s) }

// runFleetSchedule is schedule --fleet: make, list or remove a loop's
// Temporal Schedule.
func runFleetSchedule(cmd *cobra.Command, io *IO, o *scheduleOptions) error {
	if o.once || o.print != "" || o.count != 0 {
		return &ExitError{Code: ExitUsage, Err: errors.New("--fleet makes a Temporal Schedule: --once, --print and --count are for local schedules")}
	}
	if st := o.start; st.backend != "" || st.model != "" || st.maxIterations != 0 || st.maxCycles != 0 || st.maxCost != 0 || st.wall != "" {
		return &ExitError{Code: ExitUsage, Err: errors.New("--fleet schedules the loop file as it is: put --backend, --model and budget overrides in the file")}
	}
	r, err := remote()
	if err != nil {
		return &ExitError{Code: ExitBlocked, Err: err}
	}
	if r == nil {
		if Remote == nil {
			return &ExitError{Code: ExitUsage, Err: errors.New("this looprinter is built without the fleet; build it with: go install -tags fleet ./cmd/looprinter (docs/fleet.md)")}
		}
		return &ExitError{Code: ExitUsage, Err: errors.New("no Temporal frontend is configured: set LOOPRINTER_TEMPORAL (and LOOPRINTER_NAMESPACE), or run `looprinter-fleet-dev fleet dev` (docs/fleet.md)")}
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), remoteTimeout)
	defer cancel()
	switch {
	case o.list:
		ss, err := r.Schedules(ctx)
		if err != nil {
			return &ExitError{Code: ExitBlocked, Err: err}
		}
		if len(ss) == 0 {
			fmt.Fprintf(io.Err, "no fleet schedules (%s)\n", r.Where())
			return nil
		}
		for _, s := range ss {
			next := "-"
			if len(s.Next) > 0 {
				next = s.Next[0].Local().Format(time.DateTime)
			}
			state := ""
			if s.Paused {
				state = ", paused"
			}
			if len(s.Running) > 0 {
				state += ", running " + s.Running[0]
			}
			fmt.Fprintf(io.Out, "%s  %s, next %s; %d runs started, %d firings skipped (still running)%s\n",
				termtext.Line(s.Loop), termtext.Line(s.When), next, s.Actions, s.Skipped, termtext.Line(state))
		}
		return nil
	case o.remove != "":
		if err := r.Unschedule(ctx, o.remove); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		fmt.Fprintf(io.Err, "removed the fleet schedule of %s; a run it started goes on (`looprinter stop %s` stops it)\n", o.remove, o.remove)
		return nil
	}
	msg, err := r.Schedule(ctx, RemoteScheduleRequest{File: o.start.file, Every: o.start.every, Cron: o.start.cron, Remote: o.remote, Branch: o.branch, TaskQueue: o.queue})
	if err != nil {
		return err
	}
	fmt.Fprintln(io.Out, msg)
	return nil
}
