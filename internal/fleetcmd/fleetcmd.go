// Package fleetcmd is looprinter's fleet commands (worker, submit, fleet
// status/list/pause/resume/stop/cost/wait) and the fleet the ordinary
// commands reach (remote.go, cli.Remote), kept out of the default build
// because the Temporal SDK about doubles the binary: they are in
// `go install -tags fleet ./cmd/looprinter` and in looprinter-fleet-dev.
package fleetcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/looprinter/looprinter/fleet"
	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/gitops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
)

func init() {
	if fleet.IsStepProcess() {
		// A worker started this process to run one step (fleet.Worker.Exec).
		os.Exit(fleet.StepProcess(os.Stdin, os.Stdout, cli.RunHooks))
	}
	cli.Fleet.Worker, cli.Fleet.Submit, cli.Fleet.Group = newWorkerCmd, newSubmitCmd, newFleetCmd
}

type (
	IO        = cli.IO
	ExitError = cli.ExitError
)

const (
	ExitUsage   = cli.ExitUsage
	ExitBlocked = cli.ExitBlocked
)

var loadLoop = cli.LoadLoop

// connFlags are the flags that say how to reach Temporal.
type connFlags struct {
	c fleet.Conn
}

func (f *connFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.c.HostPort, "temporal", "", "the Temporal frontend, `HOST:PORT` (default: $LOOPRINTER_TEMPORAL, else the running fleet dev server, else "+fleet.DefaultHostPort+")")
	fl.StringVar(&f.c.Namespace, "namespace", "", "the Temporal `NAMESPACE` (default: $LOOPRINTER_NAMESPACE, else the fleet dev server's, else default)")
	fl.BoolVar(&f.c.TLS, "tls", false, "connect with TLS (implied by the other --tls options and --api-key)")
	fl.StringVar(&f.c.TLSCert, "tls-cert", "", "client certificate (PEM) for mutual TLS")
	fl.StringVar(&f.c.TLSKey, "tls-key", "", "the client certificate's key (PEM)")
	fl.StringVar(&f.c.TLSCA, "tls-ca", "", "the CA certificate (PEM) the server's certificate is checked against (default: the system's)")
	fl.StringVar(&f.c.TLSServerName, "tls-server-name", "", "the server name expected in its certificate")
	fl.StringVar(&f.c.APIKey, "api-key", "", "a Temporal Cloud API key (default: $TEMPORAL_API_KEY)")
}

// DevAddressPath is where `looprinter fleet dev` writes its server's address
// and namespace, for the other fleet commands to find.
func DevAddressPath() string { return filepath.Join(loopdir.StateRoot(), "fleet", "dev-address") }

func (f *connFlags) dial() (client.Client, error) {
	c, _ := f.resolve()
	cl, err := fleet.Dial(c)
	if err != nil {
		return nil, &ExitError{Code: ExitBlocked, Err: err}
	}
	f.c = c
	return cl, nil
}

