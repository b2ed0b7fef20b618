//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A Layer is a copy-on-write view of the tree Target: inside the sandbox
// the agent sees Target, but everything it writes there (new and changed
// files, removals as whiteouts, opaque folders) lands in Upper, an
// overlayfs upper folder the engine owns; Work is overlayfs's work folder
// on the same file system as Upper. Target itself is never written while
// the agent runs. After the run the engine reads Upper, the exact list of
// what the run changed, and applies what it accepts (ApplyLayer) or keeps
// it for the next run of the same loop without ever applying it (the
// agent's HOME and caches).
type Layer struct {
	Target string `json:"target"`
	Upper  string `json:"upper"`
	Work   string `json:"work"`
	// Lower are more read-only folders laid over Target under Upper, the
	// first uppermost (a check box's setup layer).
	Lower []string `json:"lower,omitempty"`
	// Volatile: what is written is thrown away, so the layer is mounted
	// without syncs (overlayfs's volatile: its unmount does not write out
	// the whole file system Upper is on, which costs milliseconds to
	// seconds on a busy machine).
	Volatile bool `json:"volatile,omitempty"`
}

// EnvLayers marks a process started by Wrap for bwrap with layers: this
// package's init function lays them in a mount namespace of its own and
// executes bubblewrap there (layerMain).
const EnvLayers = "LOOPRINTER_SANDBOX_LAYERS"

// layerSpec is what the layer helper needs.
type layerSpec struct {
	Stage  int      `json:"stage"` // 1: start stage 2 in new namespaces; 2: mount and exec
	Layers []Layer  `json:"layers"`
	Exec   string   `json:"exec"`   // bubblewrap
	Args   []string `json:"args"`   // its arguments
	UserNS bool     `json:"userns"` // stage 2 runs in a user namespace of its own
	// A view (view.go): once the layers are laid, stage 2 changes to Dir,
	// removes Hide and places Put in the layered tree, then executes Exec.
	Dir  string     `json:"dir,omitempty"`
	Hide []string   `json:"hide,omitempty"`
	Put  []ViewFile `json:"put,omitempty"`
	// Cover are paths outside the view's tree shown empty (View.Cover).
	Cover []string `json:"cover,omitempty"`
	// Root is the tree Hide and Put are in (default: the first layer's
	// target, before the layers are sorted).
	Root string `json:"root,omitempty"`
	// FD3: stage 1 passes its descriptor 3 on to stage 2, which leaves it
	// open for Exec (a check box's bubblewrap --info-fd).
	FD3 bool `json:"fd3,omitempty"`
	// Net: stage 2 runs in a network namespace of its own (loopback
	// only), serves the relay to the proxy there (Network), and starts
	// bubblewrap as its child instead of becoming it.
	Net *Network `json:"net,omitempty"`
}

func init() {
	if v, ok := os.LookupEnv(EnvLayers); ok {
		os.Exit(layerMain(v))
	}
}

