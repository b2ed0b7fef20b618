package record

import (
	"fmt"
	"time"
)

// An agent_end record says how the run's process ended: its exit code, or
// the signal that killed it (Signal: "SIGKILL" for a run killed with the
// engine, by `looprinter stop --now` or a crash), or neither when no exit
// status is known; and when it ended (Ended), which for a run of a wave
// can come well before the record's ts, written once the engine got to
// the run after the wave's other runs ended.

// agentEndLine is an agent_end record's line:
//
//	agent build T-001 ended: ok, exit 0, 3 turns, $0.0120, 4.2s
//	agent build T-002 ended: interrupted, killed by SIGKILL, 0 turns, $0.0000, 6.1s — …
//	agent build T-003 ended: ok, exit 0, 2 turns, $0.0100, 0.4s (ended 14:02:11)
func agentEndLine(e Event) string {
	what := e.Phase
	if e.Task != "" {
		what += " " + e.Task
	}
	s := fmt.Sprintf("agent %s ended: %s, %s%d turns, $%.4f, %.1fs", what, e.Status, exitPhrase(e), e.Turns, e.CostUSD, float64(e.DurationMS)/1000)
	if !e.Ended.IsZero() && e.TS.Sub(e.Ended) >= time.Second {
		s += " (ended " + e.Ended.Local().Format("15:04:05") + ")"
	}
	if e.Error != "" {
		s += " — " + firstLine(e.Error)
	}
	return s
}

// exitPhrase is how an agent run's process ended, as its agent_end line
// says it: "exit 1, ", "killed by SIGKILL, ", or nothing when no exit
// status is known.
func exitPhrase(e Event) string {
	switch {
	case e.Signal != "":
		return "killed by " + e.Signal + ", "
	case e.ExitCode == nil:
		return ""
	}
	return fmt.Sprintf("exit %d, ", *e.ExitCode)
}
