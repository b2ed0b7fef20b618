//go:build linux

package sandbox

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The cache layer under a box's checks (see CheckCache). Nothing here
// widens what a check may write: a warm box writes the layer's folders in
// place of its throw-away ones, and only the judge's warm-up on the
// pristine tree makes one.

// pycachePrefix is the bytecode prefix of checks that have a cache layer:
// a folder under HOME (so in HOME's layer, warm from the cache layer)
// instead of one in the check's own /tmp ("" without an absolute HOME).
func pycachePrefix(env []string) string {
	if h := lookupEnv(env, "HOME"); filepath.IsAbs(h) && filepath.Clean(h) != "/" {
		return filepath.Join(h, ".cache", "looprinter-pycache")
	}
	return ""
}

// cacheKeep are the cache folders, absolute, that a warm-up's writes in
// HOME and the caches are kept under: Go's build and module caches, npm's,
// pip's, cargo's registry and the bytecode prefix. Everything else it
// wrote there is dropped.
func cacheKeep(env []string) []string {
	get := func(k string) string { return lookupEnv(env, k) }
	home := get("HOME")
	if !filepath.IsAbs(home) {
		home = ""
	}
	xdg := get("XDG_CACHE_HOME")
	if !filepath.IsAbs(xdg) && home != "" {
		xdg = filepath.Join(home, ".cache")
	}
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) && filepath.Clean(p) != "/" {
			out = append(out, canonicalLoose(filepath.Clean(p)))
		}
	}
	switch g := get("GOCACHE"); {
	case g == "off":
	case filepath.IsAbs(g):
		add(g)
	case xdg != "":
		add(filepath.Join(xdg, "go-build"))
	}
	add(GoModCache(get, home))
	npm := get("npm_config_cache")
	if npm == "" {
		npm = get("NPM_CONFIG_CACHE")
	}
	if npm == "" && home != "" {
		npm = filepath.Join(home, ".npm")
	}
	add(npm)
	pip := get("PIP_CACHE_DIR")
	if pip == "" && xdg != "" {
		pip = filepath.Join(xdg, "pip")
	}
	add(pip)
	cargo := get("CARGO_HOME")
	if cargo == "" && home != "" {
		cargo = filepath.Join(home, ".cargo")
	}
	if cargo != "" {
		add(filepath.Join(cargo, "registry"))
		add(filepath.Join(cargo, "git"))
	}
	add(pycachePrefix(env))
	return out
}

// canonicalLoose is p with the symbolic links of its longest existing
// part resolved (the rest need not exist yet).
func canonicalLoose(p string) string {
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if c, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(c, rest)
		}
		if q == filepath.Dir(q) {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}

// cacheLayer lays the loop's cache layer in l, a check's layer over the
// target t: the cache's folder for t as the lowest of its lower folders,
// read-only under the check's throw-away upper; in a warm box, the
// cache's folder is the upper the check writes to instead.
func (b *CheckBox) cacheLayer(l *Layer, t string, setup bool) error {
	c := b.opts.Cache
	if c == nil || (c.Warm && setup) {
		return nil
	}
	d := c.targetDir(t, b.tree)
	if !c.Warm {
		if fi, err := os.Stat(filepath.Join(d, "u")); err == nil && fi.IsDir() {
			l.Lower = append(l.Lower, filepath.Join(d, "u"))
		}
		return nil
	}
	w := Layer{Target: t, Upper: filepath.Join(d, "u"), Work: filepath.Join(d, "w"), Lower: l.Lower}
	if _, err := PrepareLayer(w); err != nil {
		return err
	}
	if err := ClearWork(w); err != nil {
		return err
	}
	if t != b.tree {
		if err := os.WriteFile(filepath.Join(d, "target"), []byte(t), 0o600); err != nil {
			return err
		}
	}
	*l = w
	return nil
}

// makeCacheDirs makes, for a box with a cache layer, the cache folders
// the environment names that do not exist yet (their parent does), as the
// tools would on their first use: only an existing folder gets a layer,
// and a cache folder without one cannot be written by a check, nor warmed.
func (b *CheckBox) makeCacheDirs() {
	if b.opts.Cache == nil {
		return
	}
	for _, d := range cacheDirs(b.env) {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			if fi, err := os.Stat(filepath.Dir(d)); err == nil && fi.IsDir() {
				os.Mkdir(d, 0o700)
			}
		}
	}
}

