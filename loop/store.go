package loop

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/statefile"
)

// store is the engine's state on disk and its wall clock: the state (the
// same *State the engine's phases change), its journal and public copies,
// the saves (synced or not) and the wall time folded into the state at each
// save, the wall time a run that died counted after its last save, the
// first write that failed for want of space, and the history's summary
// kept up to date. It is made by openEngine with the engine's values; emit
// is the engine's.
type store struct {
	st   *State
	dir  string             // the loop folder
	priv string             // the engine's private folder for this loop
	rec  *record.Writer     // synced with the state by a durable save
	jr   *statefile.Journal // the engine's copy of the state
	emit func(record.Event)

	ckMu     sync.Mutex       // checkpoints come from the step and from the wall-time ticker
	unsynced bool             // the last save has not been synced (stepEnd, note, tick)
	stateRed *redact.Redactor // the engine's redactor with its results remembered, for the state saved several times a step
	enc      stateEncoder     // the state's members as last saved, encoded again only when changed
	mark     time.Time        // wall time is counted from here since the last checkpoint
	markRem  time.Duration    // wall time below a millisecond, carried to the next checkpoint
	deadWall time.Duration    // wall time the previous run spent after its last save, when it died
	deadPID  int              // that run's pid
	deadAt   time.Time        // that run's last sign of life, when it died with agent runs in flight (dead_run.go)

	space statefile.Full // the first write of the engine's own that failed for want of space

	// summarized is when the history's summary was last brought up to
	// date (tally.go).
	summarized time.Time
}

// setStateRed puts r (remembering its results) in force for the state's saves.
func (s *store) setStateRed(r *redact.Redactor) {
	s.ckMu.Lock()
	s.stateRed = r.Memo()
	s.ckMu.Unlock()
}

// deadRunTail is the wall time a run that died without its final record
// spent after its last save (st.UpdatedAt, the wall time saved then): up
// to its last sign of life, the latest of its last record and its agent
// run's transcript (both written by the engine, as the agent's output
// came), never later than now. 0 when the previous run stopped cleanly.
func deadRunTail(st *State, now time.Time) time.Duration {
	if st.PID == 0 || st.Outcome != "" || st.UpdatedAt.IsZero() {
		return 0
	}
	last := st.UpdatedAt
	if st.Records != "" {
		one := func() ([]string, error) { return []string{st.Records}, nil }
		if evs, _, err := record.TailOf(one, 1, nil); err == nil && len(evs) > 0 && evs[len(evs)-1].TS.After(last) {
			last = evs[len(evs)-1].TS
		}
	}
	if f := st.InFlight; f != nil && f.Transcript != "" {
		for _, p := range []string{f.Transcript, f.Transcript + ".stderr"} {
			if fi, err := os.Stat(p); err == nil && fi.ModTime().After(last) {
				last = fi.ModTime()
			}
		}
	}
	if last.After(now) {
		last = now
	}
	return last.Sub(st.UpdatedAt)
}

// noteDeadWall says how much wall time of a run that died was counted
// after its last save.
func (s *store) noteDeadWall() {
	s.noteJournalDropped()
	if s.deadWall > 0 {
		s.emit(record.Event{Event: record.Warning, Kind: "wall_after_crash", DurationMS: s.deadWall.Milliseconds(),
			Message: fmt.Sprintf("the previous run (pid %d) died without a final record: %s of wall time after its last save, up to its last record or its agent's last output, was counted", s.deadPID, s.deadWall.Round(time.Millisecond))})
	}
}

// noteJournalDropped says what of the state's journal did not check out
// when the engine opened it and was left out (statefile.Journal.Dropped).
func (s *store) noteJournalDropped() {
	if d := s.jr.Dropped(); d != "" {
		s.emit(record.Event{Event: record.Warning, Kind: "state_journal_dropped", Message: "the engine's state journal: " + d})
	}
}

// checkpoint saves the state where it must reach the disk now (a loop
// starting or stopping, a question asked or answered, a crashed run
// judged): it folds elapsed wall time into the state (in full: what is
// below a millisecond is carried to the next save), saves the state to the
// journal and syncs it, syncs the records at the same time, and writes the
// public copy.
func (s *store) checkpoint() error { return s.save(true, true) }

