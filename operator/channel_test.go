//go:build !windows

package operator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// stops is what a Channel or a PlanGate asked of the engine.
type stops struct {
	evs    []record.Event
	reason string
	saves  int
}

func (s *stops) stop(reason, summary string) error { s.reason = reason; return errors.New(summary) }

type chanState struct {
	q    *Question
	a    *Answered
	told map[string]int
	none int
}

func testChannel(t *testing.T, l *Rules) (*Channel, *chanState, *stops) {
	st, s := &chanState{}, &stops{}
	return &Channel{Dir: t.TempDir(), Rules: func() Rules { return *l }, Emit: func(ev record.Event) { s.evs = append(s.evs, ev) },
		Question: &st.q, Answered: &st.a, GuidanceTold: &st.told, Unanswered: &st.none,
		Save: func() error { s.saves++; return nil }, Stop: s.stop, Idle: func() {}}, st, s
}

// A question asked is kept and waited on; the operator's answer ends the
// wait, the next prompt carries it and the run after it settles it.
func TestChannelQuestionAnswered(t *testing.T) {
	l := &Rules{Name: "demo", AskTimeout: time.Hour}
	c, st, s := testChannel(t, l)
	prompt, _ := c.WithOperator("do the work")
	if !strings.Contains(prompt, "<ask id=") {
		t.Fatalf("the prompt does not say how to ask:\n%s", prompt)
	}
	if err := c.Asked("build", "T-1", "done?\n<ask id=\"q1\">which port?</ask>", false, prompt, 4); !errors.Is(err, ErrAsked) {
		t.Fatalf("Asked = %v, want ErrAsked", err)
	}
	if st.q == nil || st.q.ID != "q1" || st.q.Seq != 4 || s.saves != 1 || s.evs[0].Event != record.Question {
		t.Fatalf("question %+v, saves %d, records %+v", st.q, s.saves, s.evs)
	}
	if err := PutAnswer(c.Dir, Answer{ID: "q1", Seq: 4, Text: "8080", By: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForAnswer(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st.q != nil || st.a == nil || st.a.Text != "8080" {
		t.Fatalf("after the answer: question %+v, answered %+v", st.q, st.a)
	}
	next, _ := c.WithOperator("go on")
	if !strings.Contains(next, "8080") {
		t.Errorf("the next prompt does not carry the answer:\n%s", next)
	}
	c.After(context.Background(), "build", "T-1", false, "", nil)
	if st.a != nil {
		t.Error("the answer was carried again after a run read it")
	}
	// A tampering run's question is not honoured.
	if err := c.Asked("build", "T-1", "<ask id=\"q2\">x?</ask>", true, prompt, 5); err != nil || st.q != nil {
		t.Errorf("a tampering run's question: %v, %+v", err, st.q)
	}
}

// No answer within ask_timeout: blocked stops; continue goes on, until
// budget.same_failure questions in a row went unanswered.
func TestChannelQuestionTimeout(t *testing.T) {
	l := &Rules{Name: "demo"}
	c, st, s := testChannel(t, l)
	st.q = &Question{ID: "q1", Text: "which?", Deadline: time.Now().Add(-time.Second)}
	if err := c.WaitForAnswer(context.Background()); err == nil || s.reason != StopBlocked {
		t.Fatalf("on_timeout blocked: %v, reason %q", err, s.reason)
	}
	l.OnTimeoutContinue = true
	l.SameFailure = 2
	if err := c.WaitForAnswer(context.Background()); err != nil || st.q != nil || st.a == nil || !st.a.TimedOut || st.none != 1 {
		t.Fatalf("on_timeout continue: %v, question %+v, answered %+v, unanswered %d", err, st.q, st.a, st.none)
	}
	st.q = &Question{ID: "q2", Text: "and?", Deadline: time.Now().Add(-time.Second)}
	if err := c.WaitForAnswer(context.Background()); err == nil || s.reason != StopNoProgress {
		t.Errorf("the second unanswered question: %v, reason %q", err, s.reason)
	}
}

// Guidance is told until a run acknowledges it with <ack/>.
func TestChannelGuidanceAcked(t *testing.T) {
	c, st, s := testChannel(t, &Rules{})
	g, err := PutGuidance(c.Dir, "use the v2 API", "test")
	if err != nil {
		t.Fatal(err)
	}
	prompt, told := c.WithOperator("work")
	if len(told) != 1 || told[0] != g.ID || !strings.Contains(prompt, "use the v2 API") {
		t.Fatalf("told %q, prompt:\n%s", told, prompt)
	}
	c.RecordGuidance("build", "", told)
	c.After(context.Background(), "build", "", false, "done", told)
	if st.told[g.ID] != 1 {
		t.Fatalf("told count %d, want 1", st.told[g.ID])
	}
	prompt, told = c.WithOperator("work")
	if !strings.Contains(prompt, "told again") {
		t.Errorf("the second prompt does not say it is told again:\n%s", prompt)
	}
	c.RecordGuidance("build", "", told) // no second guidance record
	c.After(context.Background(), "build", "", false, "done\n<ack/>", told)
	if len(Queued(c.Dir)) != 0 || st.told[g.ID] != 0 {
		t.Errorf("after <ack/>: queued %d, told %d", len(Queued(c.Dir)), st.told[g.ID])
	}
	var kinds []string
	for _, ev := range s.evs {
		kinds = append(kinds, ev.Event)
	}
	if strings.Join(kinds, ",") != record.Guidance+","+record.Warning+","+record.GuidanceAck {
		t.Errorf("records %q", kinds)
	}
}

// The first plan waits for the OK; without one, then says what happens.
func TestPlanGate(t *testing.T) {
	l := &Rules{Name: "demo", Approve: true, ApproveTimeout: time.Hour, ApproveThen: "stop"}
	var approved bool
	var wait *PlanWait
	s := &stops{}
	first := true
	g := &PlanGate{Dir: t.TempDir(), Rules: func() Rules { return *l }, Emit: func(ev record.Event) { s.evs = append(s.evs, ev) },
		FirstPlan: func() (int, bool) { return 3, first }, Approved: &approved, Wait: &wait,
		Save: func() error { s.saves++; return nil }, Stop: s.stop, Idle: func() {}}
	first = false
	if err := g.Hold(context.Background()); err != nil || len(s.evs) != 0 {
		t.Fatalf("no plan to build: %v, records %+v", err, s.evs)
	}
	first = true
	if err := PutApproval(g.Dir, "test"); err != nil {
		t.Fatal(err)
	}
	if err := g.Hold(context.Background()); err != nil || !approved || wait != nil {
		t.Fatalf("approved: %v, approved %v, wait %+v", err, approved, wait)
	}
	if len(s.evs) != 2 || s.evs[0].Kind != "asked" || s.evs[1].Kind != "approved" || !strings.Contains(s.evs[0].Message, "3 task(s)") {
		t.Errorf("records %+v", s.evs)
	}
	// Approved: no second wait.
	if err := g.Hold(context.Background()); err != nil || len(s.evs) != 2 {
		t.Errorf("a second hold: %v, records %d", err, len(s.evs))
	}
	approved = false
	wait = &PlanWait{AskedAt: time.Now(), Deadline: time.Now().Add(-time.Second)}
	if err := g.Hold(context.Background()); err == nil || s.reason != StopBlocked || approved {
		t.Errorf("then stop: %v, reason %q, approved %v", err, s.reason, approved)
	}
	l.ApproveThen = ApproveThenRun
	wait = &PlanWait{AskedAt: time.Now(), Deadline: time.Now().Add(-time.Second)}
	if err := g.Hold(context.Background()); err != nil || !approved || wait != nil {
		t.Errorf("then run: %v, approved %v, wait %+v", err, approved, wait)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	approved, wait = false, nil
	if err := g.Hold(ctx); err == nil || s.reason != StopInterrupted {
		t.Errorf("stopped while waiting: %v, reason %q", err, s.reason)
	}
}