// cacheEnv are the environment entries a check with a cache layer gets
// after the box's own: the bytecode prefix in HOME's layer; in a warm box,
// bytecode written there, and no test results kept in Go's build cache
// (a result is reused on a file's size and time, which an agent can set:
// only compiled code, whose keys are its inputs' contents, is kept).
func (b *CheckBox) cacheEnv(env []string, setup bool) []string {
	c := b.opts.Cache
	if c == nil {
		return nil
	}
	var out []string
	if p := pycachePrefix(env); p != "" {
		out = append(out, "PYTHONPYCACHEPREFIX="+p)
	}
	if c.Warm && !setup {
		out = append(out, "PYTHONDONTWRITEBYTECODE=", "GOFLAGS="+strings.TrimSpace(lookupEnv(env, "GOFLAGS")+" -count=1"))
	}
	return out
}

// landlockCache is a Landlock check's part of the cache layer, given the
// box's own Go build cache goCache: the environment entries (after the
// box's own) and the folders to grant. Go's build cache must be writable
// (a read-only one fails a build that needs one more entry), so the box's
// own is seeded once with a copy of the layer's; the bytecode prefix is
// the layer's, read-only. In a warm box both are the layer's, writable.
func (b *CheckBox) landlockCache(goCache string, setup bool) (env, rw, ro []string, err error) {
	c := b.opts.Cache
	if c == nil || (c.Warm && setup) {
		return nil, nil, nil, nil
	}
	gc, pc := filepath.Join(c.Dir, cacheLandlock, "gocache"), filepath.Join(c.Dir, cacheLandlock, "pycache")
	if c.Warm {
		for _, d := range []string{gc, pc} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, nil, nil, err
			}
		}
		env = []string{"GOCACHE=" + gc, "PYTHONPYCACHEPREFIX=" + pc, "PYTHONDONTWRITEBYTECODE=", "GOFLAGS=" + strings.TrimSpace(lookupEnv(b.env, "GOFLAGS")+" -count=1")}
		return env, []string{gc, pc}, nil, nil
	}
	b.cacheSeed.Do(func() {
		if fi, err := os.Stat(gc); err == nil && fi.IsDir() {
			os.RemoveAll(goCache)
			b.cacheSeedErr = CopyTree(gc, goCache, nil)
		}
	})
	if b.cacheSeedErr != nil {
		return nil, nil, nil, b.cacheSeedErr
	}
	if fi, err := os.Stat(pc); err == nil && fi.IsDir() {
		env = append(env, "PYTHONPYCACHEPREFIX="+pc)
		ro = append(ro, pc)
	}
	return env, nil, ro, nil
}

// FinishCacheWarm keeps, of what a warm box's checks wrote in the cache
// layer c, only the caches: in HOME and the cache folders, the folders
// cacheKeep names for env; in the tree (tree, the folder the checks ran
// in), the build outputs of cacheTreeOutputs, without cargo's units whose
// freshness is read from file times, nor bytecode of the tree's sources
// (a later check reads the tree as the agent left it, and an agent can
// set a file's time and size back). Whiteouts and other special files are
// dropped everywhere. Call it once the box is closed.
func FinishCacheWarm(c CheckCache, env []string, tree string) error {
	keep := cacheKeep(env)
	bad := []string{tree, canonicalLoose(tree), "/tmp", "/var/tmp", "/dev/shm"}
	home := filepath.Join(c.Dir, cacheHomeDir)
	ents, _ := os.ReadDir(home)
	for _, e := range ents {
		d := filepath.Join(home, e.Name())
		t, err := os.ReadFile(filepath.Join(d, "target"))
		if err != nil || !filepath.IsAbs(string(t)) {
			removeAllWritable(d)
			continue
		}
		var rel []string
		for _, k := range keep {
			if Within(k, string(t)) {
				r, _ := filepath.Rel(string(t), k)
				rel = append(rel, filepath.ToSlash(r))
			}
		}
		u := filepath.Join(d, "u")
		if err := keepOnly(u, "", rel); err != nil {
			return err
		}
		if p := pycachePrefix(env); p != "" && Within(canonicalLoose(p), string(t)) {
			r, _ := filepath.Rel(string(t), canonicalLoose(p))
			prunePycache(filepath.Join(u, r), bad)
		}
		removeAllWritable(filepath.Join(d, "w"))
	}
	td := filepath.Join(c.Dir, cacheTreeDir)
	if _, err := os.Stat(td); err == nil {
		if err := keepOnly(filepath.Join(td, "u"), "", cacheTreeOutputs); err != nil {
			return err
		}
		pruneCargo(filepath.Join(td, "u", "target"))
		removeAllWritable(filepath.Join(td, "w"))
	}
	prunePycache(filepath.Join(c.Dir, cacheLandlock, "pycache"), bad)
	return nil
}

