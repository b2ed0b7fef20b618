package fleetcmd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// DevWorker is the worker `fleet dev` runs beside its server, as a child
// process.
type DevWorker struct {
	Identity string
	Pid      int
	Wait     func() error // returns when the worker's process has ended, with how it ended
}

// SuperviseDevWorker waits until ctx ends (fleet dev is stopped: nil) or
// until the worker ends, and never lets it die unseen. A worker killed by
// a signal (`kill -9 PID`, to see its step run again on another worker) is
// reported on io.Err and the server keeps running. A worker that exits on
// its own (an error, or an exit nobody asked for) ends fleet dev: the error
// returned says which worker ended and how, and the command exits non-zero.
func SuperviseDevWorker(ctx context.Context, io *IO, w DevWorker) error {
	ended := make(chan error, 1)
	go func() { ended <- w.Wait() }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-ended:
		if ctx.Err() != nil {
			return nil
		}
		what := fmt.Sprintf("the worker %s (pid %d)", w.Identity, w.Pid)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ProcessState != nil && ee.ProcessState.ExitCode() == -1 {
			fmt.Fprintf(io.Err, "%s was stopped (%s); the server keeps running: start another with `looprinter worker --identity NAME`\n", what, ee)
			<-ctx.Done()
			return nil
		}
		how := "exited with status 0"
		if err != nil {
			how = "failed: " + err.Error()
		}
		return &ExitError{Code: ExitBlocked, Err: fmt.Errorf("fleet dev: %s %s (its output is above); the server stops: run `looprinter-fleet-dev fleet dev` again, or `looprinter worker` alone to see why", what, how)}
	}
}
