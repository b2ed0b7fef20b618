// Package devserver is `looprinter fleet dev`: an embedded single-process
// Temporal server (temporaltest: SQLite in memory) and one worker, to try
// the fleet on one machine. It is a Go module of its own so that the
// server (about 150 MB of binary, Go 1.26.10) stays out of the default
// looprinter build; the server-backed fleet tests live here too.
package fleetdev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/looprinter/looprinter/fleet"

	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/fleetcmd"
)

// Server is a running embedded server.
type Server struct {
	ts        *temporaltest.TestServer
	HostPort  string
	Namespace string
}

// Start starts the embedded server. It contacts no host but 127.0.0.1.
func Start() (s *Server, err error) {
	// Without it the frontend looks up an outside host for version checks.
	os.Setenv("TEMPORAL_VERSION_CHECK_DISABLED", "1")
	defer func() {
		if r := recover(); r != nil { // temporaltest panics without a *testing.T
			err = fmt.Errorf("the embedded Temporal server did not start: %v", r)
		}
	}()
	ts := temporaltest.NewServer()
	s = &Server{ts: ts, HostPort: ts.GetFrontendHostPort(), Namespace: ts.GetDefaultNamespace()}
	if err := RegisterSearchAttributes(ts.GetDefaultClient(), s.Namespace); err != nil {
		ts.Stop()
		return nil, err
	}
	return s, nil
}

// RegisterSearchAttributes adds looprinter's search attributes to the
// namespace (fleet/search.go) and waits until the frontend knows them, so
// that loops submitted next keep them up to date.
func RegisterSearchAttributes(c client.Client, namespace string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := fleet.RegisterSearchAttributes(ctx, c, namespace); err != nil {
		var exists *serviceerror.AlreadyExists
		if !errors.As(err, &exists) {
			return fmt.Errorf("registering the search attributes: %w", err)
		}
	}
	for !fleet.SearchAttributesRegistered(ctx, c, namespace) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the search attributes were registered but the server does not list them")
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// Stop stops the server; what it held is gone (it keeps nothing on disk).
func (s *Server) Stop() { s.ts.Stop() }

// Command is `looprinter fleet dev`.
func Command(io *cli.IO) *cobra.Command {
	var identity string
	var noWorker bool
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local Temporal server and one worker, to try the fleet on one machine",
		Long: `Start an embedded single-process Temporal server (in memory: it keeps
nothing when it stops) and one ` + "`looprinter worker`" + ` as a child process. Its
address and namespace are written where the other fleet commands find them
(submit, worker, fleet status …), so they need no --temporal flag. Runs until
interrupted. Kill the worker (its pid is printed) and start another with
` + "`looprinter worker --identity dev-2`" + `: the step it was running runs again there.`,
		Example: `  looprinter-fleet-dev fleet dev
  looprinter submit            # in another terminal, in a git repository whose branch is pushed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), io, identity, noWorker)
		},
	}
	cmd.Flags().StringVar(&identity, "identity", "dev-1", "the worker's identity")
	cmd.Flags().BoolVar(&noWorker, "no-worker", false, "start only the server")
	return cmd
}

func run(ctx context.Context, io *cli.IO, identity string, noWorker bool) error {
	start := time.Now()
	s, err := Start()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitBlocked, Err: err}
	}
	defer s.Stop()
	addr := fleetcmd.DevAddressPath()
	os.MkdirAll(filepath.Dir(addr), 0o700)
	if err := os.WriteFile(addr, []byte(s.HostPort+" "+s.Namespace+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(addr)
	fmt.Fprintf(io.Err, "Temporal dev server on %s, namespace %s (started in %s; in memory)\n", s.HostPort, s.Namespace, time.Since(start).Round(time.Millisecond))
	var worker *exec.Cmd
	if !noWorker {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		worker = exec.Command(self, "worker", "--temporal", s.HostPort, "--namespace", s.Namespace, "--identity", identity)
		worker.Stdout, worker.Stderr = io.Out, io.Err
		// A process group of its own: Ctrl-C stops fleet dev, which then
		// stops the worker; the worker dying first is reported.
		worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := worker.Start(); err != nil {
			return fmt.Errorf("fleet dev: the worker %s did not start: %w", identity, err)
		}
		fmt.Fprintf(io.Err, "worker %s started, pid %d\n", identity, worker.Process.Pid)
	}
	fmt.Fprintf(io.Err, "submit a loop with `looprinter submit` from its git repository; Ctrl-C stops the server\n")
	if worker == nil {
		<-ctx.Done()
		return nil
	}
	err = fleetcmd.SuperviseDevWorker(ctx, io, fleetcmd.DevWorker{Identity: identity, Pid: worker.Process.Pid, Wait: worker.Wait})
	if ctx.Err() != nil {
		worker.Process.Signal(syscall.SIGTERM)
		time.Sleep(500 * time.Millisecond)
	}
	return err
}
