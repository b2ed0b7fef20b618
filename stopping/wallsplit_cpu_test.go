package stopping

import (
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// The checks' CPU is summed from every record that carries it (the gates'
// checks, the clean room's, the strength pass's mutants) and said beside
// their time; without it nothing is said.
func TestSplitWallCPU(t *testing.T) {
	evs := []record.Event{
		{Event: record.Baseline, Checks: []record.Check{{DurationMS: 900, CPUMS: 400, CPUFrom: "cgroup"}}},
		{Event: record.Verify, Checks: []record.Check{{DurationMS: 1100, CPUMS: 1600, CPUFrom: "box"}}, CleanRoom: &record.CleanRoom{DurationMS: 500, Checks: []record.Check{{CPUMS: 300}}}},
		{Event: record.VerifyStrength, Strength: &record.Strength{DurationMS: 4000, CPUMS: 7000, CPUFrom: "cgroup"}},
		{Event: record.AgentEnd, DurationMS: 700},
	}
	s := splitWall(evs)
	if s.CPU != 9300*time.Millisecond || s.MutantsCPU != 7*time.Second || s.Checks != 2500*time.Millisecond || s.Agent != 700*time.Millisecond {
		t.Fatalf("split %+v", s)
	}
	round := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	if p := s.cpuPhrase(round); !strings.Contains(p, "the checks used 9.3s of CPU (7s of it on the strength passes' mutants)") {
		t.Fatalf("phrase %q", p)
	}
	if p := (wallSplit{CPU: 40 * time.Millisecond}).cpuPhrase(round); !strings.HasSuffix(p, "40ms of CPU") {
		t.Fatalf("a small figure reads %q", p)
	}
	if p := (wallSplit{Checks: time.Second}).cpuPhrase(round); p != "" {
		t.Fatalf("no CPU in the records, yet %q", p)
	}
}
