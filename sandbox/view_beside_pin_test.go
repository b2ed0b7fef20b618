package sandbox

import (
	"reflect"
	"testing"
)

// beside leaves out only the read-only entries inside a writable tree (the
// tree's bind shows them); a socket or a fresh folder inside it stays, and
// so does a read-only entry beside it that only shares its prefix.
func TestPinViewBeside(t *testing.T) {
	m := Manifest{
		{Path: "/home/u/.cargo", How: ReadOnlyBind},
		{Path: "/home/u/run/db.sock", How: Socket},
		{Path: "/home/u/tmp", How: Fresh},
		{Path: "/home/uu/.rustup", How: ReadOnlyBind},
		{Path: "/usr", How: ReadOnlyBind},
	}
	got := m.beside([]string{"/home/u"})
	want := Manifest{m[1], m[2], m[3], m[4]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("beside = %v, want %v", got, want)
	}
	if got := m.beside(nil); !reflect.DeepEqual(got, m) {
		t.Errorf("beside no tree = %v", got)
	}
}
