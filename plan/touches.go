package plan

import (
	"encoding/json"
	"fmt"
)

// readTouches reads a task's touches: an array of globs of the files its
// run may change (wave/touches.go), each checked. name names the task in
// messages.
func readTouches(name string, v json.RawMessage, errs []string) ([]string, []string) {
	if string(v) == "null" {
		return nil, errs
	}
	var globs []string
	if err := json.Unmarshal(v, &globs); err != nil {
		return nil, append(errs, fmt.Sprintf(`%s: "touches" must be an array of file globs like ["src/api/**", "docs/api.md"], got %s`, name, truncate(string(v), 40)))
	}
	if len(globs) > MaxTouches {
		return nil, append(errs, fmt.Sprintf(`%s: "touches" holds %d globs; a task may declare at most %d`, name, len(globs), MaxTouches))
	}
	ok := true
	for _, g := range globs {
		if why := GlobProblem(g); why != "" {
			errs, ok = append(errs, fmt.Sprintf(`%s: "touches" glob %q %s`, name, truncate(g, 60), why)), false
		}
	}
	if !ok {
		return nil, errs
	}
	return globs, errs
}
