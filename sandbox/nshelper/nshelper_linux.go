//go:build linux

package nshelper

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func init() {
	if _, ok := os.LookupEnv(EnvProbe); ok {
		os.Stdout.WriteString(Fingerprint() + "\n")
		os.Exit(0)
	}
	if v, ok := os.LookupEnv(EnvCheckLayers); ok {
		os.Unsetenv(EnvCheckLayers)
		os.Exit(layerMain(v, "looprinter check sandbox: "))
	}
	if v, ok := os.LookupEnv(EnvLayers); ok {
		os.Exit(layerMain(v, "looprinter sandbox: "))
	}
}

// layerMain runs in the re-executed binary. Stage 2 makes every mount
// private, lays each layer over its target and executes bubblewrap, which
// binds the layered trees like any other (with a network namespace: serves
// the relay and starts bubblewrap as its child). When bubblewrap's PID
// namespace ends, so does the mount namespace: no process the agent left
// behind can reach a layer, let alone the real tree.
//
// Stage 1 gets stage 2 its namespaces. As root this process does stage 2
// itself: this thread leaves for a mount (and network) namespace of its
// own, and everything after that (mounts, the relay's listening socket,
// the start of bubblewrap) is done from it, so the binary starts once. A
// user without privileges needs a user namespace, which a process with
// more than one thread (any Go program) cannot enter: stage 1 starts
// stage 2 in new namespaces (a user namespace in which the user maps to
// root, so that files keep their owner) and passes on its exit status.
func layerMain(v, prefix string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, prefix+format+"\n", a...)
		return code
	}
	var s Spec
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return fail(126, "bad helper spec: %v", err)
	}
	if s.Stage == 2 {
		os.Unsetenv(EnvLayers)
		return s.stage2(fail)
	}
	netFail := func(code int, format string, a ...any) int {
		return fail(code, format+" (where a network namespace cannot be made here, write `network: open` in the loop file)", a...)
	}
	if os.Getuid() == 0 {
		os.Unsetenv(EnvLayers)
		runtime.LockOSThread() // never unlocked: the thread dies with the process
		flags := unix.CLONE_NEWNS
		if s.Net != nil {
			flags |= unix.CLONE_NEWNET
		}
		if err := unix.Unshare(flags); err != nil {
			if s.Net != nil {
				return netFail(126, "cannot make namespaces of its own: %v", err)
			}
			return fail(126, "cannot make a mount namespace: %v", err)
		}
		return s.stage2(fail)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(126, "cannot find the running executable to re-execute as the sandbox helper")
	}
	s.Stage = 2
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if s.Net != nil {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	// The user is root in its namespace (and the user outside it): only a
	// root keeps its capabilities across the exec of stage 2, and mounting
	// needs them. Files keep the user as their owner.
	s.UserNS = true
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	next, _ := json.Marshal(s)
	cmd := exec.Command(exe)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if s.FD3 {
		cmd.ExtraFiles = []*os.File{os.NewFile(3, "fd3")}
	}
	env := withoutEnv(withoutEnv(os.Environ(), EnvLayers), EnvCheckLayers)
	cmd.Env = append(env, EnvLayers+"="+string(next))
	cmd.SysProcAttr = attr
	if s.Net != nil {
		return runChild(cmd, netFail)
	}
	return runChild(cmd, fail)
}

// stage2 lays the layers and the view and runs bubblewrap, in this
// process's (as root: this thread's) namespaces.
func (s Spec) stage2(fail func(int, string, ...any) int) int {
	if s.Net != nil && s.Net.Socket != "" {
		// The proxy's socket is held before the layers are laid: one laid
		// over the folder that holds it would hide it.
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
	code, sig, err := waitExit(cmd.Wait())
	switch {
	case err != nil:
		return fail(126, "%v", err)
	case sig != 0:
		return 128 + sig
	}
	return code
}

// waitExit is a process's end from its Wait: its exit code, or the
// signal that ended it (code -1), or why it was not waited for.
func waitExit(err error) (code, sig int, _ error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, int(ws.Signal()), nil
		}
		return ee.ExitCode(), 0, nil
	}
	return 126, 0, err
}

// mountLayers lays each layer over its target, shallowest first (a loop
// folder inside HOME is laid over the HOME layer). Every folder is opened
// before the first mount and named to overlayfs by its descriptor, so a
// layer's own folders are never looked up through another layer.
func mountLayers(layers []Layer, userNS bool) error {
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	p, err := prepareLayers(layers, userNS)
	if err != nil {
		return err
	}
	return p.mount()
}

// prepared are layers whose folders are open and whose built views are
// made, ready to be laid (mount).
type prepared struct {
	layers []Layer
	all    []layerFDs
	blt    []*built
	userNS bool
}

type layerFDs struct {
	lower, upper, work int
	extra              []int
}

