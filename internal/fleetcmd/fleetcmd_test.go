package fleetcmd

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/fleet"
)

func TestAbsRemote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"../r.git", "/src/r.git"},
		{"r.git", "/src/app/r.git"},
		{"/srv/r.git", "/srv/r.git"},
		{"git@host:team/app.git", "git@host:team/app.git"},
		{"https://host/team/app.git", "https://host/team/app.git"},
		{"file:///srv/r.git", "file:///srv/r.git"},
	} {
		if got := absRemote("/src/app", c.in); got != c.want {
			t.Errorf("absRemote(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A stopped fleet loop's status line says the fleet's way to run it again
// (a new submit), never `looprinter start`, which runs it on this machine.
func TestStoppedFleetLoopSaysSubmit(t *testing.T) {
	s := remoteStatus("far", &fleet.Status{Loop: "far", Shape: "ralph", Iterations: 2, Outcome: fleet.ReasonStopped, ExitCode: 130})
	if strings.Contains(s.Line, "looprinter start") || !strings.Contains(s.Line, "`looprinter submit` runs it again") {
		t.Fatalf("status line of a stopped fleet loop: %q", s.Line)
	}
	if !strings.Contains(s.Line, "Stopped: INTERRUPTED") {
		t.Fatalf("the outcome is gone from the line: %q", s.Line)
	}
}
