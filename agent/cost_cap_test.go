//go:build !windows

package agent

import (
	"strings"
	"testing"
	"time"
)

// A command agent's run is stopped once what it reported spent passes its
// cost cap: the engine holds the cap the CLI does not (MetersCost). Its
// status is capped (judged as usual), its cost what it reported, and it
// never reaches its end. Spending the cap exactly is within it; without a
// cap, nothing stops it; a negative report never lowers what it spent.
func TestCommandRunStoppedAtItsCostCap(t *testing.T) {
	script := `sh -c 'echo "::looprinter cost_usd=0.30"; sleep 0.2; echo "::looprinter cost_usd=-1"; echo "::looprinter cost_usd=0.30"; sleep 5; echo past the cap; echo "::looprinter cost_usd=0.30"'`
	start := time.Now()
	res := runCommand(t, script, func(r *Request) { r.MaxBudgetUSD = 0.5 })
	if res.Status != StatusCapped || res.CostUSD != 0.6 {
		t.Fatalf("a run past its cap of $0.50: %s, $%v: %s", res.Status, res.CostUSD, res.Error)
	}
	if strings.Contains(res.FinalMessage, "past the cap") || time.Since(start) > 4*time.Second {
		t.Errorf("the run went on past its cap (%s): %q", time.Since(start), res.FinalMessage)
	}
	if !strings.Contains(res.Error, "cost cap") || !strings.Contains(res.Error, "$0.6000") {
		t.Errorf("the reason does not say the cap: %q", res.Error)
	}

	exact := `sh -c 'echo "::looprinter cost_usd=0.25"; echo "::looprinter cost_usd=0.25"; sleep 0.3; echo done'`
	if res := runCommand(t, exact, func(r *Request) { r.MaxBudgetUSD = 0.5 }); res.Status != StatusOK || !strings.Contains(res.FinalMessage, "done") {
		t.Errorf("a run that spent its cap exactly was stopped: %s %s", res.Status, res.Error)
	}
	if res := runCommand(t, exact, nil); res.Status != StatusOK || res.CostUSD != 0.5 {
		t.Errorf("a run without a cap: %s $%v %s", res.Status, res.CostUSD, res.Error)
	}
}

// Which runs are stopped at their cap: Claude Code's by its CLI, a
// command agent's by the engine; Codex and Gemini CLI report what a run
// spent only at its end, so theirs are not.
func TestCapHeld(t *testing.T) {
	for b, want := range map[string]bool{"claude": true, "command": true, "codex": false, "gemini": false, "nonesuch": false} {
		if CapHeld(b) != want {
			t.Errorf("CapHeld(%q) = %v", b, !want)
		}
	}
}
