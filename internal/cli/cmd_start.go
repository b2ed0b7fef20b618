package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/schedule"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
)

func init() { register(newStartCmd) }

type startOptions struct {
	file          string
	schedule      bool
	every         string
	cron          string
	fresh         bool
	backend       string
	model         string
	maxIterations int
	maxCycles     int
	maxCost       float64
	wall          string
	wait          time.Duration
}

func newStartCmd(io *IO) *cobra.Command {
	o := &startOptions{}
	cmd := &cobra.Command{
		Use:   "start [NAME | -f loop.yaml] [flags]",
		Short: "Run the loop in the background and return at once",
		Long: `Start the loop in the background: a ` + "`looprinter run`" + ` in a session of its own,
so it survives the terminal closing. It returns as soon as the run holds the
loop, and prints the loop's name on standard output.

The run's output goes to a log file (see ` + "`looprinter status NAME`" + `); its records
are in the loop's working-records/ as always. Follow it with
` + "`looprinter logs -F NAME`" + ` or ` + "`looprinter watch`" + `, end it with ` + "`looprinter stop NAME`" + `.

With --schedule (or --every / --cron) start runs the built-in scheduler in
the background instead, which starts the loop at each firing.`,
		Example: `  looprinter start
  looprinter start fix-tests       # a loop that ran before, by name
  looprinter start -f loops/fix-tests.yaml --max-iterations 10
  looprinter start --every 30m     # run the loop every 30 minutes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				// A loop by name, as every other command takes it.
				if cmd.Flags().Changed("file") {
					return &ExitError{Code: ExitUsage, Err: fmt.Errorf("give the loop by NAME or by -f, not both")}
				}
				e, err := resolveLoop(args, "")
				if err != nil {
					return err
				}
				o.file = e.LoopFile
			}
			return runStart(io, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "loop.yaml", "the loop file")
	f.BoolVar(&o.schedule, "schedule", false, "run the loop file's schedule in the background instead of one run")
	f.StringVar(&o.every, "every", "", "with the scheduler: fire every DURATION (e.g. 30m)")
	f.StringVar(&o.cron, "cron", "", `with the scheduler: fire on a cron expression (e.g. "0 3 * * *")`)
	f.BoolVar(&o.fresh, "fresh", false, "start the counters again")
	f.StringVar(&o.backend, "backend", "", "override agent.backend")
	f.StringVar(&o.model, "model", "", "override agent.model")
	f.IntVar(&o.maxIterations, "max-iterations", 0, "override budget.iterations")
	f.IntVar(&o.maxCycles, "max-cycles", 0, "override budget.cycles")
	f.Float64Var(&o.maxCost, "max-cost", 0, "override budget.cost_usd")
	f.StringVar(&o.wall, "wall", "", "override budget.wall")
	f.DurationVar(&o.wait, "wait", 15*time.Second, "how long to wait for the run to hold the loop before returning")
	return cmd
}

func runStart(io *IO, o *startOptions) error {
	if err := checkBudgetFlags(o.maxIterations, o.maxCycles, o.maxCost); err != nil {
		return err
	}
	l, err := loadLoop(o.file)
	if err != nil {
		return err
	}
	key := ops.KeyFor(l.Name, l.Path)
	prev, _ := ops.Load(key)
	dir := l.Dir
	if prev.RunDir != "" && !prev.Archived {
		dir = prev.RunDir
	}
	if live, pid := loopdir.Locked(dir); live {
		return &ExitError{Code: ExitLocked, Err: fmt.Errorf("%s is already running (pid %d); `looprinter stop %s` ends it", l.Name, pid, l.Name)}
	}
	if prev.LauncherPID != 0 && ops.Alive(prev.LauncherPID) {
		return &ExitError{Code: ExitLocked, Err: fmt.Errorf("%s is already starting (pid %d)", l.Name, prev.LauncherPID)}
	}
	scheduled := o.schedule || o.every != "" || o.cron != ""
	if scheduled && prev.SchedulerPID != 0 && ops.IsScheduler(prev.SchedulerPID) {
		return &ExitError{Code: ExitLocked, Err: fmt.Errorf("a scheduler (pid %d) already runs %s; `looprinter stop %s` ends it", prev.SchedulerPID, l.Name, l.Name)}
	}
	log := filepath.Join(ops.LogDir(), key+".log")
	var args []string
	schedName := ""
	if scheduled {
		args = []string{"schedule", "-f", l.Path}
		if o.every != "" {
			args = append(args, "--every", o.every)
		}
		if o.cron != "" {
			args = append(args, "--cron", o.cron)
		}
		sch, err := schedule.Of(l, o.every, o.cron)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		schedName = sch.String()
	} else {
		args = []string{"run", "-f", l.Path}
	}
	args = append(args, o.runFlags()...)
	entry, err := ops.Update(ops.Entry{Key: key, Name: l.Name, LoopFile: l.Path, Dir: l.Dir, RunDir: l.Dir, RunFile: l.Path}, func(e *ops.Entry) {
		e.Log = log
		if e.RunDir == "" {
			e.RunDir, e.RunFile = l.Dir, l.Path
		}
	})
	if err != nil {
		return fmt.Errorf("cannot register the loop in %s: %w", ops.StateDir(), err)
	}
	d, err := ops.SpawnDetached(l.Dir, log, args, os.Environ())
	if err != nil {
		return err
	}
	entry, _ = ops.Update(entry, func(e *ops.Entry) {
		if scheduled {
			e.SchedulerPID, e.Schedule = d.PID, schedName
		} else {
			e.LauncherPID = d.PID
		}
	})
	if scheduled {
		fmt.Fprintln(io.Out, l.Name)
		fmt.Fprintf(io.Err, "scheduler for %s started (pid %d, %s); log %s\n", l.Name, d.PID, schedName, log)
		return nil
	}
	// Wait until the run holds the loop (it may first make a worktree), or
	// has already ended.
	deadline := time.Now().Add(o.wait)
	for {
		if e, err := ops.Load(key); err == nil {
			entry = e
		}
		if live, pid := loopdir.Locked(runDir(entry)); live && pid == d.PID {
			// ... and has saved its state for this run, so that status
			// right after start shows the run, not the loop before it.
			if st, err := loop.LoadState(runDir(entry)); err == nil && st.PID == d.PID {
				break
			}
		}
		if done, werr := d.Exited(); done {
			code := 0
			var ee *exec.ExitError
			if errors.As(werr, &ee) {
				code = ee.ExitCode()
			}
			st := ops.Inspect(entry)
			if code == 0 || (st.Stopped() && st.Loop != nil && st.Loop.Run != "" && code == st.Loop.ExitCode) {
				// It ran to its end already (a short loop).
				fmt.Fprintln(io.Out, l.Name)
				fmt.Fprintf(io.Err, "%s ran and stopped at once (exit %d): %s\nlog: %s\n", l.Name, code, st.Line, log)
				return nil
			}
			return &ExitError{Code: code, Err: fmt.Errorf("%s did not start (exit %d):\n%s", l.Name, code, tailFile(log, 10))}
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(io.Out, l.Name)
			fmt.Fprintf(io.Err, "%s was started (pid %d) but does not hold the loop yet; see %s\n", l.Name, d.PID, log)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintln(io.Out, l.Name)
	where := ""
	if entry.Worktree != "" {
		where = fmt.Sprintf(" in worktree %s (branch %s)", entry.Worktree, entry.Branch)
	}
	fmt.Fprintf(io.Err, "started %s (pid %d)%s\n  log:    %s\n  status: looprinter status %s\n  follow: looprinter logs -F %s\n  stop:   looprinter stop %s\n",
		l.Name, d.PID, where, log, l.Name, l.Name, l.Name)
	return nil
}

func (o *startOptions) runFlags() []string {
	var a []string
	if o.fresh {
		a = append(a, "--fresh")
	}
	if o.backend != "" {
		a = append(a, "--backend", o.backend)
	}
	if o.model != "" {
		a = append(a, "--model", o.model)
	}
	if o.maxIterations > 0 {
		a = append(a, "--max-iterations", strconv.Itoa(o.maxIterations))
	}
	if o.maxCycles > 0 {
		a = append(a, "--max-cycles", strconv.Itoa(o.maxCycles))
	}
	if o.maxCost > 0 {
		a = append(a, "--max-cost", strconv.FormatFloat(o.maxCost, 'f', -1, 64))
	}
	if o.wall != "" {
		a = append(a, "--wall", o.wall)
	}
	return a
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
