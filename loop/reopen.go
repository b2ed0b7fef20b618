package loop

import (
	"errors"
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/textcut"
)

// reopen turns a DONE loop back to a re-plan with r's signal: a failed
// gate like any other (a verify record; the evidence is the next
// verdict's, as after any failed gate), the next cycle
// within the cycle budget, the post phases to run again. A spent budget
// is the outcome returned; nil when the loop goes on.
func (e *Engine) reopen(r Reopen) *Outcome {
	gate := strings.TrimSpace(r.Gate)
	if gate == "" {
		gate = "external"
	}
	signal := e.red.String(r.Signal)
	msg := e.red.String(textcut.LastLine(r.Message))
	e.emit(record.Event{Event: record.Verify, Gate: gate, Pass: record.Bool(false), FailureSignal: signal,
		Signature: judge.Signature(signal), Message: msg})
	e.st.PostIndex, e.st.PostSteps = 0, 0
	err := e.nextCycle(fmt.Sprintf("plan_cycle_%d_%s.json", e.st.Cycle, gate), gate+" gate failed", nil, signal)
	var s *errStop
	switch {
	case errors.As(err, &s):
		return s.o
	case err != nil:
		return e.outcome(ReasonBlocked, err.Error())
	}
	return nil
}
