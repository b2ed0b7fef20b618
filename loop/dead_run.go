package loop

import (
	"os"
	"strings"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// A run the engine died in (SIGKILL, `looprinter stop --now`, a power
// loss) is judged when the loop starts again. Its agent_end says what
// happened: killed with the engine (the agent dies with it: SIGKILL), and
// how long it ran, from its start to the engine's last sign of life (its
// heartbeat, every second while agents run; its last save; its last
// record, which stop --now writes as it kills; or the run's last output); or, for a run whose process had ended before
// the engine died, when that was, with no exit status (none was
// collected). Never "exit -1 … 0.0s".

// lastSignOfLife is the latest of the state's last save, the last record
// of its record file and the engine's heartbeat while agents run (beat):
// the last time an engine that died with runs in flight is known to have
// been alive (now at the latest).
func lastSignOfLife(st *State, priv string, now time.Time) time.Time {
	if st.InFlight == nil && len(st.InFlightMore) == 0 {
		return time.Time{}
	}
	last := st.UpdatedAt
	if fi, err := os.Stat(loopdir.Private(priv).Alive()); err == nil && fi.ModTime().After(last) {
		last = fi.ModTime()
	}
	if st.Records != "" {
		one := func() ([]string, error) { return []string{st.Records}, nil }
		if evs, _, err := record.TailOf(one, 1, nil); err == nil && len(evs) > 0 && evs[len(evs)-1].TS.After(last) {
			last = evs[len(evs)-1].TS
		}
	}
	if last.After(now) {
		last = now
	}
	return last
}

// deadRunTimes fills in how the run f, which the engine died in, ended:
// res is what its transcript says.
func (r *runner) deadRunTimes(f *InFlight, res *agent.Result) {
	if !f.Ended.IsZero() {
		// Its process had ended; the engine died before it judged it.
		res.Ended, res.ExitCode = f.Ended, exitUnknown
		res.Error = "the engine died during this run, after its process ended and before the engine judged it; it was judged when the loop started again"
	} else {
		res.Ended, res.Signal = r.store.deadAt, "SIGKILL"
		res.Error = "killed with the engine: the engine died during this run (a crash, or looprinter stop --now); it was judged when the loop started again"
		for _, p := range []string{f.Transcript, f.Transcript + ".stderr"} {
			if fi, err := os.Stat(p); err == nil && fi.ModTime().After(res.Ended) {
				res.Ended = fi.ModTime() // its last output
			}
		}
	}
	if res.Ended.IsZero() || f.Started.IsZero() || res.Ended.Before(f.Started) {
		res.Ended = time.Time{}
		return // a state of an older version: no start known
	}
	res.Ended = res.Ended.UTC()
	res.Duration = res.Ended.Sub(f.Started)
}

// judgeDead judges the run in flight the engine died in (judgeDeadRun),
// its records carrying its run id and slot when it was a run of a wave.
func (r *runner) judgeDead() error {
	if f := r.st.InFlight; f != nil && f.Run != "" {
		defer r.tags.set(judging{run: f.Run, slot: f.Slot + 1})()
	}
	return r.judgeDeadRun()
}

// judgeDeadRun judges an agent run that was under way when the engine died
// (killed, out of memory, power loss), exactly as a live run is judged:
// what it reported is counted, the protected files are compared with the
// on-disk snapshot and restored, and plan marks no live engine judged are
// taken back, so the task runs again.
func (r *runner) judgeDeadRun() error {
	f := r.st.InFlight
	a := r.spec().AgentFor(f.Phase, f.Post)
	if ad, err := agent.Lookup(a.Backend); err == nil && f.Transcript != "" {
		req := agent.Request{Phase: f.Phase, Task: f.Task, Dir: r.dir, Backend: a.Backend, Model: a.Model, Prices: prices(r.spec().Prices), Transcript: f.Transcript}
		res := agent.ParseTranscript(req, ad)
		r.deadRunTimes(f, &res)
		r.st.CostUSD += res.CostUSD
		r.endRecord(f.Phase, f.Task, a, res, nil)
	}
	var problems []string
	// The protected files against the snapshot on disk; what the run
	// created is not known: every protected file the snapshot lacks counts.
	tamper, err := r.guard.RestoreSaved()
	r.recordTamper(f.Phase, f.Task, tamper)
	if err != nil {
		return err
	}
	if len(tamper) > 0 {
		problems = append(problems, tamperNote(tamper))
	}
	if r.spec().Shape == "cycle" {
		problems = append(problems, r.enforceJudgedPlan(f.Task, "the "+f.Phase+" run that died with the engine")...)
	}
	if len(problems) > 0 {
		r.st.LastFailure = strings.Join(problems, "\n")
		r.deadFailed = append(r.deadFailed, f.Task)
	}
	r.st.InFlight = nil
	return r.store.checkpoint()
}
