//go:build linux

package nshelper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// keptMaxCopy is the largest kept file copied into a built view (where
// the run may change it, in its layer); a larger one is the real file,
// bound read-only.
const keptMaxCopy = 64 << 20

// A built view is what a Built layer lays instead of its target: a base
// (a tmpfs holding the folders on the way to the kept paths, a copy of
// each small kept file) as its lowest layer, then, once the layer is laid,
// each kept folder's own layer moved into place and the other kept files
// bound in. The kept folders' layers are mounted aside before any layer
// is laid: the real folders are read where they are on the host, and
// overlayfs refuses (or warns about) an upper folder inside the upper
// folder of a layer already laid.
type built struct {
	base string
	subs []string // kept folders (relative) mounted aside, at aside(i)
	// subFDs hold each aside mount (O_PATH), by which place moves it: its
	// path may be under the target, hidden once the layer is laid there
	// (a state folder inside HOME: ~/.local/state).
	subFDs []int
	keep   string // the folder the base and the aside mounts are in
	binds  []keptBind
}

// keptBind is a kept file bound in from the host: its descriptor (O_PATH)
// and whether it is bound read-only (a regular file; a socket is bound as
// it is).
type keptBind struct {
	rel string
	fd  int
	ro  bool
}

func (b *built) aside(i int) string { return filepath.Join(b.keep, "m"+strconv.Itoa(i)) }

// keptPaths are l.Keep relative to its target, shallowest first, without
// those inside another (a kept folder's layer shows them).
func keptPaths(l Layer) []string {
	var rels []string
	for _, k := range l.Keep {
		if rel, ok := within(l.Target, filepath.Clean(k)); ok && rel != "" {
			rels = append(rels, rel)
		}
	}
	sort.SliceStable(rels, func(i, j int) bool {
		di, dj := strings.Count(rels[i], "/"), strings.Count(rels[j], "/")
		if di != dj {
			return di < dj
		}
		return rels[i] < rels[j]
	})
	var out []string
	for _, r := range rels {
		inside := false
		for _, o := range out {
			inside = inside || r == o || strings.HasPrefix(r, o+"/")
		}
		if !inside {
			out = append(out, r)
		}
	}
	return out
}

// shadowed says whether a folder laid over the target (the layer's
// upper folder, then each lower) hides rel: a file, a link, a whiteout or
// a replaced (opaque) folder at rel or on its way. The view then shows
// that folder's entry as it is, and nothing of the real one.
func shadowed(over []string, rel string) bool {
	parts := strings.Split(rel, "/")
	for _, d := range over {
		cur := d
		for _, p := range parts {
			cur = filepath.Join(cur, p)
			fi, err := os.Lstat(cur)
			if err != nil {
				break // this folder says nothing about rel: the next one below
			}
			if !fi.IsDir() || Opaque(cur) {
				return true
			}
		}
	}
	return false
}

// Opaque says whether overlayfs marked a folder of an upper folder as
// replacing the one below.
func Opaque(p string) bool {
	buf := make([]byte, 8)
	for _, attr := range []string{"trusted.overlay.opaque", "user.overlay.opaque"} {
		if n, err := unix.Lgetxattr(p, attr, buf); err == nil && n > 0 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

// inOther says whether the path rel of l's target is, or is inside,
// another layer's target: that layer is laid there (the base holds its
// mount point only).
func inOther(l Layer, rel string, layers []Layer) bool {
	abs := filepath.Join(l.Target, rel)
	for _, o := range layers {
		t := filepath.Clean(o.Target)
		if t != filepath.Clean(l.Target) && (abs == t || strings.HasPrefix(abs, t+"/")) {
			return true
		}
	}
	return false
}

// prepareBuilt makes l's base and mounts its kept folders' layers aside.
// It runs before any layer is laid.
func prepareBuilt(l Layer, layers []Layer, userNS bool) (*built, error) {
	b := &built{keep: filepath.Join(l.Work, "keep")}
	if err := reuseKeep(b.keep); err != nil {
		return nil, err
	}
	b.base = filepath.Join(b.keep, "base")
	if l.Base != "" {
		b.base = l.Base // made already (a box's server: once for its checks)
	} else if err := MakeBase(l, b.base); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.keep, 0o700); err != nil {
		return nil, err
	}
	return b, b.layAside(l, layers, userNS, true)
}

// MakeBase makes, at base (a folder that exists or is made), l's base: a
// tmpfs with the folders on the way to the kept paths and a copy of each
// small kept file (under every check's layer, never written).
func MakeBase(l Layer, base string) error {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("the base of %s: %w", l.Target, err)
	}
	b := &built{base: base}
	return b.layAside(l, nil, false, false)
}

