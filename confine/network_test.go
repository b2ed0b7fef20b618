package confine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

// The state's list of refused hosts: each host once, the checks' marked,
// other records left out, and no more than maxRefused.
func TestNoteRefused(t *testing.T) {
	var list []string
	for _, ev := range []record.Event{
		{Event: record.NetRefused, To: "evil.example:443"},
		{Event: record.NetRefused, To: "evil.example:443"},
		{Event: record.NetRefused, To: "pypi.org:443", Phase: "checks"},
		{Event: record.NetRefused},
		{Event: record.Warning, To: "other.example:443"},
	} {
		list = NoteRefused(list, ev)
	}
	if want := []string{"evil.example:443", "pypi.org:443 (checks)"}; !slices.Equal(list, want) {
		t.Fatalf("refused hosts %v, want %v", list, want)
	}
	for i := range 30 {
		list = NoteRefused(list, record.Event{Event: record.NetRefused, To: fmt.Sprintf("h%d.example:443", i)})
	}
	if len(list) != maxRefused {
		t.Errorf("%d refused hosts kept, want %d", len(list), maxRefused)
	}
}

// A run during which the proxy refused nothing has no fix to name; one
// during which it refused hosts names them and the field that allows one.
func TestRefusedFix(t *testing.T) {
	var n Network
	if fix := n.RefusedFix(); fix != "" {
		t.Errorf("no host refused, yet the fix %q", fix)
	}
	n.refused = []string{"api.example:443", "gw.example:443"}
	fix := n.RefusedFix()
	for _, want := range []string{"api.example:443, gw.example:443", "network: {allow: [api.example:443]}"} {
		if !strings.Contains(fix, want) {
			t.Errorf("fix %q lacks %q", fix, want)
		}
	}
}
