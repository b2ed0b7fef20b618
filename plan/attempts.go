package plan

import (
	"encoding/json"
	"fmt"

	"github.com/looprinter/looprinter/spec"
)

// readAttempts reads a task's attempts: a whole number from 1 to
// spec.MaxBestOf (null: left out). name names the task in messages.
func readAttempts(name string, v json.RawMessage, errs []string) (int, []string) {
	if string(v) == "null" {
		return 0, errs
	}
	var n int
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, append(errs, fmt.Sprintf(`%s: "attempts" must be a whole number from 1 to %d (the tries of the task run at once), got %s`, name, spec.MaxBestOf, truncate(string(v), 40)))
	}
	if n < 1 || n > spec.MaxBestOf {
		return 0, append(errs, fmt.Sprintf(`%s: "attempts" is %d; a task may be tried 1 to %d times at once`, name, n, spec.MaxBestOf))
	}
	return n, errs
}
