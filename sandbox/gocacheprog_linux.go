//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/sandbox/gocacheprog"
)

// The union build cache of a Landlock check (see gocacheprog): the go
// command of a check reads its box's own build cache first, then the
// user's, read-only, and writes only its own. Under bubblewrap the user's
// cache is the read-only lower of the caches' layer already; under
// Landlock, without it, the box's own cache started empty (or a copy of
// the loop's cache layer, empty until the warm-up filled it) and the
// warm-up compiled the standard library cold.

// userGoCache is the user's Go build cache, canonical, that a Landlock
// box's checks may read through the cache program: GOCACHE, else
// XDG_CACHE_HOME/go-build, else HOME/.cache/go-build, of the box's
// environment, an existing folder that neither lies in nor holds a folder
// a check or an agent of the loop can write: the tree and the work tree
// around it (the agent's loop folder), the engine's hidden folders (its
// state root: the agents' private HOME and caches), the box's own
// folder, the cache layer, the temporary folders. Under Landlock the
// agent writes none of the rest: its HOME and caches are private and the
// real ones read-only to it ("" when no such cache).
func (b *CheckBox) userGoCache() string {
	get := func(k string) string { return lookupEnv(b.env, k) }
	var g string
	switch v := get("GOCACHE"); {
	case v == "off":
		return ""
	case v != "":
		g = v
	case filepath.IsAbs(get("XDG_CACHE_HOME")):
		g = filepath.Join(get("XDG_CACHE_HOME"), "go-build")
	case filepath.IsAbs(get("HOME")):
		g = filepath.Join(get("HOME"), ".cache", "go-build")
	}
	if !filepath.IsAbs(g) {
		return ""
	}
	c, err := canonical(g)
	if err != nil || c == "/" {
		return ""
	}
	if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
		return ""
	}
	bad := append([]string{b.tree, b.around, b.scratch, b.opts.Scratch}, b.hide...)
	if b.opts.Cache != nil {
		bad = append(bad, b.opts.Cache.Dir)
	}
	for _, p := range bad {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		for _, q := range []string{filepath.Clean(p), canonicalLoose(filepath.Clean(p))} {
			if Within(c, q) || Within(q, c) {
				return ""
			}
		}
	}
	// The temporary folders: an agent writes its own there
	// (TempDirOf), a box its checks' (checkDirPrefix); /dev/shm is
	// everyone's.
	for _, t := range []string{os.TempDir(), "/tmp", "/var/tmp", b.opts.Scratch} {
		if !filepath.IsAbs(t) {
			continue
		}
		for _, q := range []string{filepath.Clean(t), canonicalLoose(filepath.Clean(t))} {
			if Within(q, c) {
				return ""
			}
			if r, err := filepath.Rel(q, c); err == nil && Within(c, q) {
				first := strings.SplitN(filepath.ToSlash(r), "/", 2)[0]
				if strings.HasPrefix(first, tempDirPrefix) || strings.HasPrefix(first, checkDirPrefix) {
					return ""
				}
			}
		}
	}
	if Within(c, "/dev/shm") || Within("/dev/shm", c) {
		return ""
	}
	return c
}

// goCacheProg is a Landlock check's part of the union cache, given the
// environment entries it has so far (the last GOCACHE is the box's own
// cache, or the layer's in a warm box): the environment entries to add,
// and the read-only grants, the user's cache and the program (the
// engine's executable, outside every folder a check or an agent writes:
// the tree, the box's folders, the cache layer; else nothing). Without a
// user's cache, nothing: the go command uses GOCACHE alone, as Go before
// 1.24 does anyway (it ignores GOCACHEPROG).
func (b *CheckBox) goCacheProg(env []string) (add, roDirs, roFiles []string) {
	user := b.userGoCache()
	own := lookupEnv(env, "GOCACHE")
	if user == "" || !filepath.IsAbs(own) {
		return nil, nil, nil
	}
	if c, err := canonical(own); err == nil {
		own = c
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, nil
	}
	if exe, err = canonical(exe); err != nil {
		return nil, nil, nil
	}
	writable := []string{b.tree, b.scratch, own}
	if b.opts.Cache != nil {
		writable = append(writable, b.opts.Cache.Dir)
	}
	for _, w := range writable {
		if w != "" && Within(exe, w) {
			return nil, nil, nil
		}
	}
	prog, penv, ok := gocacheprog.Command(exe, own, user)
	if !ok {
		return nil, nil, nil
	}
	return []string{"GOCACHEPROG=" + prog, penv}, []string{user}, []string{exe}
}
