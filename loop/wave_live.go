package loop

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// Live output of a wave's runs: while any run of a wave (or attempt of a
// best-of) runs, each writes its transcript in the engine's private folder
// (loopdir.Private.LiveTranscripts), which no run's sandbox shows, so no
// run reads another's output as it is written. Once every run ended and
// nothing of them is left, the transcripts move to the loop's
// working-records/transcripts/ under the names the records give them.

// liveTranscript is where rn writes the transcript that ends up at final,
// while the wave runs.
func (r *runner) liveTranscript(rn *waveRun, final string) string {
	live := filepath.Join(loopdir.Private(r.priv).LiveTranscripts(), rn.id+"-"+filepath.Base(final))
	rn.live = append(rn.live, [2]string{live, final})
	return live
}

// publishTranscripts moves the transcripts of the wave's runs, every one
// of which ended, to the loop's transcripts.
func (r *runner) publishTranscripts(runs []*waveRun) {
	for _, rn := range runs {
		for _, p := range rn.live {
			for _, ext := range []string{"", ".stderr"} {
				if err := moveFile(p[0]+ext, p[1]+ext); err != nil && !os.IsNotExist(err) {
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

// moveFile moves a file, by a copy where the two folders are on different
// file systems.
func moveFile(from, to string) error {
	if err := os.Rename(from, to); err == nil || os.IsNotExist(err) {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(to)
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Remove(from)
}

// publishLeftTranscripts moves, at a restart, the live transcripts of a
// wave the engine died in to the loop's transcripts (the runs are gone),
// and points the runs still in flight at them, so that each is judged
// from, and its record names, its transcript where the records keep them.
func (r *runner) publishLeftTranscripts() {
	live := loopdir.Private(r.priv).LiveTranscripts()
	ents, err := os.ReadDir(live)
	if err != nil {
		return
	}
	tdir := loopdir.Dir(r.dir).Transcripts()
	os.MkdirAll(tdir, 0o700)
	moved := map[string]string{}
	for _, en := range ents {
		_, name, ok := strings.Cut(en.Name(), "-") // "rN-" before the records' name
		if !ok || !en.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(live, en.Name()), loopdir.UniquePath(filepath.Join(tdir, name))
		if moveFile(from, to) == nil {
			moved[from] = to
		}
	}
	for _, f := range append([]*InFlight{r.st.InFlight}, r.st.InFlightMore...) {
		if f != nil && moved[f.Transcript] != "" {
			f.Transcript = moved[f.Transcript]
		}
	}
}
