package sandbox

import (
	"strings"
	"testing"
)

// Only a bwrap box lays a layer under its checks' view; elsewhere the
// caller gives a prepared copy, and a box asked for one is refused.
func TestCheckBoxLowerNeedsBwrap(t *testing.T) {
	for _, kind := range []string{Off, Landlock} {
		_, err := NewCheckBox(CheckBoxOptions{Kind: kind, Tree: t.TempDir(), Lower: []string{t.TempDir()}})
		if err == nil || !strings.Contains(err.Error(), "a layer laid over it needs bwrap") {
			t.Errorf("%s: %v", kind, err)
		}
	}
}
