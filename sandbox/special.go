package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// An apply keeps no special bits: a file or folder an agent made setuid,
// setgid or sticky reaches the loop folder without those bits (a setuid
// program left in a project runs with its owner's rights for whoever runs
// it), and a device, a fifo or a socket never reaches it at all.

// specialBits names the special bits of m ("" when none).
func specialBits(m os.FileMode) string {
	var out []string
	if m&os.ModeSetuid != 0 {
		out = append(out, "setuid")
	}
	if m&os.ModeSetgid != 0 {
		out = append(out, "setgid")
	}
	if m&os.ModeSticky != 0 {
		out = append(out, "sticky")
	}
	return strings.Join(out, ", ")
}

// StripInPlace is the apply's rule for a run that wrote the loop folder
// dir in place (Landlock, off: no layer): of the paths it changed or
// created (relative, with slashes), a file or folder with special bits
// loses them, and a device, a fifo or a socket is removed. It lists what
// it did, as an apply's changes: Stripped for the bits, Why for a special
// file. A path under a link is left alone (nothing is done through one).
func StripInPlace(dir string, rels []string) []LayerChange {
	var out []LayerChange
	for _, rel := range rels {
		if rel == "" || !nshelper.RealParent(dir, rel) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		m := fi.Mode()
		switch {
		case m&(os.ModeDevice|os.ModeCharDevice|os.ModeNamedPipe|os.ModeSocket) != 0:
			if os.Remove(p) == nil {
				out = append(out, LayerChange{Path: rel, What: "special file", Why: whySpecial})
			}
		case (m.IsRegular() || m.IsDir()) && specialBits(m) != "":
			if os.Chmod(p, m.Perm()) == nil {
				out = append(out, LayerChange{Path: rel, What: "written", Applied: true, Stripped: specialBits(m)})
			}
		}
	}
	return out
}

// whySpecial is why a device, a fifo or a socket of a layer is not applied.
const whySpecial = "a special file (a device, a fifo or a socket): never applied to the loop folder"
