package sandbox

import (
	"os"
	"path/filepath"
)

// manifest is the view of a run of p that starts path: p.View's manifest
// with the program itself.
func (p Policy) manifest(path string) Manifest {
	v := p.View
	if path != "" && filepath.IsAbs(path) {
		v.Programs = append(append([]string(nil), v.Programs...), path)
	}
	return BuildManifest(v)
}

// viewArgs are bubblewrap's arguments that build a view from m on an
// empty root: the fresh folders first (the host's /tmp, /var/tmp and /run
// are never in it), a minimal /dev and a /proc of the run's own, then each
// read-only entry (a top-level link such as /bin → usr/bin as a link).
// Sockets come last (socketArgs), over the fresh folders.
func viewArgs(m Manifest) []string {
	a := []string{"--dev", "/dev", "--proc", "/proc"}
	for _, e := range m {
		if e.How == Fresh && e.Path != "/dev/shm" {
			a = append(a, "--tmpfs", e.Path)
		}
	}
	for _, e := range m {
		if e.How != ReadOnlyBind {
			continue
		}
		fi, err := os.Lstat(e.Path)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 && filepath.Dir(e.Path) == "/" {
			if t, err := os.Readlink(e.Path); err == nil {
				a = append(a, "--symlink", t, e.Path)
				continue
			}
		}
		a = append(a, "--ro-bind", e.Path, e.Path)
	}
	return a
}

// beside is m without the read-only entries inside one of trees, which
// are bound writable over them anyway (HOME's layer shows ~/.cargo as it
// shows the rest it keeps): bubblewrap need not find them where the
// tree's layer has hidden or replaced them.
func (m Manifest) beside(trees []string) Manifest {
	var out Manifest
	for _, e := range m {
		if e.How == ReadOnlyBind && covered(e.Path, trees) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// socketArgs bind the sockets the loop file lets in (sandbox.allow_sockets).
func socketArgs(m Manifest) []string {
	var a []string
	for _, e := range m {
		if e.How == Socket {
			a = append(a, "--bind", e.Path, e.Path)
		}
	}
	return a
}

// homeKeep are the paths under home a run of p that starts path sees in
// HOME's layer: the manifest's entries there, the loop folder, the other
// writable trees and the paths shown. Everything else of HOME is hidden.
func (p Policy) homeKeep(home, path string) []string {
	var keep []string
	for _, e := range p.manifest(path) {
		if e.How != Fresh && Within(e.Path, home) && e.Path != home {
			keep = append(keep, e.Path)
		}
	}
	for _, w := range append(append([]string{p.Dir}, p.Writable...), p.Shown...) {
		if Within(w, home) && w != home {
			keep = append(keep, w)
		}
	}
	return keep
}

// readRules are Landlock's read grants for a view: the manifest's
// read-only entries and sockets, /proc and /dev, and more (the loop
// folder's repository, a check's tree), as folders and files. Nothing
// else can be read: the engine's state folder, other loops and projects,
// the rest of HOME.
func readRules(m Manifest, more ...string) (dirs, files []string) {
	paths := []string{"/proc", "/dev"}
	for _, e := range m {
		if e.How == ReadOnlyBind || e.How == Socket {
			paths = append(paths, e.Path)
		}
	}
	for _, p := range append(paths, more...) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	return dirs, files
}

// sockets are the host's unix sockets m lets in (sandbox.allow_sockets).
func (m Manifest) sockets() []string {
	var out []string
	for _, e := range m {
		if e.How == Socket {
			out = append(out, e.Path)
		}
	}
	return out
}
