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
// until the worker ends, and never lets it die unseen. A worker stopped on
// purpose (`kill -9 PID`, to see its step run again on another worker, or
// `kill PID`, after which it exits 0) is reported on io.Err and the server
// keeps running. A worker that fails (it exits non-zero: it could not reach
// the server, or broke) ends fleet dev: the error returned says which
// worker ended and how, and the command exits non-zero.
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
		killed := errors.As(err, &ee) && ee.ProcessState != nil && ee.ProcessState.ExitCode() == -1
		if err == nil || killed {
			how := "exit status 0"
			if killed {
				how = ee.Error()
			}
			fmt.Fprintf(io.Err, "fleet dev: %s was stopped (%s); the server keeps running: start another with `looprinter worker --identity NAME`, or Ctrl-C to stop the server\n", what, how)
			<-ctx.Done()
			return nil
		}
		return &ExitError{Code: ExitBlocked, Err: fmt.Errorf("fleet dev: %s failed: %v (its output is above); the server stops: run `looprinter-fleet-dev fleet dev` again, or `looprinter worker` alone to see why", what, err)}
	}
}
