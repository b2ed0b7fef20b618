package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
)

// While a wave's runs work on T-001 and T-002, watch's phase names both
// tasks, not only the first.
func TestPhaseNamesEveryTaskOfAWave(t *testing.T) {
	started := time.Now()
	st := &loop.State{Phase: loop.PhaseBuild, CurrentTask: "T-001",
		InFlight:     &loop.InFlight{Phase: "build", Task: "T-001", Run: "r2", Backend: "command", Started: started},
		InFlightMore: []*loop.InFlight{{Phase: "build", Task: "T-002", Run: "r3", Slot: 1, Backend: "command", Started: started}}}
	var b strings.Builder
	line := func(f string, a ...any) { b.WriteString(fmt.Sprintf(f, a...) + "\n") }
	Model{}.detail(&b, line, LoopView{Status: ops.Status{Loop: st}})
	if out := b.String(); !strings.Contains(out, "phase build T-001, T-002\n") {
		t.Errorf("the phase does not name both tasks:\n%s", out)
	}
}
