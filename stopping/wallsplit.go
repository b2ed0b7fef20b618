package stopping

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// wallSplit is where a loop's wall time went, from its records: agent runs
// (agent_end) and checks (setup, baseline, the gates, the clean room).
// CPU is the checks' CPU (theirs and the strength passes' mutants'),
// where their records carry it (cpu_ms).
type wallSplit struct {
	Agent, Checks, CPU time.Duration
	MutantsCPU         time.Duration // the part of CPU of the strength passes
}

// splitWall adds up, over every record file of the loop, the time its agent
// runs and its checks took.
func splitWall(evs []record.Event) wallSplit {
	var s wallSplit
	ms := func(n int64) time.Duration { return time.Duration(max(n, 0)) * time.Millisecond }
	for _, ev := range evs {
		switch ev.Event {
		case record.AgentEnd:
			s.Agent += ms(ev.DurationMS)
		case record.Setup, record.Baseline, record.Verify:
			for _, c := range ev.Checks {
				s.Checks += ms(c.DurationMS)
				s.CPU += ms(c.CPUMS)
			}
		}
		if ev.CleanRoom != nil {
			s.Checks += ms(ev.CleanRoom.DurationMS)
			for _, c := range ev.CleanRoom.Checks {
				s.CPU += ms(c.CPUMS)
			}
		}
		if ev.Strength != nil {
			s.CPU += ms(ev.Strength.CPUMS)
			s.MutantsCPU += ms(ev.Strength.CPUMS)
		}
	}
	return s
}

// cpuPhrase is "; the checks used N of CPU" for the checks' CPU (and the
// strength passes' part of it), "" when the records carry none.
func (s wallSplit) cpuPhrase(round func(time.Duration) time.Duration) string {
	if s.CPU <= 0 {
		return ""
	}
	r := func(d time.Duration) time.Duration {
		if v := round(d); v > 0 {
			return v
		}
		return d.Round(time.Millisecond)
	}
	p := fmt.Sprintf("; the checks used %s of CPU", r(s.CPU))
	if s.MutantsCPU > 0 {
		p += fmt.Sprintf(" (%s of it on the strength passes' mutants)", r(s.MutantsCPU))
	}
	return p
}

// WallNextSteps is the advice of a loop stopped by its wall budget: when
// the checks took more of the time than the agent runs, it is the checks
// that need to be faster, not the runs.
func WallNextSteps(dir, loopFile string) []string {
	evs, _ := loopdir.Dir(dir).ReadRecords()
	s := splitWall(evs)
	round := func(d time.Duration) time.Duration {
		if d < time.Minute {
			return d.Round(100 * time.Millisecond)
		}
		return d.Round(time.Second)
	}
	if s.Checks > s.Agent {
		return []string{
			fmt.Sprintf("the checks (setup, baseline and gates) took %s of the time spent; the agent runs took %s%s", round(s.Checks), round(s.Agent), s.cpuPhrase(round)),
			"make the checks faster (a narrower verify, a faster test command) or raise budget.wall in " + filepath.Base(loopFile),
		}
	}
	return []string{
		fmt.Sprintf("the agent runs took %s of the time spent; the checks took %s%s", round(s.Agent), round(s.Checks), s.cpuPhrase(round)),
		"raise budget.wall in " + filepath.Base(loopFile) + " if the loop was close, or make each run shorter: a smaller model for plan runs, lower agent.max_turns",
	}
}
