package record

import (
	"strings"
	"testing"
	"time"
)

// An agent_end's line says how the process ended: its exit code, the
// signal that killed it (never "exit -1"), or nothing when no exit status
// was collected; and when it ended, where that is a second or more before
// the record was written (a run of a wave, judged after the others).
func TestAgentEndLineSaysHowAndWhenTheRunEnded(t *testing.T) {
	ts := time.Date(2026, 1, 2, 10, 0, 10, 0, time.UTC)
	ended := ts.Add(-4 * time.Second)
	for _, c := range []struct {
		ev         Event
		want, nope string
	}{
		{Event{Event: AgentEnd, TS: ts, Phase: "build", Task: "T-001", Status: "interrupted", ExitCode: Int(-1), Signal: "SIGKILL", DurationMS: 2600},
			"agent build T-001 ended: interrupted, killed by SIGKILL, 0 turns, $0.0000, 2.6s", "exit"},
		{Event{Event: AgentEnd, TS: ts, Phase: "build", Task: "T-002", Status: "interrupted", DurationMS: 900},
			"agent build T-002 ended: interrupted, 0 turns, $0.0000, 0.9s", "exit"},
		{Event{Event: AgentEnd, TS: ts, Phase: "build", Task: "T-003", Status: "ok", ExitCode: Int(0), DurationMS: 300, Ended: ended},
			"agent build T-003 ended: ok, exit 0, 0 turns, $0.0000, 0.3s (ended " + ended.Local().Format("15:04:05") + ")", "killed"},
		{Event{Event: AgentEnd, TS: ts, Phase: "plan", Status: "ok", ExitCode: Int(0), DurationMS: 300, Ended: ts.Add(-100 * time.Millisecond)},
			"agent plan ended: ok, exit 0, 0 turns, $0.0000, 0.3s", "(ended"},
	} {
		got := Describe(c.ev)
		if got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
		if strings.Contains(got, c.nope) {
			t.Errorf("%q says %q", got, c.nope)
		}
	}
}