// resolve fills in what the flags leave out: $LOOPRINTER_TEMPORAL,
// $LOOPRINTER_NAMESPACE, $TEMPORAL_API_KEY, $LOOPRINTER_TEMPORAL_TLS*, else
// the running `fleet dev` server. ok says whether a frontend was named
// (flag, environment or dev server) rather than the default one assumed.
func (f *connFlags) resolve() (fleet.Conn, bool) {
	c := f.c
	var devHost, devNS string
	if b, err := os.ReadFile(DevAddressPath()); err == nil {
		if fs := strings.Fields(string(b)); len(fs) == 2 {
			devHost, devNS = fs[0], fs[1]
		}
	}
	if c.HostPort == "" {
		c.HostPort = os.Getenv("LOOPRINTER_TEMPORAL")
	}
	fromDev := false
	if c.HostPort == "" && devHost != "" {
		c.HostPort, fromDev = devHost, true
	}
	if c.Namespace == "" {
		c.Namespace = os.Getenv("LOOPRINTER_NAMESPACE")
	}
	if c.Namespace == "" && fromDev {
		c.Namespace = devNS
	}
	if c.APIKey == "" {
		c.APIKey = os.Getenv("TEMPORAL_API_KEY")
	}
	for _, v := range []struct {
		to  *string
		env string
	}{{&c.TLSCert, "LOOPRINTER_TEMPORAL_TLS_CERT"}, {&c.TLSKey, "LOOPRINTER_TEMPORAL_TLS_KEY"}, {&c.TLSCA, "LOOPRINTER_TEMPORAL_TLS_CA"},
		{&c.TLSServerName, "LOOPRINTER_TEMPORAL_TLS_SERVER_NAME"}} {
		if *v.to == "" {
			*v.to = os.Getenv(v.env)
		}
	}
	if t := os.Getenv("LOOPRINTER_TEMPORAL_TLS"); t != "" && t != "0" && t != "false" {
		c.TLS = true
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	return c, c.HostPort != ""
}

func newWorkerCmd(io *IO) *cobra.Command {
	var conn connFlags
	var queue, dir, identity string
	var slots int
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run fleet loops' steps on this machine (a Temporal worker)",
		Long: `Connect to a Temporal frontend and run the steps of fleet loops: each step
fetches the loop's branch into this worker's work folder, runs one engine
step exactly as ` + "`run`" + ` would (same agents, sandbox, gates and budgets), commits,
and pushes the branch. Runs until interrupted. docs/fleet.md has the design.`,
		Example: `  looprinter worker                                  # against the fleet dev server or 127.0.0.1:7233
  looprinter worker --temporal temporal.internal:7233 --namespace loops --slots 4
  looprinter worker --temporal NS.ACCT.tmprl.cloud:7233 --namespace NS.ACCT --api-key "$KEY"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if slots < 1 {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--slots: want 1 or more")}
			}
			if identity == "" {
				h, _ := os.Hostname()
				identity = h
			}
			if dir == "" {
				dir = filepath.Join(loopdir.StateRoot(), "fleet", "work", identity)
			}
			c, err := conn.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			w := &fleet.Worker{Dir: dir, Identity: identity, Slots: slots, Hooks: cli.RunHooks}
			if self, err := os.Executable(); err == nil {
				w.Exec = self // each step in a process of its own
			}
			fmt.Fprintf(io.Err, "looprinter worker %s: task queue %s, %d slot(s), work folder %s (pid %d)\n", identity, queue, slots, dir, os.Getpid())
			if err := fleet.RunWorker(cmd.Context(), c, queue, w); err != nil {
				return &ExitError{Code: ExitBlocked, Err: err}
			}
			return nil
		},
	}
	conn.add(cmd)
	cmd.Flags().StringVar(&queue, "task-queue", "looprinter", "the Temporal task queue to serve")
	cmd.Flags().IntVar(&slots, "slots", 1, "steps run at once")
	cmd.Flags().StringVar(&dir, "dir", "", "work folder, one checkout per loop (default: the state folder's fleet/work/IDENTITY)")
	cmd.Flags().StringVar(&identity, "identity", "", "this worker's name (default: the host name); two workers on one machine need two")
	return cmd
}

func newSubmitCmd(io *IO) *cobra.Command {
	var conn connFlags
	var file, queue, remote, branch string
	var wait, asJSON bool
	var heartbeat time.Duration
	cmd := &cobra.Command{
		Use:   "submit [-f loop.yaml]",
		Short: "Start a loop on the fleet (a Temporal workflow)",
		Long: `Start the loop as a Temporal workflow, workflow id looprinter-NAME. The loop
file goes into the workflow's input; its work tree is the git branch named
by --branch on --remote (by default the current branch and its origin),
which workers fetch and push step by step. Push the branch before you
submit. With --wait, wait for the end and exit as ` + "`run`" + ` would.`,
		Example: `  git push origin HEAD && looprinter submit
  looprinter submit -f loops/fix.yaml --remote git@host:team/app.git --branch loop/fix --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := loadLoop(file); err != nil {
				return err // an invalid loop file says so before any connection
			}
			c, err := conn.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			in, queue, err := loopInput(cmd.Context(), c, conn.c, loopRequest{file, remote, branch, queue, heartbeat})
			if err != nil {
				return err
			}
			run, err := fleet.Submit(cmd.Context(), c, queue, *in)
			if err != nil {
				return &ExitError{Code: ExitBlocked, Err: err}
			}
			fmt.Fprintf(io.Err, "submitted %s: workflow %s, branch %s on %s\n", in.Name, run.GetID(), in.Branch, in.Remote)
			if !in.SearchAttributes {
				fmt.Fprintf(io.Err, "(the namespace has no looprinter search attributes: list asks each running loop; docs/fleet.md says how to add them)\n")
			}
			if !wait {
				return nil
			}
			r, err := fleet.Wait(cmd.Context(), c, in.Name)
			if err != nil {
				return &ExitError{Code: ExitBlocked, Err: err}
			}
			return reportFleet(io, r, asJSON)
		},
	}
	conn.add(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file (default: ./loop.yaml)")
	cmd.Flags().StringVar(&queue, "task-queue", "looprinter", "the Temporal task queue of the workers")
	cmd.Flags().StringVar(&remote, "remote", "", "the git remote workers fetch and push (default: the repository's origin)")
	cmd.Flags().StringVar(&branch, "branch", "", "the branch that holds the work (default: the current branch)")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat-timeout", fleet.DefaultHeartbeatTimeout, "a step whose worker is silent this long runs again on another worker")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the loop to end; exit with its exit code")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --wait: print the result as JSON")
	return cmd
}

