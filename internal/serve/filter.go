package serve

import "strings"

// filterRows keeps the loop list's rows that match state ("running": the
// loops that run, wait, are paused or starting; "finished": the others;
// "" every one) and text (in the name, key, shape, state, phase, outcome
// or status line, case-insensitive; "" every one).
func filterRows(rows []Row, state, text string) []Row {
	text = strings.ToLower(strings.TrimSpace(text))
	var out []Row
	for _, r := range rows {
		switch state {
		case "running":
			if !r.Live {
				continue
			}
		case "finished":
			if r.Live {
				continue
			}
		}
		if text != "" && !strings.Contains(strings.ToLower(strings.Join([]string{r.Name, r.Key, r.Shape, r.State, r.Phase, r.Outcome, r.Line}, "\n")), text) {
			continue
		}
		out = append(out, r)
	}
	return out
}
