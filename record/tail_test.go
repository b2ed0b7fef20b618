package record

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// Tail gives the same last events as reading every record, from files of
// two runs, with lines longer than a read, a torn last line and events it
// must leave out; and a follower from its offsets sees only what follows.
func TestTailMatchesReadDir(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now()
	var ws []*Writer
	for r := 0; r < 2; r++ {
		w, err := Create(dir, fmt.Sprintf("r%d", r), "command", t0.Add(time.Duration(r)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	for i := 0; i < 700; i++ {
		ev := Event{Event: AgentStart, Task: fmt.Sprint(i), TS: t0.Add(time.Duration(i) * time.Millisecond)}
		if i%7 == 0 {
			ev.Event, ev.Message = ToolCall, strings.Repeat("x", 100<<10) // longer than one read
		}
		ws[i%2].Write(ev)
	}
	for _, w := range ws {
		w.Close()
	}
	f, _ := os.OpenFile(ws[1].Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"event":"agent_e`)
	f.Close()
	all, _ := ReadDir(dir)
	var want []Event
	for _, e := range all {
		if e.Event != ToolCall {
			want = append(want, e)
		}
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].TS.Before(want[j].TS) })
	for _, n := range []int{1, 20, 500, 100000} {
		got, offsets, err := Tail(dir, n, func(e Event) bool { return e.Event != ToolCall })
		if err != nil {
			t.Fatal(err)
		}
		w := want[max(0, len(want)-n):]
		if len(got) != len(w) {
			t.Fatalf("n=%d: %d events, want %d", n, len(got), len(w))
		}
		for i := range got {
			if got[i].Task != w[i].Task {
				t.Fatalf("n=%d: event %d is task %s, want %s", n, i, got[i].Task, w[i].Task)
			}
		}
		fl := NewFollowerAt(dir, offsets)
		if evs := fl.Poll(); len(evs) != 0 {
			t.Fatalf("the follower saw %d old events", len(evs))
		}
		if n == 100000 {
			f, _ := os.OpenFile(ws[1].Path(), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("nd\"}\n")
			f.Close()
			if evs := fl.Poll(); len(evs) != 1 || evs[0].Event != AgentEnd {
				t.Fatalf("the follower saw %+v after the torn line was ended", evs)
			}
		}
	}
}
