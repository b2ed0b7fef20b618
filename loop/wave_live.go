package loop

import (
	"os"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/wave"
)

// Live output of a wave's runs (wave/live.go): each run writes its
// transcript out of every run's sight while the wave runs; once every run
// ended and nothing of them is left, the transcripts move to the loop's
// working-records/transcripts/ under the names the records give them.

// liveTranscript is where rn writes the transcript that ends up at final,
// while the wave runs.
func (r *runner) liveTranscript(rn *waveRun, final string) string {
	live := wave.LiveTranscript(r.priv, rn.id, final)
	rn.live = append(rn.live, [2]string{live, final})
	return live
}

// publishTranscripts moves the transcripts of the wave's runs, every one
// of which ended, to the loop's transcripts.
func (r *runner) publishTranscripts(runs []*waveRun) {
	for _, rn := range runs {
		for _, p := range rn.live {
			for _, ext := range []string{"", ".stderr"} {
				if err := wave.MoveFile(p[0]+ext, p[1]+ext); err != nil && !os.IsNotExist(err) {
					r.emit(record.Event{Event: record.Warning, AgentRun: rn.id, Message: "the transcript of the run for " + rn.task.ID + " could not be kept: " + err.Error()})
				}
			}
		}
		if n := len(rn.live); n > 0 {
			r.store.with(func() { rn.fl.Transcript = rn.live[n-1][1] })
		}
		rn.live = nil
	}
}

// publishLeftTranscripts moves, at a restart, the live transcripts of a
// wave the engine died in to the loop's transcripts (the runs are gone),
// and points the runs still in flight at them, so that each is judged
// from, and its record names, its transcript where the records keep them.
func (r *runner) publishLeftTranscripts() {
	moved := wave.PublishLeft(r.dir, r.priv)
	for _, f := range append([]*InFlight{r.st.InFlight}, r.st.InFlightMore...) {
		if f != nil && moved[f.Transcript] != "" {
			f.Transcript = moved[f.Transcript]
		}
	}
}
