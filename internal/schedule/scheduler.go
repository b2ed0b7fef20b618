package schedule

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Of is a loop's schedule, every or cronExpr (the flags) overriding the
// loop file's schedule.every and schedule.cron.
func Of(l *spec.Loop, every, cronExpr string) (*Schedule, error) {
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
	return Parse(d, cronExpr)
}

// LogFile is where a scheduled loop's runs write their output.
func LogFile(l *spec.Loop) string {
	return filepath.Join(ops.LogDir(), ops.KeyFor(l.Name, l.Path)+".log")
}

// FireCommand is the shell line a crontab or a systemd timer runs for one
// firing: `looprinter schedule --once` in the loop's folder, its output
// appended to log.
func FireCommand(l *spec.Loop, self, log string) string {
	return fmt.Sprintf("cd %s && %s schedule --once -f %s >> %s 2>&1", ShellQuote(l.Dir), ShellQuote(self),
		ShellQuote(l.Path), ShellQuote(log))
}

// Refusal is the schedule_fire record of a firing refused because a run
// (pid) holds the loop, or the run the scheduler started last is still
// starting.
func Refusal(sch fmt.Stringer, pid int, starting bool) record.Event {
	msg := fmt.Sprintf("schedule (%s) fired but a run (pid %d) still holds the loop: refused, not started twice", sch, pid)
	if starting {
		msg = fmt.Sprintf("schedule (%s) fired but the run it started last (pid %d) is still starting: refused", sch, pid)
	}
	return record.Event{Event: record.ScheduleFire, Status: "refused", Reason: "locked", Pass: record.Bool(false), PID: pid, Message: msg}
}

// Started is the schedule_fire record of a firing that started the loop.
func Started(what string, fresh bool) record.Event {
	msg := fmt.Sprintf("schedule (%s) fired: the loop started", what)
	if fresh {
		msg += " a fresh round (it was DONE)"
	}
	return record.Event{Event: record.ScheduleFire, Status: "started", Pass: record.Bool(true), PID: os.Getpid(), Message: msg}
}

// RunDir is where a scheduled loop's lock is: its worktree's copy while it
// has one, else its own folder.
func RunDir(l *spec.Loop) string {
	if e, err := ops.Load(ops.KeyFor(l.Name, l.Path)); err == nil && e.RunDir != "" && !e.Archived {
		if _, err := os.Stat(e.RunDir); err == nil {
			return e.RunDir
		}
	}
	return l.Dir
}

// RecordRefusal writes a refusal into the loop's records, in a record file
// of the scheduler's own.
func RecordRefusal(dir string, ev record.Event) {
	if w, err := ops.SideRecords(dir, "schedule"); err == nil {
		w.Write(ev)
		w.Close()
	}
}

// Once decides one firing in the foreground: refused while a run holds the
// loop (pid), else it runs, a fresh round when the loop ended DONE.
type Once struct {
	Dir     string
	Locked  bool
	PID     int
	Fresh   bool
	Refusal record.Event
}

// DecideOnce looks at the loop's lock and state for one firing; what names
// the schedule in the records.
func DecideOnce(l *spec.Loop, what string) Once {
	o := Once{Dir: RunDir(l)}
	if live, pid := loopdir.Locked(o.Dir); live {
		o.Locked, o.PID = true, pid
		o.Refusal = Refusal(stringer(what), pid, false)
		return o
	}
	if st, err := loop.LoadState(o.Dir); err == nil && st.Outcome == loop.ReasonDone {
		o.Fresh = true
	}
	return o
}

type stringer string

func (s stringer) String() string { return string(s) }

// Firing is what one firing of the built-in scheduler did.
type Firing struct {
	At      time.Time
	Started bool  // the loop was started, as PID
	PID     int   // the run started, or the run that holds the loop
	Refused bool  // a run held the loop: recorded, not started
	Err     error // the loop could not be started
	Message string
}

// Scheduler is the built-in scheduler of one loop.
type Scheduler struct {
	Loop     *spec.Loop
	Schedule *Schedule
	Log      string   // where the runs write their output
	Self     string   // the looprinter program
	RunFlags []string // passed on to each `schedule --once`
	Count    int      // stop after this many firings (0: never)
	Env      []string // the runs' environment

	// OnNext and OnFire, if set, are told the next firing time and what
	// each firing did, for printing.
	OnNext func(time.Time)
	OnFire func(Firing)
}

// Run fires the loop at each scheduled time until ctx is done or Count
// firings have happened (then it waits for the last run it started). A
// firing while a run holds the loop is refused and recorded as a
// schedule_fire record: a loop never runs twice at once. It returns the
// number of firings.
func (s *Scheduler) Run(ctx context.Context) int {
	l := s.Loop
	key := ops.KeyFor(l.Name, l.Path)
	ops.Update(ops.Entry{Key: key, Name: l.Name, LoopFile: l.Path, Dir: l.Dir, RunDir: l.Dir, RunFile: l.Path}, func(e *ops.Entry) {
		e.SchedulerPID, e.Schedule, e.Log = os.Getpid(), s.Schedule.String(), s.Log
	})
	writers := map[string]*record.Writer{}
	defer func() {
		for _, w := range writers {
			w.Close()
		}
	}()
	var child *ops.Detached
	fires := 0
	next := s.Schedule.Next(time.Now())
	for {
		if s.OnNext != nil {
			s.OnNext(next)
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return fires
		case <-timer.C:
		}
		fires++
		dir := RunDir(l)
		live, pid := loopdir.Locked(dir)
		starting := false
		if child != nil {
			if done, _ := child.Exited(); !done && !live {
				starting, pid = true, child.PID
			}
		}
		f := Firing{At: time.Now(), PID: pid}
		if live || starting {
			w := writers[dir]
			if w == nil {
				if nw, err := ops.SideRecords(dir, "schedule"); err == nil {
					w, writers[dir] = nw, nw
				}
			}
			ev := Refusal(s.Schedule, pid, starting)
			if w != nil {
				w.Write(ev)
			}
			f.Refused, f.Message = true, ev.Message
		} else {
			args := append([]string{"schedule", "--once", "-f", l.Path}, s.RunFlags...)
			env := append(append([]string{}, s.Env...), "LOOPRINTER_SCHEDULE="+s.Schedule.String())
			d, err := ops.SpawnDetached(l.Dir, s.Log, args, env)
			if err != nil {
				f.Err = err
			} else {
				child = d
				ops.Update(ops.Entry{Key: key}, func(e *ops.Entry) { e.LauncherPID = d.PID })
				f.Started, f.PID = true, d.PID
			}
		}
		if s.OnFire != nil {
			s.OnFire(f)
		}
		if s.Count > 0 && fires >= s.Count {
			for child != nil {
				if done, _ := child.Exited(); done {
					break
				}
				select {
				case <-ctx.Done():
					return fires
				case <-time.After(50 * time.Millisecond):
				}
			}
			return fires
		}
		next = s.Schedule.Next(time.Now())
	}
}
