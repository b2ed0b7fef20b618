//go:build !linux

package loop

import "github.com/looprinter/looprinter/loopdir"

// readPlan is ReadPlan for the engine's own plan.json, parsed every time
// (the Linux version keeps it while the file's stat does not change).
func (e *Engine) readPlan() (*Plan, []string, error) {
	e.planCache = nil
	return ReadPlan(loopdir.Dir(e.dir).Plan())
}
