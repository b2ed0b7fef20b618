package summary

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// The timeline answers a window of time as the records do, whatever the
// window and whatever order the events were folded in: the noted records
// in it (the last KeepNotes of each kind), exact counts when it says so,
// and otherwise counts that hold every record of the window plus at most
// those of the period the window starts in.
func TestWindowAgreesWithTheRecords(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	end := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	kinds := append([]string{record.AgentStart, record.AgentEnd, record.ToolCall}, Noted...)
	var evs []record.Event
	for i := 0; i < 4000; i++ {
		k := kinds[rng.Intn(len(kinds))]
		if noted(k) && rng.Intn(3) > 0 {
			k = record.ToolCall // noted records are rarer
		}
		// most in the last day, some over twenty days, a few a year back
		back := time.Duration(rng.Int63n(int64(24 * time.Hour)))
		switch rng.Intn(10) {
		case 0:
			back = time.Duration(rng.Int63n(int64(20 * 24 * time.Hour)))
		case 1:
			back = time.Duration(rng.Int63n(int64(500 * 24 * time.Hour)))
		}
		evs = append(evs, record.Event{TS: end.Add(-back), Event: k, CostUSD: 0.25, Message: fmt.Sprint("m", i), Kind: "k"})
	}
	fold := func(evs []record.Event) *Summary {
		s := New()
		for _, e := range evs {
			s.Add(e, "f", 0)
		}
		return s
	}
	s := fold(evs)
	shuffled := append([]record.Event(nil), evs...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if !reflect.DeepEqual(s.Timeline, fold(shuffled).Timeline) {
		t.Fatal("the timeline depends on the order the records were folded in")
	}
	if !s.Timeline.ok() || len(s.Timeline.Hours) > KeepHours || len(s.Timeline.Days) > KeepDays {
		t.Fatalf("the timeline breaks its bounds: %d hours %d days %d notes", len(s.Timeline.Hours), len(s.Timeline.Days), len(s.Timeline.Notes))
	}
	sinces := []time.Time{end.Add(-time.Hour), end.Add(-24 * time.Hour), end.Add(-7 * 24 * time.Hour), end.Add(-14 * 24 * time.Hour), end.Add(-3 * 365 * 24 * time.Hour),
		end.Truncate(time.Hour).Add(-5 * time.Hour), end.Add(time.Hour)}
	for i := 0; i < 30; i++ {
		sinces = append(sinces, end.Add(-time.Duration(rng.Int63n(int64(30*24*time.Hour)))))
	}
	for _, since := range sinces {
		w := s.Window(since)
		truth, runs := map[string]int{}, 0
		var notes []Note
		for _, e := range evs {
			if e.TS.Before(since) {
				continue
			}
			if noted(e.Event) {
				truth[e.Event]++
				notes = append(notes, Note{TS: e.TS, Event: e.Event, Kind: e.Kind, Message: e.Message})
			}
			if e.Event == record.AgentStart {
				runs++
			}
		}
		sort.Slice(notes, func(i, j int) bool { return notes[i].before(notes[j]) })
		var lastOf []Note
		per := map[string]int{}
		for i := len(notes) - 1; i >= 0; i-- {
			if per[notes[i].Event] < KeepNotes {
				per[notes[i].Event]++
				lastOf = append([]Note{notes[i]}, lastOf...)
			}
		}
		if len(w.Notes) != len(lastOf) {
			t.Fatalf("since %v: %d notes, want %d", since, len(w.Notes), len(lastOf))
		}
		for i := range lastOf {
			if w.Notes[i].Message != lastOf[i].Message {
				t.Fatalf("since %v: note %d is %s, want %s", since, i, w.Notes[i].Message, lastOf[i].Message)
			}
		}
		for _, k := range Noted {
			if w.Exact && w.Counts[k] != truth[k] || w.Counts[k] < truth[k] {
				t.Fatalf("since %v (exact %v): %d %s, want %d", since, w.Exact, w.Counts[k], k, truth[k])
			}
			if truth[k] <= KeepNotes && per[k] == truth[k] && w.Counts[k] != truth[k] && since.After(end.Add(-KeepDays*24*time.Hour)) {
				t.Fatalf("since %v: %d %s counted, all %d are kept", since, w.Counts[k], k, truth[k])
			}
		}
		if w.Exact && w.Runs != runs || w.Runs < runs {
			t.Fatalf("since %v (exact %v): %d runs, want %d", since, w.Exact, w.Runs, runs)
		}
	}
}
