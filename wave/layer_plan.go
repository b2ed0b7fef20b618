// A run's plan.json in its layer: what the run left of the plan, read
// before the apply and taken out of the layer (the folder's plan is the
// engine's to write).

package wave

import (
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/plan"
	"github.com/looprinter/looprinter/sandbox"
)

// TakeLayerPlan reads the plan a run left in its layer (nil when it left
// none that reads: then its task is not marked) and takes it out of the
// layer: the folder's plan stays the engine's.
func TakeLayerPlan(l sandbox.Layer) *plan.Plan {
	pl := LayerPlan(l)
	p := filepath.Join(l.Upper, loopdir.OutputDir, "plan.json")
	if _, err := os.Lstat(p); err == nil {
		os.RemoveAll(p)
	}
	return pl
}

// LayerPlan is the plan a run left, read from its layer before the apply
// (where the layer holds none, the folder's): nil when none reads.
func LayerPlan(l sandbox.Layer) *plan.Plan {
	p := filepath.Join(l.Upper, loopdir.OutputDir, "plan.json")
	fi, err := os.Lstat(p)
	if err != nil {
		if parent, perr := os.Lstat(filepath.Dir(p)); perr == nil && parent.IsDir() && sandbox.Opaque(filepath.Dir(p)) {
			return nil // output/ replaced whole, without a plan
		}
		// Not in the layer: the run left the folder's plan as it was.
		p = filepath.Join(l.Target, loopdir.OutputDir, "plan.json")
	} else if !fi.Mode().IsRegular() {
		return nil
	}
	pl, errs, err := plan.Read(p)
	if err != nil || len(errs) > 0 {
		return nil
	}
	return pl
}
