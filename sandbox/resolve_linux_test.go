package sandbox

import (
	"strings"
	"testing"
)

// On Linux seatbelt is refused by name, and never chosen by auto.
func TestSeatbeltRefusedOnLinux(t *testing.T) {
	if _, err := Resolve(Seatbelt); err == nil || !strings.Contains(err.Error(), "macOS") {
		t.Fatalf("Resolve(seatbelt) = %v, want an error naming macOS", err)
	}
	if k, err := Resolve(Auto); err == nil && k == Seatbelt {
		t.Fatal("auto picked seatbelt on Linux")
	}
	p := Policy{Kind: Seatbelt, Dir: t.TempDir()}
	if _, _, _, err := p.Wrap("/bin/true", nil); err == nil || !strings.Contains(err.Error(), "seatbelt") {
		t.Fatalf("Wrap under seatbelt on Linux = %v, want the probe's error", err)
	}
}
