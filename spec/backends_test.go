package spec

import (
	"slices"
	"testing"

	"github.com/looprinter/looprinter/agent"
)

// The names a loop file may use are the registry's (each backend declares
// itself in agent/), in today's order.
func TestBackendsAreTheRegistry(t *testing.T) {
	if !slices.Equal(Backends, agent.Names()) {
		t.Errorf("spec.Backends %v, registry %v", Backends, agent.Names())
	}
	if !slices.Equal(Backends, []string{"claude", "codex", "gemini", "command"}) {
		t.Errorf("spec.Backends %v", Backends)
	}
}
