//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maskHomeLayers lays, in the upper folder of HOME's layer, a whiteout for
// every entry of the real HOME the run may not see (see Policy.HomeMask):
// the agent finds HOME empty but for its CLI's config, the toolchains and
// the loop's own folders, and what it writes there still lands in the
// layer (a new entry replaces the whiteout). Laid before every run, so
// entries the user made since are hidden too.
func (q *Policy) maskHomeLayers(layers []Layer, path string) error {
	home, err := canonical(lookupEnv(q.viewEnv(), "HOME"))
	if err != nil || home == "/" {
		return nil
	}
	for _, l := range layers {
		if l.Target != home {
			continue
		}
		keep := q.homeKeep(home, path)
		if err := whiteoutAround(l, "", keep); err != nil {
			return fmt.Errorf("sandbox: cannot hide the rest of HOME from the agent: %w", err)
		}
		q.maskedHome, q.keptHome = home, keep
	}
	return nil
}

// whiteoutAround hides, in l's upper folder, the entries of l.Target's
// folder rel that are neither in keep nor on the way to it, and those
// beside what the layer itself holds in a folder it merges with the real
// one.
func whiteoutAround(l Layer, rel string, keep []string) error {
	ents, err := os.ReadDir(filepath.Join(l.Target, filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	for _, e := range ents {
		r := joinRel(rel, e.Name())
		abs := filepath.Join(l.Target, filepath.FromSlash(r))
		if covered(abs, keep) {
			continue
		}
		var way []string
		for _, k := range keep {
			if Within(k, abs) {
				way = append(way, k)
			}
		}
		up := filepath.Join(l.Upper, filepath.FromSlash(r))
		if ufi, err := os.Lstat(up); err == nil {
			// The layer's own: a file or a whiteout replaces the real
			// entry, and so does an opaque folder; a plain folder merges
			// with the real one, whose other entries are hidden.
			if ufi.IsDir() && e.IsDir() && !opaque(up) {
				if err := whiteoutAround(l, r, way); err != nil {
					return err
				}
			}
			continue
		}
		if len(way) > 0 && e.IsDir() {
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if err := os.Mkdir(up, fi.Mode().Perm()|0o700); err != nil {
				return err
			}
			if err := whiteoutAround(l, r, way); err != nil {
				return err
			}
			continue
		}
		if err := unix.Mknod(up, unix.S_IFCHR, 0); err != nil {
			return err
		}
	}
	return nil
}

// manifest is the view of the box's checks with env: the manifest of the
// box's options, with git's and the toolchains' settings of HOME.
func (b *CheckBox) manifest(env []string) Manifest {
	v := b.opts.View
	v.Env = env
	v.HomeKeep = append(append([]string(nil), v.HomeKeep...), checkHomeSeeds...)
	return BuildManifest(v)
}

// maskHome hides, in the check's throw-away layer over HOME, every entry
// of the real HOME its manifest, its tree, its caches and its views do not
// keep.
func (b *CheckBox) maskHome(layers []Layer, m Manifest, env []string) error {
	home, err := canonical(lookupEnv(env, "HOME"))
	if err != nil || home == "/" {
		return nil
	}
	var keep []string
	for _, e := range m {
		if e.How != Fresh && Within(e.Path, home) && e.Path != home {
			keep = append(keep, e.Path)
		}
	}
	more := append(append(append([]string{b.tree, b.around}, b.targets...), b.views...), existing(cacheDirs(env))...)
	for _, k := range more {
		if Within(k, home) && k != home {
			keep = append(keep, k)
		}
	}
	for _, l := range layers {
		if l.Target == home && l.Target != b.tree {
			if err := whiteoutAround(l, "", keep); err != nil {
				return fmt.Errorf("sandbox: cannot hide the rest of HOME from the check: %w", err)
			}
		}
	}
	return nil
}