// layerMain runs in the re-executed binary. Stage 1 starts stage 2 in a new
// mount namespace (and, for a user without privileges, a new user namespace
// in which it maps to itself, so that files keep their owner) and passes
// on its exit status; stage 2 makes every mount private, lays each layer
// over its target and executes bubblewrap, which binds the layered trees
// like any other. When bubblewrap's PID namespace ends, so does the mount
// namespace: no process the agent left behind can reach a layer, let alone
// the real tree.
func layerMain(v string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "looprinter sandbox: "+format+"\n", a...)
		return code
	}
	var s layerSpec
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return fail(126, "bad %s: %v", EnvLayers, err)
	}
	if s.Stage == 2 {
		os.Unsetenv(EnvLayers)
		if s.Net != nil && s.Net.Socket != "" {
			// The proxy's socket is held before the layers are laid: one
			// laid over the folder that holds it would hide it.
			fd, err := unix.Open(s.Net.Socket, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return fail(126, "cannot reach the loop's network proxy: %v", err)
			}
			s.Net.Socket = "/proc/self/fd/" + strconv.Itoa(fd)
		}
		if err := mountLayers(s.Layers, s.UserNS); err != nil {
			return fail(126, "cannot lay the copy-on-write layers: %v (choose `sandbox: landlock` in the loop file where overlayfs cannot be mounted)", err)
		}
		if err := s.shapeView(); err != nil {
			return fail(126, "cannot make the view: %v", err)
		}
		if s.Net != nil {
			if err := startRelay(s.Net); err != nil {
				return fail(126, "cannot start the network relay: %v", err)
			}
			cmd := exec.Command(s.Exec, s.Args...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			return runChild(cmd, fail)
		}
		err := syscall.Exec(s.Exec, append([]string{s.Exec}, s.Args...), os.Environ())
		return fail(126, "cannot run %s: %v", s.Exec, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(126, "%v", errNoExe)
	}
	s.Stage = 2
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if s.Net != nil {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		// The user is root in its namespace (and the user outside it):
		// only a root keeps its capabilities across the exec of stage 2,
		// and mounting needs them. Files keep the user as their owner.
		s.UserNS = true
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	next, _ := json.Marshal(s)
	cmd := exec.Command(exe)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if s.FD3 {
		cmd.ExtraFiles = []*os.File{os.NewFile(3, "fd3")}
	}
	cmd.Env = append(withoutEnv(os.Environ(), EnvLayers), EnvLayers+"="+string(next))
	cmd.SysProcAttr = attr
	if s.Net != nil {
		return runChild(cmd, func(code int, format string, a ...any) int {
			return fail(code, format+" (where a network namespace cannot be made here, write `network: open` in the loop file)", a...)
		})
	}
	return runChild(cmd, fail)
}

// runChild starts cmd, passes SIGTERM, SIGINT and SIGHUP on to it (the
// engine ends the whole process group anyway) and returns its exit status.
func runChild(cmd *exec.Cmd, fail func(int, string, ...any) int) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		return fail(126, "cannot start %s in namespaces of its own: %v", cmd.Path, err)
	}
	go func() {
		for sig := range sigs {
			cmd.Process.Signal(sig)
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return fail(126, "%v", err)
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// mountLayers lays each layer over its target, shallowest first (a loop
// folder inside HOME is laid over the HOME layer). Every folder is opened
// before the first mount and named to overlayfs by its descriptor, so a
// layer's own folders are never looked up through another layer.
func mountLayers(layers []Layer, userNS bool) error {
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	sort.SliceStable(layers, func(i, j int) bool {
		return strings.Count(layers[i].Target, "/") < strings.Count(layers[j].Target, "/")
	})
	type fds struct {
		lower, upper, work int
		extra              []int
	}
	open := func(p string) (int, error) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", p, err)
		}
		return fd, nil
	}
	all := make([]fds, len(layers))
	for i, l := range layers {
		var err error
		if all[i].lower, err = open(l.Target); err != nil {
			return err
		}
		if all[i].upper, err = open(l.Upper); err != nil {
			return err
		}
		if all[i].work, err = open(l.Work); err != nil {
			return err
		}
		for _, x := range l.Lower {
			fd, err := open(x)
			if err != nil {
				return err
			}
			all[i].extra = append(all[i].extra, fd)
		}
	}
	fdPath := func(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
	for i, l := range layers {
		lower := fdPath(all[i].lower)
		for j := len(all[i].extra) - 1; j >= 0; j-- {
			lower = fdPath(all[i].extra[j]) + ":" + lower
		}
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, fdPath(all[i].upper), fdPath(all[i].work))
		if userNS {
			opts += ",userxattr" // in a user namespace the trusted.* attributes cannot be written
		}
		if l.Volatile {
			opts += ",volatile"
		}
		if err := unix.Mount("overlay", l.Target, "overlay", 0, opts); err != nil {
			return fmt.Errorf("overlay on %s: %w", l.Target, err)
		}
	}
	return nil
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
	exe, err := os.Executable()
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
func ClearWork(l Layer) error {
	if err := removeAllWritable(l.Work); err != nil {
		return err
	}
	return os.MkdirAll(l.Work, 0o700)
}

// removeAllWritable is os.RemoveAll that first makes folders writable to
// their owner (overlayfs leaves a mode 000 folder in its work folder).
func removeAllWritable(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// A LayerChange is one path of a layer as ApplyLayer judged it.
type LayerChange struct {
	Path    string // relative to the target, with slashes
	What    string // written, removed, folder, link, replaced folder
	Applied bool   // false: discarded (the filter refused it, or it cannot be applied safely)
	Why     string // for a discarded change
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

// realParent says whether every folder on the way to rel inside target is
// a real folder (not a link).
func realParent(target, rel string) bool {
	cur := target
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
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