// stepEnd ends a step: the state goes to the journal and the public copy
// without waiting for the disk. The step's state and records reach the disk
// together at the next synced save, which comes before anything that takes
// time or could lose work: the next agent run (checkpointInFlight), the
// next checks (flush), a question, the loop's stop, the engine's close. One
// sync of each file per step (a group commit), and a power loss loses at
// most the step under way and the one before it, which had done nothing
// since but decide what runs next.
func (s *store) stepEnd() error { return s.save(false, true) }

// checkpointInFlight saves, synced, a run about to start (with the records
// of the step before it), so that a crash during the run is judged as one
// when the loop starts again. The public copy is written when the agent has
// started (the OnStart tick), with its process group.
func (s *store) checkpointInFlight() error { return s.save(true, false) }

// flush makes the last saves durable when some are not (before checks run:
// a check can run for minutes).
func (s *store) flush() error {
	s.ckMu.Lock()
	pending := s.unsynced
	s.ckMu.Unlock()
	if !pending {
		return nil
	}
	return s.save(true, false)
}

// note saves the state without waiting for the disk (journal only): enough
// against a crash of the process (the kernel keeps what was written), used
// where a power loss would also end the agent (its process group).
func (s *store) note() error { return s.save(false, false) }

// tick is note with the public copy written too (the wall time while an
// agent runs, every few seconds, for people and tools to see).
func (s *store) tick() error { return s.save(false, true) }

// save saves the state to the journal, with the public copy when copies
// says so. durable syncs the journal and, at the same time, the records:
// both reach the disk before save returns.
func (s *store) save(durable, copies bool) error {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	now := time.Now()
	d := now.Sub(s.mark) + s.markRem
	s.st.WallMS += d.Milliseconds()
	s.markRem = d - time.Duration(d.Milliseconds())*time.Millisecond
	s.mark = now
	var synced chan struct{}
	if durable {
		// The records and the state reach the disk together: one wait for
		// both flushes, not one after the other.
		synced = make(chan struct{})
		go func() { s.rec.Sync(); close(synced) }()
	}
	_, err := s.st.save(s.dir, s.jr, &s.enc, s.stateRed, durable, copies)
	if synced != nil {
		<-synced
	}
	if err == nil {
		s.unsynced = !durable
	}
	s.noteWriteErr(err)
	return err
}

// writePrivateCopy writes the state.json of the private folder, for what
// reads the folder when no engine runs (a fleet carries it to the next
// step's worker); the engine itself reads its journal.
func (s *store) writePrivateCopy() {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	st := redact.Value(s.stateRed, s.st)
	if data, err := json.Marshal(st); err == nil {
		statefile.WritePrivate(s.dir, data)
	}
}

// checkpointEvery saves the state every d while an agent runs, so that a
// crash loses at most d of wall time. The returned func stops it (and may
// be called more than once).
func (s *store) checkpointEvery(d time.Duration) func() {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t, beat := time.NewTicker(d), time.NewTicker(time.Second)
		defer t.Stop()
		defer beat.Stop()
		s.beat()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.tick()
			case <-beat.C:
				s.beat()
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// freeSpace measures a folder's free space (statefile.Free); a variable,
// for the tests.
var freeSpace = statefile.Free

// noSpace is why the loop must stop for want of disk space, or "": a full
// disk (statefile/diskfull.go) under the loop folder or the private one.
func (s *store) noSpace() string { return s.space.Why(freeSpace, s.dir, s.priv) }

// noteWriteErr keeps the first write of the engine's own that failed for
// want of space.
func (s *store) noteWriteErr(err error) { s.space.Note(err) }

func (s *store) wall() time.Duration {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	return time.Duration(s.st.WallMS)*time.Millisecond + time.Since(s.mark)
}

// beat touches the engine's heartbeat file (loopdir.Private.Alive), every
// second while agents run (checkpointEvery).
func (s *store) beat() {
	p := loopdir.Private(s.priv).Alive()
	now := time.Now()
	if os.Chtimes(p, now, now) != nil {
		os.WriteFile(p, nil, 0o600)
	}
}

// with runs f holding the state's save lock: what a run of a wave changes
// in the state while the others run and the ticker saves it.
func (s *store) with(f func()) {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	f()
}
