package sandbox

import (
	"slices"
	"testing"
)

// TestPinViewSockets: the sockets Landlock lets a run connect to are the
// manifest's Socket entries only (sandbox.allow_sockets), in order; a
// read-only, writable or fresh entry is never one, even beside a socket of
// the same folder.
func TestPinViewSockets(t *testing.T) {
	m := Manifest{
		{Path: "/run/user/1000/bus", How: ReadOnlyBind},
		{Path: "/srv/app/db.sock", How: Socket},
		{Path: "/srv/app", How: WritableBind},
		{Path: "/run", How: Fresh},
		{Path: "/srv/app/cache.sock", How: Socket},
	}
	if got, want := m.sockets(), []string{"/srv/app/db.sock", "/srv/app/cache.sock"}; !slices.Equal(got, want) {
		t.Errorf("sockets() = %q, want %q", got, want)
	}
	if got := (Manifest{{Path: "/tmp/agent.sock", How: ReadOnlyBind}}).sockets(); got != nil {
		t.Errorf("a manifest without Socket entries lets in %q", got)
	}
}
