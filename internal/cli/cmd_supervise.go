package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/supervise"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

func init() { register(newSuperviseCmd) }

type superviseOptions struct {
	file      string
	once      bool
	interval  time.Duration
	pauseWait time.Duration
}

func newSuperviseCmd(io *IO) *cobra.Command {
	o := &superviseOptions{}
	cmd := &cobra.Command{
		Use:   "supervise [NAME...]",
		Short: "Watch loops and let a supervising agent fix a stuck loop's harness",
		Long: `The outer loop, automated. supervise watches the named loops (default: every
loop looprinter knows that is running, or the one here) and steps in when a
loop repeats the same failure, stalls on the objective gap, or keeps failing
the cycle gate after all tasks pass. It then runs a supervising agent
(agents.supervisor in the loop file: its own backend and model) with the
records and the loop file, pausing a running loop between agent runs while
it works.

The agent runs confined and edits a copy of the loop file. Rewritten prompts
and tighter limits (lower budgets and caps, more protect entries) are
accepted and written to the loop file (the engine picks them up at its next
step, recorded as spec_changed). Any other change is REFUSED (default deny)
and recorded, and the loop file stays as it was: adding, deleting or
rewording a check, setup, an agent's command, model or env, raising a budget,
shrinking protect, editing a check script. Each decision is a supervisor
record in the loop's records.`,
		Example: `  looprinter supervise               # every running loop, until Ctrl-C
  looprinter supervise fix-tests --once`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSupervise(cmd.Context(), io, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "the loop file")
	f.BoolVar(&o.once, "once", false, "look once, act where needed, and exit")
	f.DurationVar(&o.interval, "interval", 10*time.Second, "how often to look at the loops")
	f.DurationVar(&o.pauseWait, "pause-wait", 30*time.Minute, "how long to wait for a running loop to pause between agent runs")
	return cmd
}

func superviseTargets(args []string, file string) ([]ops.Entry, error) {
	if len(args) == 0 && file == "" {
		if _, err := os.Stat("loop.yaml"); err != nil {
			entries, err := ops.Entries()
			var live []ops.Entry
			for _, e := range entries {
				if st := ops.Inspect(e).State; st == ops.StateRunning || st == ops.StatePaused || st == ops.StateWaiting {
					live = append(live, e)
				}
			}
			return live, err
		}
	}
	if len(args) == 0 {
		e, err := resolveLoop(nil, file)
		return []ops.Entry{e}, err
	}
	var out []ops.Entry
	for _, a := range args {
		e, err := resolveLoop([]string{a}, "")
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func runSupervise(ctx context.Context, io *IO, o *superviseOptions, args []string) error {
	for {
		targets, err := superviseTargets(args, o.file)
		if err != nil {
			return err
		}
		for _, e := range targets {
			if ctx.Err() != nil {
				return nil
			}
			superviseOne(ctx, io, o, e)
		}
		if o.once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
}

func superviseOne(ctx context.Context, io *IO, o *superviseOptions, e ops.Entry) {
	if f, err := ops.Load(e.Key); err == nil {
		e = f
	}
	dir := runDir(e)
	evs, _ := ops.ReadAll(dir)
	mem := supervise.LoadMemory(dir)
	trig, ok := supervise.Detect(evs, mem.Handled)
	if !ok {
		return
	}
	file := e.RunFile
	if file == "" {
		file = e.LoopFile
	}
	fmt.Fprintf(io.Out, "supervisor for %s: %s — %s\n", e.Name, trig.Kind, firstLineOf(trig.Detail))
	w, err := ops.SideRecords(dir, "supervisor")
	if err != nil {
		fmt.Fprintf(io.Err, "looprinter: %s: %v\n", e.Name, err)
		return
	}
	defer w.Close()
	// A running loop is paused between agent runs while the supervisor works.
	pausedByUs := false
	if live, _ := loopdir.Locked(dir); live {
		if _, err := os.Stat(loopdir.Dir(dir).Pause()); os.IsNotExist(err) {
			os.WriteFile(loopdir.Dir(dir).Pause(), []byte("paused by looprinter supervise\n"), 0o644)
			pausedByUs = true
		}
		deadline := time.Now().Add(o.pauseWait)
		for {
			live, _ := loopdir.Locked(dir)
			if !live || ops.PausedNow(dir) {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				if pausedByUs {
					os.Remove(loopdir.Dir(dir).Pause())
				}
				fmt.Fprintf(io.Out, "supervisor for %s: the loop did not pause within %s; will look again\n", e.Name, o.pauseWait)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	s := &supervise.Supervisor{Dir: dir, File: file, Records: func(ev record.Event) { w.Write(ev) }}
	r := s.Run(ctx, trig, evs)
	if pausedByUs {
		os.Remove(loopdir.Dir(dir).Pause())
	}
	mem.Handled = latest(evs, trig.At)
	mem.Runs++
	mem.Save(dir)
	switch r.Status {
	case "accepted":
		fmt.Fprintf(io.Out, "supervisor for %s: change accepted:\n", e.Name)
		for _, c := range r.Changes {
			fmt.Fprintf(io.Out, "  %s\n", c)
		}
	case "refused":
		fmt.Fprintf(io.Out, "supervisor for %s: change REFUSED, the loop file was restored:\n", e.Name)
		for _, c := range r.Refused {
			fmt.Fprintf(io.Out, "  %s\n", c)
		}
	case "unchanged":
		fmt.Fprintf(io.Out, "supervisor for %s: no change\n", e.Name)
	default:
		fmt.Fprintf(io.Out, "supervisor for %s: failed: %s\n", e.Name, r.Error)
	}
}

func latest(evs []record.Event, at time.Time) time.Time {
	for _, e := range evs {
		if e.TS.After(at) {
			at = e.TS
		}
	}
	return at
}
