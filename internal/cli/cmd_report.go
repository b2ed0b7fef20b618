package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/notify"
	"github.com/looprinter/looprinter/internal/report"
	"github.com/looprinter/looprinter/internal/schedule"
)

func init() { register(newReportCmd) }

func newReportCmd(io *IO) *cobra.Command {
	var sinceText string
	var asJSON, asMarkdown, digest, once bool
	var file string
	cmd := &cobra.Command{
		Use:   "report [--since 12h|7d] [--json|--markdown] [--digest [--once] -f loop.yaml]",
		Short: "One page over every loop on this machine: how each ended, what needs a human first",
		Long: `Print one page over every loop this machine ran in the period (and those
running now): outcome and exit code, both gates, tasks passed, branch and
diffstat, spend, rollbacks, landings, usage-limit failovers, violations, and
at the top what needs a human first (crashed, BLOCKED, NO PROGRESS,
violations, NOT VERIFIED, budgets). The figures are those of ` + "`status`" + `.

--digest sends the page (markdown, over the last day) through the notify
channels of the loop file given with -f, at each time of its notify.digest
cron expression, staying in the foreground; with --once it sends it now
and exits (what a crontab line calls).`,
		Example: `  looprinter report
  looprinter report --since 24h --markdown
  looprinter report --since 7d
  looprinter report --digest -f loop.yaml            # every day at notify.digest
  looprinter report --digest --once -f loop.yaml     # now`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asMarkdown {
				return &ExitError{Code: ExitUsage, Err: errors.New("--json and --markdown: choose one")}
			}
			since, err := report.ParseSince(sinceText)
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			if digest {
				return runDigest(cmd, io, file, once)
			}
			now := time.Now()
			r, err := report.Build(now.Add(-since), now)
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			case asMarkdown:
				fmt.Fprint(io.Out, r.Markdown())
			default:
				fmt.Fprint(io.Out, r.Text())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&sinceText, "since", "12h", "the period: loops that ran in the last PERIOD (12h, 90m, 7d, 2w)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&asMarkdown, "markdown", false, "print markdown")
	f.BoolVar(&digest, "digest", false, "send the page through the loop file's notify channels at notify.digest")
	f.BoolVar(&once, "once", false, "with --digest: send it now, once")
	f.StringVarP(&file, "file", "f", "loop.yaml", "with --digest: the loop file whose notify settings to use")
	return cmd
}

// runDigest sends the last day's report through the loop file's notify
// channels, now (once) or at each time of notify.digest.
func runDigest(cmd *cobra.Command, io *IO, file string, once bool) error {
	l, err := loadLoop(file)
	if err != nil {
		return err
	}
	n := notify.New(l)
	if n == nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s has no notify.command or notify.webhook to send the digest through", l.Path)}
	}
	send := func() error {
		now := time.Now()
		r, err := report.Build(now.Add(-24*time.Hour), now)
		if err != nil {
			return err
		}
		m := notify.Message{Loop: l.Name, Event: "digest", Status: fmt.Sprintf("%d loops, %d need a human", len(r.Loops), len(r.NeedsHuman)),
			Dir: l.Dir, Time: now.UTC(), Text: r.Markdown()}
		for _, ev := range n.Send(m) {
			if ev.Error != "" {
				fmt.Fprintf(io.Err, "looprinter: digest: %s\n", ev.Error)
			}
		}
		fmt.Fprintf(io.Err, "looprinter: digest sent (%d loops)\n", len(r.Loops))
		return nil
	}
	if once {
		return send()
	}
	if l.Notify.Digest == "" {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s has no notify.digest (a cron expression such as \"0 7 * * *\")", l.Path)}
	}
	sch, err := schedule.Parse(0, l.Notify.Digest)
	if err != nil {
		return &ExitError{Code: ExitBadLoopFile, Err: fmt.Errorf("notify.digest: %w", err)}
	}
	return digestLoop(cmd, io, sch, send)
}

func digestLoop(cmd *cobra.Command, io *IO, sch *schedule.Schedule, send func() error) error {
	for {
		next := sch.Next(time.Now())
		fmt.Fprintf(io.Err, "looprinter: next digest at %s\n", next.Local().Format("2006-01-02 15:04"))
		select {
		case <-cmd.Context().Done():
			return nil
		case <-time.After(time.Until(next)):
		}
		if err := send(); err != nil {
			fmt.Fprintf(io.Err, "looprinter: digest: %v\n", err)
		}
	}
}
