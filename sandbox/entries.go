//go:build linux

package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// LayerEntry is one path an upper folder changes in its target.
type LayerEntry struct {
	// Rel is the path relative to the target, with slashes.
	Rel string
	// What it stands for: "written" (a regular file), "link", "removed"
	// (overlayfs's whiteout), "replaced folder" (an opaque folder: nothing
	// of the target's folder below it shows), "folder" (a plain folder,
	// holding other entries or new and empty), "device" or "special file".
	What string
	// Mode is the entry's mode in the upper folder.
	Mode os.FileMode
}

// LayerEntries lists what upper (a layer's upper folder, or a finished
// run's kept one) changes, sorted by path, a folder before what it holds.
// It reads only the upper folder: its cost follows the change, not the
// target.
func LayerEntries(upper string) ([]LayerEntry, error) {
	var out []LayerEntry
	err := filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == upper {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(upper, p)
		if err != nil {
			return err
		}
		out = append(out, LayerEntry{Rel: filepath.ToSlash(rel), What: kindOf(p, fi), Mode: fi.Mode()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out, nil
}
