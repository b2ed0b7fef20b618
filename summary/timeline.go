package summary

import (
	"sort"
	"time"

	"github.com/looprinter/looprinter/record"
)

// The records a window of time is asked about (`looprinter report
// --since`): counted by the hour and by the day, and the last KeepNotes of
// each kept with their time and message.
var Noted = []string{record.Rollback, record.Land, record.AgentFailover, record.Violation, record.AttemptJudged}

// The bounds of the timeline.
const (
	KeepHours = 8 * 24 // hourly counts: the last eight days
	KeepDays  = 400    // daily counts: the last 400 days
	KeepNotes = 32     // records of each noted kind kept whole
)

// Period is what was counted in one hour or one day (Key: its start, Unix
// seconds, UTC): Noted kinds and agent runs, and what the runs that ended
// in it cost.
type Period struct {
	Key     int64          `json:"k"`
	Counts  map[string]int `json:"c,omitempty"`
	Runs    int            `json:"runs,omitempty"`
	CostUSD float64        `json:"cost,omitempty"`
}

// Note is one noted record: its time, kind, kind of violation and message
// (cut to maxNote bytes).
type Note struct {
	TS      time.Time `json:"ts"`
	Event   string    `json:"event"`
	Kind    string    `json:"kind,omitempty"`
	Message string    `json:"message,omitempty"`
}

// Timeline is the records by time: Hours and Days, oldest first, each
// kept within its bound of the newest; Notes, oldest first, the last
// KeepNotes of each noted kind.
type Timeline struct {
	Hours []Period `json:"hours"`
	Days  []Period `json:"days"`
	Notes []Note   `json:"notes"`
}

func noted(kind string) bool {
	for _, k := range Noted {
		if k == kind {
			return true
		}
	}
	return false
}

// addTime folds one event into the timeline. Whatever the order events
// come in (files are folded one after the other), the result is the
// same: a period older than its bound of the newest one is dropped.
func (tl *Timeline) addTime(e record.Event) {
	if e.TS.IsZero() {
		return
	}
	run := e.Event == record.AgentStart
	cost := 0.0
	if e.Event == record.AgentEnd || e.Event == record.AgentRetry {
		cost = e.CostUSD
	}
	if !run && cost == 0 && !noted(e.Event) {
		return
	}
	t := e.TS.Unix()
	tl.Hours = addPeriod(tl.Hours, floorTo(t, 3600), 3600*KeepHours, e.Event, run, cost)
	tl.Days = addPeriod(tl.Days, floorTo(t, 86400), 86400*KeepDays, e.Event, run, cost)
	if !noted(e.Event) {
		return
	}
	n := Note{TS: e.TS.UTC(), Event: e.Event, Kind: cutNote(e.Kind), Message: cutNote(e.Message)}
	i := sort.Search(len(tl.Notes), func(i int) bool { return n.before(tl.Notes[i]) })
	tl.Notes = append(tl.Notes, Note{})
	copy(tl.Notes[i+1:], tl.Notes[i:])
	tl.Notes[i] = n
	count := 0
	for _, x := range tl.Notes {
		if x.Event == e.Event {
			count++
		}
	}
	if count > KeepNotes { // the oldest of its kind goes
		for j, x := range tl.Notes {
			if x.Event == e.Event {
				tl.Notes = append(tl.Notes[:j], tl.Notes[j+1:]...)
				break
			}
		}
	}
}

// maxNote is how much of a noted record's message is kept: the report
// shows one line of it.
const maxNote = 512

// cutNote is s cut to maxNote bytes, not inside a character.
func cutNote(s string) string {
	if len(s) <= maxNote {
		return s
	}
	s = s[:maxNote]
	for len(s) > 0 && s[len(s)-1]&0xc0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xc0 {
		s = s[:len(s)-1]
	}
	return s + "…"
}

func (n Note) before(m Note) bool {
	if !n.TS.Equal(m.TS) {
		return n.TS.Before(m.TS)
	}
	if n.Event != m.Event {
		return n.Event < m.Event
	}
	if n.Kind != m.Kind {
		return n.Kind < m.Kind
	}
	return n.Message < m.Message
}

