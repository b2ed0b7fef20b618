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
type wallSplit struct {
	Agent, Checks time.Duration
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
			}
		}
		if ev.CleanRoom != nil {
			s.Checks += ms(ev.CleanRoom.DurationMS)
		}
	}
	return s
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
			fmt.Sprintf("the checks (setup, baseline and gates) took %s of the time spent; the agent runs took %s", round(s.Checks), round(s.Agent)),
			"make the checks faster (a narrower verify, a faster test command) or raise budget.wall in " + filepath.Base(loopFile),
		}
	}
	return []string{
		fmt.Sprintf("the agent runs took %s of the time spent; the checks took %s", round(s.Agent), round(s.Checks)),
		"raise budget.wall in " + filepath.Base(loopFile) + " if the loop was close, or make each run shorter: a smaller model for plan runs, lower agent.max_turns",
	}
}
