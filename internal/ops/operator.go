package ops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/operator"
)

// ErrNoQuestion says the loop has no open question of that id.
var ErrNoQuestion = errors.New("no open question")

// PendingGuidance is guidance the operator queued that no agent run has
// acknowledged yet.
type PendingGuidance struct {
	operator.Guidance
	// Told is how many agent runs were shown it without acknowledging it
	// (0: no run has seen it yet).
	Told int `json:"told"`
}

// Channel is what a loop's operator channel holds now: the question the
// loop waits on, if any, and the guidance not yet acknowledged.
type Channel struct {
	Question *loop.Question    `json:"question,omitempty"`
	Guidance []PendingGuidance `json:"guidance,omitempty"`
}

func channelDir(e Entry) string {
	if e.RunDir != "" {
		return e.RunDir
	}
	return e.Dir
}

// ChannelOf reads a loop's open question and its unacknowledged guidance.
func ChannelOf(e Entry) Channel {
	dir := channelDir(e)
	st, err := loop.LoadState(dir)
	if err != nil {
		return Channel{}
	}
	return channelFrom(dir, st)
}

func channelFrom(dir string, st *loop.State) Channel {
	c := Channel{Question: st.Question}
	for _, g := range operator.Queued(dir) {
		c.Guidance = append(c.Guidance, PendingGuidance{Guidance: g, Told: st.GuidanceTold[g.ID]})
	}
	return c
}

// Answer puts the operator's answer to the loop's open question id; the
// loop goes on with the answer in its next prompt. by says who answers
// ("looprinter answer", "mcp", "serve token …"). The answer is kept in the
// engine's private folder, which no agent run can write.
func Answer(e Entry, id, text, by string) error {
	if err := operator.CheckText("answer", text); err != nil {
		return err
	}
	dir := channelDir(e)
	st, err := loop.LoadState(dir)
	if err != nil {
		return err
	}
	q := st.Question
	if q == nil {
		return fmt.Errorf("%w: %s is not waiting for an answer", ErrNoQuestion, e.Name)
	}
	if q.ID != id {
		return fmt.Errorf("%w %q: %s waits for the answer to %s: %s", ErrNoQuestion, id, e.Name, q.ID, oneLine(q.Text))
	}
	return operator.PutAnswer(dir, operator.Answer{ID: id, Seq: q.Seq, Text: text, By: by})
}

// Guide queues guidance for the loop's next agent run, which is asked to
// acknowledge it with <ack/>; until a run does, every run is told again.
// by says who guides.
func Guide(e Entry, text, by string) error {
	_, err := operator.PutGuidance(channelDir(e), text, by)
	return err
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// ErrNotWaitingApproval says the loop is not waiting for plan approval.
var ErrNotWaitingApproval = loop.ErrNotWaitingApproval

// Approve gives the OK to the first plan the loop waits on
// (plan.approve); by says who ("looprinter approve", "mcp", "serve token
// …"). The OK is kept in the engine's private folder, which no agent run
// can write.
func Approve(e Entry, by string) error {
	dir := channelDir(e)
	st, err := loop.LoadState(dir)
	if err != nil {
		return err
	}
	if st.PlanWait == nil {
		return fmt.Errorf("%w: %s", ErrNotWaitingApproval, e.Name)
	}
	return operator.PutApproval(dir, by)
}
