package loop

// TasksInProgress lists the tasks whose build runs are under way in st, in
// slot order and each once: every task of a wave (parallel: N), the task
// of a best-of, or the one task a single build run works on. None outside
// the build phase.
func TasksInProgress(st *State) []string {
	if st == nil || st.Phase != PhaseBuild {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range WaveInFlight(st) {
		if f.Task != "" && !seen[f.Task] {
			seen[f.Task] = true
			out = append(out, f.Task)
		}
	}
	if len(out) == 0 && st.CurrentTask != "" {
		out = append(out, st.CurrentTask)
	}
	return out
}
