package judge

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/checkcmd"
)

// RunnerCannotStart reads the output of the baseline's failing checks and
// says which of them failed because their test runner (or a module or
// script it needs) could not start — `No module named pytest`, `command not
// found` (exit 127), a missing npm script — with what to install ("" when
// none did). Such a check judged nothing and no agent run can fix it: the
// loop stops BLOCKED before any agent run. Read it at the baseline only:
// later, the agent's code could print any of those lines.
func (j *Judge) RunnerCannotStart(results []CheckResult) string {
	var cannot []string
	for _, r := range results {
		if r.Pass || r.TimedOut || r.Output == "" {
			continue
		}
		missing, hint := checkcmd.RunnerMissingLog(r.Output, r.ExitCode)
		if !missing {
			continue
		}
		cannot = append(cannot, fmt.Sprintf("the check `%s` cannot start its test runner (exit %d): %s", r.Command, r.ExitCode, hint))
	}
	if len(cannot) == 0 {
		return ""
	}
	return strings.Join(cannot, "\n") + "\n(no agent ran: a check whose runner cannot start judges nothing, and no change to the code can fix it; fix the environment and run again)"
}