// keepOnly removes from dir (rel, slash-separated, inside an upper folder)
// everything that is neither one of keep nor on the way to one, and every
// special file (whiteouts) under what it keeps; "." keeps everything.
func keepOnly(dir, rel string, keep []string) error {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	for _, e := range ents {
		r, p := path.Join(rel, e.Name()), filepath.Join(dir, e.Name())
		switch {
		case kept(r, keep):
			dropSpecial(p)
		case e.IsDir() && onTheWay(r, keep):
			clearOpaque(p)
			if err := keepOnly(p, r, keep); err != nil {
				return err
			}
		default:
			if err := removeAllWritable(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func kept(r string, keep []string) bool {
	for _, k := range keep {
		if k == "." || r == k || strings.HasPrefix(r, k+"/") {
			return true
		}
	}
	return false
}

func onTheWay(r string, keep []string) bool {
	for _, k := range keep {
		if strings.HasPrefix(k, r+"/") {
			return true
		}
	}
	return false
}

// dropSpecial removes what is neither a regular file, a folder nor a
// symbolic link under p (overlayfs's whiteouts are character devices).
func dropSpecial(p string) {
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if m := d.Type(); m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0 {
			os.Remove(q)
		}
		return nil
	})
}

// clearOpaque takes overlayfs's opaque mark off a folder on the way to a
// kept one: it would hide, under every later check, what the folder holds
// below the cache layer.
func clearOpaque(p string) {
	for _, x := range []string{"trusted.overlay.opaque", "user.overlay.opaque"} {
		unix.Removexattr(p, x)
	}
}

// prunePycache removes from a bytecode prefix the bytecode of sources in
// the tree and in temporary folders: only the interpreter's own library
// and what is installed outside the tree stay.
func prunePycache(prefix string, bad []string) {
	for _, b := range bad {
		if filepath.IsAbs(b) && filepath.Clean(b) != "/" {
			removeAllWritable(filepath.Join(prefix, b))
		}
	}
}

// pruneCargo drops, from a cargo target folder, the fingerprints of units
// whose freshness cargo reads from file times (the packages of the tree
// and build scripts: "CheckDepInfo", "RerunIfChanged"): an agent can set a
// changed file's time back, and cargo would run what the warm-up built
// from the pristine tree. Units from a registry ("Precalculated") stay;
// the others are built again by the check that needs them.
func pruneCargo(target string) {
	filepath.WalkDir(target, func(q string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != ".fingerprint" {
			return nil
		}
		units, _ := os.ReadDir(q)
		for _, u := range units {
			if mtimeFresh(filepath.Join(q, u.Name())) {
				removeAllWritable(filepath.Join(q, u.Name()))
			}
		}
		return filepath.SkipDir
	})
}

// mtimeFresh says whether a cargo unit's fingerprint folder names a check
// by file times (or cannot be read: dropped too).
func mtimeFresh(unit string) bool {
	files, err := os.ReadDir(unit)
	if err != nil {
		return true
	}
	read := false
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(unit, f.Name()))
		if err != nil || bytes.Contains(data, []byte("CheckDepInfo")) || bytes.Contains(data, []byte("RerunIfChanged")) {
			return true
		}
		read = true
	}
	return !read
}

// RemoveCache removes a cache layer's folder (overlayfs leaves folders of
// mode 000 in a work folder).
func RemoveCache(dir string) error { return removeAllWritable(dir) }
