// Package watch is `looprinter watch`: a live terminal view (Bubble Tea) of
// one loop or all of them. It reads only the files a run writes (state,
// plan, records, lock), so it attaches to and detaches from a running loop
// freely and never slows it down.
package watch

import (
	"os"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// ToolTail is how many tool calls of the current agent run are kept.
const ToolTail = 8

// LoopView is everything the view shows about one loop.
type LoopView struct {
	Status  ops.Status
	Budget  *spec.Budget   // from the loop file, if it loads
	Agent   *record.Event  // the current (or last) agent_start
	Ended   *record.Event  // its agent_end, once it ended
	Tools   []record.Event // the current agent run's last tool calls
	Last    []record.Event // the last few records that are not tool calls
	Records int            // records read so far (at most the last 500 when watch started)
}

// Source reads the loops' files; it keeps a follower per loop so each poll
// reads only new records.
type Source struct {
	// Entries lists the loops to show; called at every poll so loops
	// started meanwhile appear.
	Entries func() []ops.Entry
	tails   map[string]*tail
}

type tail struct {
	dir      string
	fl       *record.Follower
	agent    *record.Event
	ended    *record.Event
	tools    []record.Event
	last     []record.Event
	n        int
	spec     *spec.Budget
	specFile string
	specMod  time.Time
}

// NewSource watches the loops entries returns.
func NewSource(entries func() []ops.Entry) *Source {
	return &Source{Entries: entries, tails: map[string]*tail{}}
}

// Poll reads every loop's files now.
func (s *Source) Poll() []LoopView {
	var out []LoopView
	for _, e := range s.Entries() {
		st := ops.Inspect(e)
		dir := e.RunDir
		if dir == "" {
			dir = e.Dir
		}
		t := s.tails[e.Key]
		if t == nil || t.dir != dir {
			// The end of the records is enough to show where the loop is:
			// watch starts as fast for a long loop as for a new one.
			evs, offsets, _ := loopdir.Dir(dir).Tail(startTail, nil)
			t = &tail{dir: dir, fl: loopdir.Dir(dir).FollowAt(offsets)}
			s.tails[e.Key] = t
			t.feed(evs)
		}
		t.feed(t.fl.Poll())
		t.loadBudget(e)
		v := LoopView{Status: st, Budget: t.spec, Agent: t.agent, Ended: t.ended, Records: t.n,
			Tools: append([]record.Event(nil), t.tools...), Last: append([]record.Event(nil), t.last...)}
		out = append(out, v)
	}
	return out
}

// startTail is how many of the last records watch reads when it starts.
const startTail = 500

func (t *tail) feed(evs []record.Event) {
	for _, ev := range evs {
		ev := ev
		t.n++
		switch ev.Event {
		case record.AgentStart:
			t.agent, t.ended, t.tools = &ev, nil, nil
		case record.AgentEnd:
			t.ended = &ev
		case record.ToolCall:
			t.tools = append(t.tools, ev)
			if len(t.tools) > ToolTail {
				t.tools = t.tools[len(t.tools)-ToolTail:]
			}
			continue
		}
		t.last = append(t.last, ev)
		if len(t.last) > 4 {
			t.last = t.last[len(t.last)-4:]
		}
	}
}

func (t *tail) loadBudget(e ops.Entry) {
	f := e.RunFile
	if f == "" {
		f = e.LoopFile
	}
	fi, err := os.Stat(f)
	if err != nil {
		return
	}
	if f == t.specFile && fi.ModTime().Equal(t.specMod) {
		return
	}
	t.specFile, t.specMod = f, fi.ModTime()
	if l, err := spec.Load(f); err == nil {
		b := l.Budget
		t.spec = &b
	}
}