// prepareLayers sorts layers shallowest first, makes the built views and
// opens every folder the layers name; nothing is laid yet.
func prepareLayers(layers []Layer, userNS bool) (*prepared, error) {
	sort.SliceStable(layers, func(i, j int) bool {
		return strings.Count(layers[i].Target, "/") < strings.Count(layers[j].Target, "/")
	})
	open := func(p string) (int, error) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", p, err)
		}
		return fd, nil
	}
	// A view built by construction (HOME): its base and its kept folders'
	// layers, before any layer is laid.
	p := &prepared{layers: layers, all: make([]layerFDs, len(layers)), blt: make([]*built, len(layers)), userNS: userNS}
	for i, l := range layers {
		if l.Built {
			b, err := prepareBuilt(l, layers, userNS)
			if err != nil {
				return nil, fmt.Errorf("the view of %s: %w", l.Target, err)
			}
			p.blt[i] = b
		}
	}
	for i, l := range layers {
		var err error
		lowest := l.Target
		if l.From != "" {
			lowest = l.From
		}
		if p.blt[i] != nil {
			lowest = p.blt[i].base
		}
		if p.all[i].lower, err = open(lowest); err != nil {
			return nil, err
		}
		if p.all[i].upper, err = open(l.Upper); err != nil {
			return nil, err
		}
		if p.all[i].work, err = open(l.Work); err != nil {
			return nil, err
		}
		for _, x := range l.Lower {
			fd, err := open(x)
			if err != nil {
				return nil, err
			}
			p.all[i].extra = append(p.all[i].extra, fd)
		}
	}
	return p, nil
}

// mount lays the prepared layers, shallowest first, and closes their
// folders.
func (p *prepared) mount() error {
	defer p.close()
	fdPath := func(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
	for i, l := range p.layers {
		lower := fdPath(p.all[i].lower)
		for j := len(p.all[i].extra) - 1; j >= 0; j-- {
			lower = fdPath(p.all[i].extra[j]) + ":" + lower
		}
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, fdPath(p.all[i].upper), fdPath(p.all[i].work))
		if p.userNS {
			opts += ",userxattr" // in a user namespace the trusted.* attributes cannot be written
		}
		if l.Volatile {
			opts += ",volatile"
		}
		if err := unix.Mount("overlay", l.Target, "overlay", 0, opts); err != nil {
			return fmt.Errorf("overlay on %s: %w", l.Target, err)
		}
		if p.blt[i] != nil {
			if err := p.blt[i].place(l.Target); err != nil {
				return fmt.Errorf("the view of %s: %w", l.Target, err)
			}
		}
	}
	return nil
}

// close closes the prepared layers' folders.
func (p *prepared) close() {
	for _, f := range p.all {
		for _, fd := range append([]int{f.lower, f.upper, f.work}, f.extra...) {
			if fd > 0 {
				unix.Close(fd)
			}
		}
	}
	p.all = nil
}

// shapeView runs in stage 2 once the layers are laid: it removes and
// places the view's files, never through a link (a link on the way is
// replaced by a folder in the view, which the tree never sees), and
// changes to the working folder.
func (s Spec) shapeView() error {
	if len(s.Layers) == 0 {
		return nil
	}
	root := s.Layers[0].Target
	if s.Root != "" {
		root = s.Root
	}
	for _, h := range s.Hide {
		rel, ok := within(root, h)
		if !ok || !RealParent(root, rel) {
			continue // not in the tree as a real path: nothing of the tree to hide
		}
		if err := os.RemoveAll(h); err != nil {
			return fmt.Errorf("hide %s: %w", rel, err)
		}
	}
	for _, p := range s.Put {
		rel, ok := within(root, p.To)
		if !ok {
			return fmt.Errorf("%s is outside the view", p.To)
		}
		if err := realFolders(root, rel); err != nil {
			return err
		}
		if err := os.RemoveAll(p.To); err != nil {
			return err
		}
		if err := CopyFile(p.From, p.To, p.Mode.Perm()); err != nil {
			return fmt.Errorf("place %s: %w", rel, err)
		}
	}
	for _, c := range s.Cover {
		if err := coverPath(c); err != nil {
			return fmt.Errorf("cover %s: %w", c, err)
		}
	}
	if s.Dir != "" {
		return os.Chdir(s.Dir)
	}
	return nil
}

// coverPath shows p empty in this mount namespace: a folder as an empty
// tmpfs, a file as /dev/null. A missing path is left alone.
func coverPath(p string) error {
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=16k,mode=0700")
	}
	return unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
}

// realFolders makes every folder on the way to rel inside root a real
// folder of the view.
func realFolders(root, rel string) error {
	cur := root
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil {
			if err := os.Remove(cur); err != nil {
				return err
			}
		}
		if err := os.Mkdir(cur, 0o755); err != nil {
			return err
		}
	}
	return nil
}
