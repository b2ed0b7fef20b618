package confine

import (
	"io"
	"os"
	"strings"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// outsideViewTail is how much of a failed run's transcript is read for the
// paths it could not find.
const outsideViewTail = 256 << 10

// OutsideView names, for an agent run of loop l that failed, the paths its output
// (the end of its transcript and standard error, its error) says it could
// not find that exist on the host outside the run's view, each with the
// field of loop.yaml that lets it in: one line each, "" when none.
func OutsideView(l *spec.Loop, res agent.Result) string {
	p, err := Policy(l, nil)
	if err != nil || p.Kind == sandbox.Off {
		return ""
	}
	p.View, p.Shown = View(l), Shown(l)
	text := tailOf(res.Transcript) + "\n" + tailOf(res.Transcript+".stderr") + "\n" + res.Error
	hints := sandbox.OutsideViewHints(text, p.InView)
	if len(hints) == 0 {
		return ""
	}
	return "\n" + strings.Join(hints, "\n")
}

// tailOf is the last outsideViewTail bytes of a file ("" when it cannot
// be read).
func tailOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > outsideViewTail {
		f.Seek(fi.Size()-outsideViewTail, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, outsideViewTail))
	return string(b)
}