// addPeriod counts one event in the period at key of ps, and drops the
// periods span or more older than the newest.
func addPeriod(ps []Period, key, span int64, kind string, run bool, cost float64) []Period {
	if len(ps) > 0 && key <= ps[len(ps)-1].Key-span {
		return ps // older than what is kept
	}
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Key >= key })
	if i == len(ps) || ps[i].Key != key {
		ps = append(ps, Period{})
		copy(ps[i+1:], ps[i:])
		ps[i] = Period{Key: key}
	}
	p := &ps[i]
	if noted(kind) {
		if p.Counts == nil {
			p.Counts = map[string]int{}
		}
		p.Counts[kind]++
	}
	if run {
		p.Runs++
	}
	p.CostUSD += cost
	newest := ps[len(ps)-1].Key
	k := 0
	for k < len(ps) && ps[k].Key <= newest-span {
		k++
	}
	return append(ps[:0:0], ps[k:]...)
}

// Window is what the records say of a window of time: the noted records
// in it (the last KeepNotes of each kind), how many of each kind and how
// many agent runs there were, and what the runs that ended in it cost.
// Exact says the counts are exact; when a kind had more records in the
// window than are kept, or the window starts inside a period, its count
// and the runs and cost come from the hours (or the days, for a window
// longer than KeepHours), counting the whole period the window starts in.
type Window struct {
	Since   time.Time      `json:"since"`
	Notes   []Note         `json:"notes,omitempty"`
	Counts  map[string]int `json:"counts"`
	Runs    int            `json:"runs"`
	CostUSD float64        `json:"cost_usd"`
	Exact   bool           `json:"exact"`
}

// Window is the records from since on, read from the timeline only: its
// cost does not depend on the history's length or the window's.
func (s *Summary) Window(since time.Time) Window {
	w := Window{Since: since, Counts: map[string]int{}, Exact: true}
	tl := s.Timeline
	ps, width := tl.Hours, int64(3600)
	if len(ps) == 0 || since.Unix() <= ps[len(ps)-1].Key-3600*KeepHours {
		ps, width = tl.Days, 86400
	}
	from := floorTo(since.Unix(), width)
	if from != since.Unix() {
		w.Exact = false
	}
	if len(ps) > 0 && from <= ps[len(ps)-1].Key-86400*KeepDays {
		// Older than the days kept: the whole history.
		for _, k := range Noted {
			w.Counts[k] = s.Kinds[k]
		}
		w.Runs, w.CostUSD, w.Exact, ps = s.Runs, s.CostUSD, false, nil
	}
	for _, p := range ps {
		if p.Key < from {
			continue
		}
		for k, n := range p.Counts {
			w.Counts[k] += n
		}
		w.Runs += p.Runs
		w.CostUSD += p.CostUSD
	}
	kept := map[string]int{}
	oldest := map[string]time.Time{}
	for _, n := range tl.Notes {
		if _, ok := oldest[n.Event]; !ok {
			oldest[n.Event] = n.TS
		}
		if !n.TS.Before(since) {
			w.Notes = append(w.Notes, n)
			kept[n.Event]++
		}
	}
	for _, k := range Noted {
		// The notes hold every record of the kind in the window when
		// one older than the window is kept, or when none was dropped.
		if o, ok := oldest[k]; (ok && o.Before(since)) || s.Kinds[k] <= KeepNotes {
			w.Counts[k] = kept[k]
		} else {
			w.Counts[k] = max(w.Counts[k], kept[k])
		}
		if w.Counts[k] == 0 {
			delete(w.Counts, k)
		}
	}
	return w
}

// ok says whether a timeline read back keeps its bounds.
func (tl Timeline) ok() bool {
	if len(tl.Hours) > KeepHours+1 || len(tl.Days) > KeepDays+1 || len(tl.Notes) > KeepNotes*len(Noted) {
		return false
	}
	for _, ps := range [][]Period{tl.Hours, tl.Days} {
		if !sort.SliceIsSorted(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key }) {
			return false
		}
	}
	return sort.SliceIsSorted(tl.Notes, func(i, j int) bool { return tl.Notes[i].before(tl.Notes[j]) })
}