// loopRequest is what a submission names: the loop file, the remote and
// branch that hold its work (empty: origin and the current branch), the
// task queue (empty: looprinter) and the heartbeat timeout.
type loopRequest struct {
	file, remote, branch, queue string
	heartbeat                   time.Duration
}

// loopInput is the workflow input for a loop file (submit and schedule):
// the loop file's contents and path in its repository, the remote and
// branch (pushed already), and whether the namespace has the search
// attributes the workflow keeps up to date.
func loopInput(ctx context.Context, c client.Client, conn fleet.Conn, req loopRequest) (*fleet.LoopInput, string, error) {
	file, remote, branch, queue, heartbeat := req.file, req.remote, req.branch, req.queue, req.heartbeat
	l, err := loadLoop(file)
	if err != nil {
		return nil, "", err
	}
	top := gitops.TopLevel(l.Dir)
	if top == "" {
		return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s is not in a git repository: a fleet loop's work tree travels as a git branch", l.Dir)}
	}
	rel, err := filepath.Rel(evalPath(top), evalPath(l.Path))
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("the loop file %s is outside its repository %s", l.Path, top)}
	}
	if branch == "" {
		branch = gitops.CurrentBranch(top)
	}
	if remote == "" {
		remote, err = gitops.Git(top, "remote", "get-url", "origin")
		if err != nil {
			return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("no --remote and no origin remote: %w", err)}
		}
	}
	if branch == "" {
		return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("no --branch and no current branch")}
	}
	remote = absRemote(top, remote)
	if out, err := gitops.Git(top, "ls-remote", "--heads", remote, branch); err != nil || out == "" {
		return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("the branch %s is not on %s: push it first (git push %s %s)", branch, remote, remote, branch)}
	}
	data, err := os.ReadFile(l.Path)
	if err != nil {
		return nil, "", err
	}
	if queue == "" {
		queue = "looprinter"
	}
	in := &fleet.LoopInput{Name: l.Name, LoopFile: filepath.ToSlash(rel), Spec: data, Remote: remote, Branch: branch, TaskQueue: queue, HeartbeatTimeout: heartbeat,
		SearchAttributes: fleet.SearchAttributesRegistered(ctx, c, conn.Namespace)}
	return in, queue, nil
}

