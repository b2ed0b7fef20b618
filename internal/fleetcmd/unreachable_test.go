package fleetcmd

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/cli"
)

// With the fleet configured but its frontend down, a name no local loop has
// is not "no such loop" (a usage error, exit 64): whether the fleet runs it
// is not known, and status, stop and logs say the fleet cannot be reached.
func TestUnreachableFleetIsNotNoSuchLoop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	t.Setenv("LOOPRINTER_TEMPORAL", addr)
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"status", "far"}, {"stop", "far"}, {"logs", "far"}} {
		var out, errb bytes.Buffer
		root := cli.NewRoot(&cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		var ee *cli.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: %v, want an exit code", args, err)
		}
		if ee.Code != cli.ExitBlocked {
			t.Errorf("%v: exit %d (%v), want %d", args, ee.Code, ee.Err, cli.ExitBlocked)
		}
		msg := ee.Err.Error()
		if !strings.Contains(msg, "cannot reach the fleet at "+addr) || strings.Contains(msg, "no such loop") {
			t.Errorf("%v: %q, want it to say the fleet at %s cannot be reached", args, msg, addr)
		}
	}
}