// layAside makes the base's entries (unless made) and, with layers, lays
// the kept folders' layers aside and opens the files to bind in.
func (b *built) layAside(l Layer, layers []Layer, userNS, made bool) error {
	over := append([]string{l.Upper}, l.Lower...)
	for _, rel := range keptPaths(l) {
		real := filepath.Join(l.Target, rel)
		fi, err := os.Lstat(real)
		if err != nil || !baseFolders(l.Target, b.base, rel) {
			continue // not there, or on the way through a link: not in the view
		}
		dst := filepath.Join(b.base, rel)
		if made {
			if _, err := os.Lstat(dst); err != nil {
				continue // made after the base: not in the view
			}
		}
		m := fi.Mode()
		copied := m&os.ModeSymlink != 0 || m.IsRegular() && fi.Size() <= keptMaxCopy
		if !made {
			if err := baseEntry(real, dst, fi); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		if layers == nil || copied || shadowed(over, rel) {
			continue
		}
		if m.IsDir() {
			if inOther(l, rel, layers) {
				continue
			}
			if err := b.mountAside(l, rel, fi, userNS); err != nil {
				return err
			}
			continue
		}
		fd, err := unix.Open(real, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		b.binds = append(b.binds, keptBind{rel: rel, fd: fd, ro: m.IsRegular()})
	}
	return nil
}

// baseEntry makes the base's entry dst for the real kept path real: a
// folder as it is, a link as it is, a copy of a small file, an empty file
// for what is bound in.
func baseEntry(real, dst string, fi os.FileInfo) error {
	switch m := fi.Mode(); {
	case m.IsDir():
		return mkdirLike(dst, fi)
	case m&os.ModeSymlink != 0:
		t, err := os.Readlink(real)
		if err == nil {
			err = os.Symlink(t, dst)
		}
		return err
	case m.IsRegular() && fi.Size() <= keptMaxCopy:
		if err := CopyFile(real, dst, m.Perm()); err != nil {
			return err
		}
		chownLike(dst, fi)
		return nil
	}
	return os.WriteFile(dst, nil, 0o600)
}

// mountAside mounts the layer of the kept folder rel aside: its upper
// folder inside l's (made as the real one's), its lower ones l's lower
// folders' rel, then the real folder.
func (b *built) mountAside(l Layer, rel string, fi os.FileInfo, userNS bool) error {
	i := len(b.subs)
	up := filepath.Join(l.Upper, rel)
	if err := upperFolders(l.Target, l.Upper, rel); err != nil {
		return err
	}
	work, at := filepath.Join(b.keep, "w"+strconv.Itoa(i)), b.aside(i)
	for _, d := range []string{work, at} {
		if err := mkdirKept(d); err != nil {
			return err
		}
	}
	// Every folder named to overlayfs by a descriptor: a kept path may
	// hold a comma or a colon.
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	open := func(p string) (string, error) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return "", fmt.Errorf("open %s: %w", p, err)
		}
		fds = append(fds, fd)
		return "/proc/self/fd/" + strconv.Itoa(fd), nil
	}
	real := filepath.Join(l.Target, rel)
	if from, ok := l.KeepFrom[real]; ok {
		real = from
	}
	lower, err := open(real)
	if err != nil {
		return err
	}
	for j := len(l.Lower) - 1; j >= 0; j-- {
		x := filepath.Join(l.Lower[j], rel)
		if xi, err := os.Lstat(x); err == nil && xi.IsDir() {
			xp, err := open(x)
			if err != nil {
				return err
			}
			lower = xp + ":" + lower
		}
	}
	upFD, err := open(up)
	if err != nil {
		return err
	}
	workFD, err := open(work)
	if err != nil {
		return err
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upFD, workFD)
	if userNS {
		opts += ",userxattr"
	}
	if l.Volatile {
		opts += ",volatile"
	}
	if err := unix.Mount("overlay", at, "overlay", 0, opts); err != nil {
		return fmt.Errorf("overlay on %s: %w", filepath.Join(l.Target, rel), err)
	}
	atFD, err := unix.Open(at, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", at, err)
	}
	b.subs, b.subFDs = append(b.subs, rel), append(b.subFDs, atFD)
	return nil
}

