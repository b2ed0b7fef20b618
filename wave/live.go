package wave

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
)

// Live output of a wave's runs: while any run of a wave (or attempt of a
// best-of) runs, each writes its transcript in the engine's private
// folder (loopdir.Private.LiveTranscripts), which no run's sandbox shows,
// so no run reads another's output as it is written. Once every run
// ended, the transcripts move to the loop's transcripts under the names
// the records give them (MoveFile); at a restart, those of a wave the
// engine died in move there too (PublishLeft).

// LiveTranscript is where the run id writes, while the wave runs, the
// transcript that ends up at final; priv is the engine's private folder.
func LiveTranscript(priv, id, final string) string {
	return filepath.Join(loopdir.Private(priv).LiveTranscripts(), id+"-"+filepath.Base(final))
}

// PublishLeft moves the live transcripts left in priv by a wave the engine
// died in to the transcripts of the loop folder dir, each under the name
// its record gives it (made unique there), and returns where each went.
func PublishLeft(dir, priv string) map[string]string {
	live := loopdir.Private(priv).LiveTranscripts()
	ents, err := os.ReadDir(live)
	if err != nil {
		return nil
	}
	tdir := loopdir.Dir(dir).Transcripts()
	os.MkdirAll(tdir, 0o700)
	moved := map[string]string{}
	for _, en := range ents {
		_, name, ok := strings.Cut(en.Name(), "-") // "rN-" before the records' name
		if !ok || !en.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(live, en.Name()), loopdir.UniquePath(filepath.Join(tdir, name))
		if MoveFile(from, to) == nil {
			moved[from] = to
		}
	}
	return moved
}

// MoveFile moves a file, by a copy where the two folders are on different
// file systems.
func MoveFile(from, to string) error {
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
