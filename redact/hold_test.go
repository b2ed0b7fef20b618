package redact

import (
	"strings"
	"testing"
)

func TestHeldValueIsRedactedByEveryNewRedactor(t *testing.T) {
	const v = "heldSecretValue_0123456789"
	before := New(nil, nil, nil)
	Hold("forge_token", v)
	Hold("forge_token", v) // twice: held once
	Hold("short", "abc")   // shorter than MinValue: ignored, as in New
	if n := len(heldValues()); n != 2 {
		t.Fatalf("held %d values", n)
	}
	after := New(nil, nil, nil)
	if got := after.String("x " + v + " y"); got != "x [REDACTED:forge_token] y" {
		t.Fatalf("got %q", got)
	}
	if got := after.String("abc"); got != "abc" {
		t.Fatalf("a short value was redacted: %q", got)
	}
	if !strings.Contains(strings.Join(after.Names(), ","), "forge_token") {
		t.Fatalf("names %v", after.Names())
	}
	// A redactor built before keeps what it had.
	if got := before.String(v); got != v {
		t.Fatalf("before: %q", got)
	}
}