// absRemote makes a remote that is a path on disk absolute (from the
// repository's top folder, as git reads it): workers clone it from their
// own folders. URLs and host:path remotes are kept as they are.
func absRemote(top, remote string) string {
	if strings.Contains(remote, "://") || filepath.IsAbs(remote) {
		return remote
	}
	if i := strings.Index(remote, ":"); i > 0 && !strings.Contains(remote[:i], "/") {
		return remote // host:path
	}
	return filepath.Join(top, remote)
}

func evalPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// reportFleet prints how a fleet loop ended and returns its exit code.
func reportFleet(io *IO, r *fleet.Result, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		enc.Encode(r)
	} else {
		fmt.Fprintf(io.Out, "%s: %s — %s\n", r.Status.Loop, loop.Title(r.Outcome.Reason), r.Outcome.Summary)
		fmt.Fprintf(io.Out, "  %s, %s, cycle %d, $%.2f; branch %s at %s\n", counted(r.Status.Steps, "step"), counted(r.Status.Iterations, "build run"), r.Status.Cycle, r.Status.CostUSD, r.Branch, shortSHA(r.Commit))
		for _, e := range r.Outcome.Evidence {
			fmt.Fprintf(io.Out, "  %s\n", e)
		}
	}
	if r.Outcome.ExitCode != 0 {
		return &ExitError{Code: r.Outcome.ExitCode}
	}
	return nil
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