// place moves the kept folders' layers into the laid view at target and
// binds the other kept files in.
func (b *built) place(target string) error {
	for i, rel := range b.subs {
		err := unix.Mount("/proc/self/fd/"+strconv.Itoa(b.subFDs[i]), filepath.Join(target, rel), "", unix.MS_MOVE, "")
		unix.Close(b.subFDs[i])
		if err != nil {
			return fmt.Errorf("lay %s: %w", rel, err)
		}
	}
	for _, k := range b.binds {
		to := filepath.Join(target, k.rel)
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(k.fd), to, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: %w", k.rel, err)
		}
		unix.Close(k.fd)
		if !k.ro {
			continue
		}
		var st unix.Statfs_t
		flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
		if unix.Statfs(to, &st) == nil {
			// The flags the mount is locked with (in a user namespace)
			// are kept.
			flags |= uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
		}
		if err := unix.Mount("", to, "", flags, ""); err != nil {
			unix.Unmount(to, unix.MNT_DETACH) // never the real file writable: the empty one instead
		}
	}
	return nil
}

// baseFolders makes the folders on the way to rel in base, each as the
// real one under target is; false when one of them is not a real folder
// (a link), whose kept path is then not in the view.
func baseFolders(target, base, rel string) bool {
	parts := strings.Split(rel, "/")
	cur := ""
	for _, p := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(filepath.Join(target, cur))
		if err != nil || !fi.IsDir() {
			return false
		}
		d := filepath.Join(base, cur)
		if _, err := os.Lstat(d); err == nil {
			continue
		}
		if mkdirLike(d, fi) != nil {
			return false
		}
	}
	return true
}

// upperFolders makes the folders on the way to rel in an upper folder,
// and rel itself, each as the real one under target is, where they are
// not yet.
func upperFolders(target, upper, rel string) error {
	parts := strings.Split(rel, "/")
	cur := ""
	for _, p := range parts {
		cur = filepath.Join(cur, p)
		d := filepath.Join(upper, cur)
		if _, err := os.Lstat(d); err == nil {
			continue
		}
		fi, err := os.Lstat(filepath.Join(target, cur))
		if err != nil {
			return err
		}
		if err := mkdirLike(d, fi); err != nil {
			return err
		}
	}
	return nil
}

// mkdirLike makes the folder d with fi's permissions and, where it can,
// owner.
func mkdirLike(d string, fi os.FileInfo) error {
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := os.Chmod(d, fi.Mode().Perm()); err != nil {
		return err
	}
	chownLike(d, fi)
	return nil
}

// chownLike gives p fi's owner where this process can (root; in a user
// namespace only the mapped user).
func chownLike(p string, fi os.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		os.Lchown(p, int(st.Uid), int(st.Gid))
	}
}
