package loop

import "testing"

// The best state a failed stop goes back to is never a tree whose passes
// may be the agent's forgery (runner files the agent added, no clean room
// passed there), however many checks passed on it.
func TestLedgerBestSkipsGamed(t *testing.T) {
	led := Ledger{Checkpoints: []Checkpoint{
		{Commit: "base", Checks: map[string]bool{"a": true, "b": false}},
		{Commit: "gamed", Checks: map[string]bool{"a": true, "b": true}, Gamed: true},
		{Commit: "later", Checks: map[string]bool{"a": false, "b": false}},
	}}
	best, ok := led.Best()
	if !ok || best.Commit != "base" {
		t.Fatalf("Best = %q, %v; want the honest checkpoint with the most passes (base)", best.Commit, ok)
	}
	led.Checkpoints[1].Gamed = false
	if best, _ := led.Best(); best.Commit != "gamed" {
		t.Fatalf("with the clean room passing there, Best = %q; want gamed", best.Commit)
	}
	only := Ledger{Checkpoints: []Checkpoint{{Commit: "x", Checks: map[string]bool{"a": true}, Gamed: true}}}
	if _, ok := only.Best(); ok {
		t.Fatal("a ledger of gamed checkpoints only has no best state")
	}
}
