//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/looprinter/looprinter/sandbox/nshelper"
	"golang.org/x/sys/unix"
)

// A Layer is a copy-on-write view of the tree Target: inside the sandbox
// the agent sees Target, but everything it writes there lands in Upper
// (see nshelper.Layer, where it is defined for the layer helper).
type Layer = nshelper.Layer

// EnvLayers marks a process started by Wrap for bwrap with layers: package
// nshelper's init function lays them in a mount namespace of its own and
// executes bubblewrap there.
const EnvLayers = nshelper.EnvLayers

// layerSpec is what the layer helper needs (nshelper reads it).
type layerSpec = nshelper.Spec

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

var layerOnce struct {
	sync.Once
	err error
}

// LayerProbe says why copy-on-write layers cannot be made here (nil: they
// can). It lays one layer over a scratch folder and runs nothing, once per
// process.
func LayerProbe() error {
	layerOnce.Do(func() { layerOnce.err = probeLayer() })
	return layerOnce.err
}

func probeLayer() error {
	dir, err := os.MkdirTemp("", "looprinter-layer-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	l := Layer{Target: filepath.Join(dir, "t"), Upper: filepath.Join(dir, "u"), Work: filepath.Join(dir, "w")}
	for _, d := range []string{l.Target, l.Upper, l.Work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	exe, err := nshelper.Path()
	if err != nil {
		return errNoExe
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	spec, _ := json.Marshal(layerSpec{Stage: 1, Layers: []Layer{l}, Exec: truePath})
	cmd := exec.Command(exe)
	cmd.Env = append(withoutEnv(os.Environ(), EnvLayers), EnvLayers+"="+string(spec))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// PrepareLayer makes a layer's folders (0700) and returns whether its upper
// folder held something already: what a run that died wrote, which the
// caller decides about (ApplyLayer or ClearLayer) before the next run.
func PrepareLayer(l Layer) (leftover bool, err error) {
	for _, d := range []string{l.Upper, l.Work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return false, err
		}
	}
	ents, err := os.ReadDir(l.Upper)
	return len(ents) > 0, err
}

// ClearLayer empties a layer's folders: what the agent wrote there is gone.
func ClearLayer(l Layer) error {
	for _, d := range []string{l.Upper, l.Work} {
		if err := removeAllWritable(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// ClearWork empties a layer's work folder only, after its mount is gone.
// What an unmounted overlay leaves there is its own empty folder "work" of
// mode 000: one rmdir and a look that nothing else is left spare removing
// and making the work folder again; anything else there is removed whole.
func ClearWork(l Layer) error { return clearWork(l, "") }

// ClearRunWork is ClearWork for the layer of a tree an agent run saw
// (HOME, the caches) once its mounts are gone, but the folder "keep" of a
// view built by construction (HOME's base and its kept folders' mounts) is
// left for the layer helper's next start, which keeps what it can use of
// it and removes the rest (nshelper's reuseKeep): not removed after each
// run and made again before the next.
func ClearRunWork(l Layer) error { return clearWork(l, "keep") }

// clearWork empties l's work folder but its entry spare ("": none), which
// stays when it is the only one left once overlayfs's "work" is gone;
// anything else there and the whole folder is removed and made again.
func clearWork(l Layer, spare string) error {
	if err := syscall.Rmdir(filepath.Join(l.Work, "work")); err == nil || errors.Is(err, os.ErrNotExist) {
		if names, err := readNames(l.Work); err == nil && (len(names) == 0 || spare != "" && len(names) == 1 && names[0] == spare) {
			return nil
		}
	}
	if err := removeAllWritable(l.Work); err != nil {
		return err
	}
	return os.MkdirAll(l.Work, 0o700)
}

// readNames lists the folder dir's entries.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// removeAllWritable is os.RemoveAll that first makes folders writable to
// their owner (nshelper.RemoveAllWritable).
func removeAllWritable(p string) error { return nshelper.RemoveAllWritable(p) }

// A LayerChange is one path of a layer as ApplyLayer judged it.
type LayerChange struct {
	Path    string // relative to the target, with slashes
	What    string // written, removed, folder, link, replaced folder
	Applied bool   // false: discarded (the filter refused it, or it cannot be applied safely)
	Why     string // for a discarded change
	// Stripped names the special bits (setuid, setgid, sticky) the agent
	// set, which the apply left out ("" when none).
	Stripped string
}

// refuse lists a refused path: a folder as the paths inside it (at most
// maxRefused of them), so that what was discarded is named file by file.
func refuse(src, rel, what string, out *[]LayerChange) {
	const why = "not the agent's to change"
	if what != "folder" && what != "replaced folder" {
		*out = append(*out, LayerChange{Path: rel, What: what, Why: why})
		return
	}
	n := 0
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if n++; n > maxRefused {
			return filepath.SkipAll
		}
		r, _ := filepath.Rel(src, p)
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		*out = append(*out, LayerChange{Path: rel + "/" + filepath.ToSlash(r), What: kindOf(p, fi), Why: why})
		return nil
	})
	if n == 0 || n > maxRefused {
		*out = append(*out, LayerChange{Path: rel, What: what, Why: why})
	}
}

// maxRefused bounds the paths named inside one refused folder.
const maxRefused = 100

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// kindOf says what a path of an upper folder stands for.
func kindOf(p string, fi os.FileInfo) string {
	switch m := fi.Mode(); {
	case m&os.ModeCharDevice != 0:
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Rdev == 0 {
			return "removed" // overlayfs's whiteout
		}
		return "device"
	case m.IsDir():
		if opaque(p) {
			return "replaced folder"
		}
		return "folder"
	case m&os.ModeSymlink != 0:
		return "link"
	case m.IsRegular():
		return "written"
	}
	return "special file"
}

// Opaque says whether overlayfs marked a folder of an upper folder as
// replacing the one below.
func Opaque(p string) bool { return opaque(p) }

// opaque says whether overlayfs marked a folder as replacing the one below.
func opaque(p string) bool {
	buf := make([]byte, 8)
	for _, attr := range []string{"trusted.overlay.opaque", "user.overlay.opaque"} {
		if n, err := unix.Lgetxattr(p, attr, buf); err == nil && n > 0 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

// moveFile puts src at dst: a rename on one file system, a copy beside dst
// and a rename otherwise; dst is replaced, never written through.
func moveFile(src, dst string, mode os.FileMode) error {
	if err := os.Rename(src, dst); err == nil {
		return os.Chmod(dst, mode)
	} else if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".looprinter-apply-*")
	if err != nil {
		return err
	}
	_, err = tmp.ReadFrom(in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
