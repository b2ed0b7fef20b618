package judge

import (
	"strings"

	"github.com/looprinter/looprinter/sandbox"
)

// WithViewHint adds to a failed check's failure signal, after its own
// lines, a line for each path its output says it could not find that
// exists on the host outside the check box's view ("PATH is outside the
// sandbox's view; add it to sandbox.allow_read in loop.yaml"): the user
// sees what the check needs and the field that lets it in. env is the
// check's environment (its HOME and toolchains). A check that passed, or
// whose output names no such path, is returned as it is.
func WithViewHint(box *sandbox.CheckBox, env []string, r CheckResult) CheckResult {
	if r.Pass || box == nil || confinementFailure(r) != "" {
		return r // a check the engine could not confine never ran: no path of its is to blame
	}
	hints := sandbox.OutsideViewHints(readLog(r.Check.Output), func(p string) bool { return box.InView(p, env) })
	if len(hints) == 0 {
		return r
	}
	r.Lines = append(append([]string(nil), r.Lines...), hints...)
	r.Signal = strings.Join(r.Lines, "\n")
	return r
}