func newFleetCmd(io *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Status and control of loops on the fleet (Temporal)",
		Long: `Fleet loops are started with ` + "`looprinter submit`" + ` and run by ` + "`looprinter worker`" + `s.
These commands read and steer them through Temporal: status and cost by a
query, pause, resume and stop by signals, list through visibility.
` + "`looprinter fleet dev`" + ` (a separate build: looprinter-fleet-dev) runs a local server.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(fleetStatusCmd(io, "status", "Show a fleet loop's phase, gates, counters and spend"),
		fleetStatusCmd(io, "cost", "Show what a fleet loop has spent"),
		fleetListCmd(io),
		fleetSignalCmd(io, fleet.SignalPause, "Pause a fleet loop before its next step", "will pause before its next step"),
		fleetSignalCmd(io, fleet.SignalResume, "Resume a paused fleet loop", "resumes"),
		fleetSignalCmd(io, fleet.SignalStop, "Stop a fleet loop after its current step", "stops after its current step"),
		fleetWaitCmd(io))
	if Dev != nil {
		cmd.AddCommand(Dev(io))
	} else {
		cmd.AddCommand(&cobra.Command{
			Use: "dev", Short: "A local Temporal server and one worker (in the looprinter-fleet-dev build)", Args: cobra.ArbitraryArgs,
			RunE: func(*cobra.Command, []string) error {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("this looprinter is built without the embedded Temporal server (about 150 MB more, and Go 1.26.10); build the one that has it:\n  cd internal/fleetdev && GOTOOLCHAIN=go1.26.10+auto go install ./cmd/looprinter-fleet-dev\nthen run `looprinter-fleet-dev fleet dev` (docs/fleet.md)")}
			},
		})
	}
	return cmd
}

// Dev, when set, is the `fleet dev` command: the looprinter-fleet-dev
// build (internal/fleetdev, a module of its own) sets it, so that the
// embedded Temporal server is not in any other build.
var Dev func(io *IO) *cobra.Command

func fleetStatusCmd(io *IO, use, short string) *cobra.Command {
	var conn connFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use: use + " NAME", Short: short, Args: cobra.ExactArgs(1),
		Example: "  looprinter fleet " + use + " demo",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			s, err := fleet.LoopStatus(cmd.Context(), c, args[0])
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			if asJSON {
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			if use == "cost" {
				fmt.Fprintf(io.Out, "%s: $%.4f over %s (%s), %s of step time\n", s.Loop, s.CostUSD, counted(s.AgentRuns, "agent run"), counted(s.Iterations, "build run"), time.Duration(s.WallMS)*time.Millisecond)
				return nil
			}
			printFleetStatus(io, s)
			return nil
		},
	}
	conn.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printFleetStatus(io *IO, s *fleet.Status) {
	state := "running"
	switch {
	case s.Outcome != "":
		state = loop.Title(s.Outcome)
	case s.Stopping:
		state = "stopping"
	case s.Paused:
		state = "paused"
	}
	fmt.Fprintf(io.Out, "%s: %s, phase %s, cycle %d, step %d\n", s.Loop, state, orDashF(s.Phase), s.Cycle, s.Steps)
	fmt.Fprintf(io.Out, "  gates: cycle %s, objective %s\n", orDashF(s.CycleGate), orDashF(s.ObjectiveGate))
	fmt.Fprintf(io.Out, "  %s, %s, %s passed, $%.4f, %s of step time\n", counted(s.Iterations, "build run"), counted(s.AgentRuns, "agent run"), counted(s.TasksPassed, "task"), s.CostUSD, time.Duration(s.WallMS)*time.Millisecond)
	if s.Worker != "" {
		fmt.Fprintf(io.Out, "  last step on worker %s, branch head %s\n", s.Worker, shortSHA(s.Commit))
	}
	if s.Summary != "" {
		fmt.Fprintf(io.Out, "  %s\n", s.Summary)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(io.Out, "  note: %s\n", n)
	}
}

func orDashF(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fleetListCmd(io *IO) *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use: "list", Short: "List fleet loops, running first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ls, err := fleet.List(cmd.Context(), c)
			if err != nil {
				return &ExitError{Code: ExitBlocked, Err: err}
			}
			fmt.Fprintf(io.Out, "%-20s %-14s %-14s %-6s %-9s %-12s %s\n", "NAME", "STATE", "PHASE", "CYCLE", "COST", "CYCLE GATE", "OBJECTIVE GATE")
			for _, l := range ls {
				if l.Status == nil {
					fmt.Fprintf(io.Out, "%-20s %s\n", l.Name, l.Err)
					continue
				}
				s := l.Status
				state := "running"
				if s.Outcome != "" {
					state = loop.Title(s.Outcome)
				} else if s.Paused {
					state = "paused"
				}
				fmt.Fprintf(io.Out, "%-20s %-14s %-14s %-6d $%-8.2f %-12s %s\n", l.Name, state, orDashF(s.Phase), s.Cycle, s.CostUSD, orDashF(s.CycleGate), orDashF(s.ObjectiveGate))
			}
			return nil
		},
	}
	conn.add(cmd)
	return cmd
}

func fleetSignalCmd(io *IO, signal, short, says string) *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use: signal + " NAME", Short: short, Args: cobra.ExactArgs(1),
		Example: "  looprinter fleet " + signal + " demo",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			if err := fleet.Signal(cmd.Context(), c, args[0], signal); err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			fmt.Fprintf(io.Err, "%s %s\n", args[0], says)
			return nil
		},
	}
	conn.add(cmd)
	return cmd
}

func fleetWaitCmd(io *IO) *cobra.Command {
	var conn connFlags
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use: "wait NAME", Short: "Wait for a fleet loop to end; exit with its exit code", Args: cobra.ExactArgs(1),
		Example: "  looprinter fleet wait demo --timeout 10m",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			r, err := fleet.Wait(ctx, c, args[0])
			if err != nil {
				return &ExitError{Code: ExitBlocked, Err: err}
			}
			return reportFleet(io, r, asJSON)
		},
	}
	conn.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (default: never)")
	return cmd
}

// counted is "1 build run", "2 build runs".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
