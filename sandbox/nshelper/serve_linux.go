//go:build linux

package nshelper

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A gate's checks run in one box: bubblewrap starts once, with this
// package's server as its command (EnvServe). The server reads each
// check from the engine on descriptor 3 and runs it in namespaces of its
// own, laid fresh for it on a thread of the server's that ends with it
// (serveCheck): nothing a check writes is seen by the next.

// EnvServe marks the check box's server, started by bubblewrap once per
// box: its Serve spec (JSON).
const EnvServe = "LOOPRINTER_SANDBOX_CHECK_SERVE"

// ServeFD is the server's end of its connection to the engine (a unix
// packet socket): a ServeRequest with the check's output descriptor, then
// a ServeReply; a request with Kill ends the running check.
const ServeFD = 3

// Op is one mount of bubblewrap's view, in bubblewrap's order: a fresh
// "tmpfs", a "bind" (a copy of the mount bubblewrap made there, or at
// Target when set), the
// "layers" (the throw-away layers over the targets, laid where bubblewrap
// bound the first target), or a "symlink" to Target bubblewrap made in a
// fresh folder.
type Op struct {
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Target string `json:"target,omitempty"`
	RO     bool   `json:"ro,omitempty"` // a tmpfs laid read-only (bubblewrap's --remount-ro after it)
}

// Serve is what the box's server needs: the layers each check gets (their
// Upper and Work are made fresh for each check; Lower and the files put
// may name descriptors it inherited, as /proc/self/fd/N), the view's
// mounts to lay again for each check, and the view's files.
type Serve struct {
	Layers []Layer    `json:"layers"`
	Ops    []Op       `json:"ops"`
	UserNS bool       `json:"userns"`
	Hide   []string   `json:"hide,omitempty"`
	Put    []ViewFile `json:"put,omitempty"`
	Root   string     `json:"root,omitempty"`
	NewNet bool       `json:"new_net,omitempty"` // each check a network namespace of its own (loopback only)
	Keep   []int      `json:"keep,omitempty"`    // descriptors the layers and files name
	Stage  string     `json:"stage,omitempty"`   // a folder the layers' folders are made in, on a tmpfs of the check's
	Aside  string     `json:"aside,omitempty"`
	Bases  string     `json:"bases,omitempty"` // where the Built layers' bases are made, once (inside Aside)   // the folder holding Stage and the lower folders, covered last
	// Run: the box serves a loop's agent runs (RunRequest), not checks.
	Run bool `json:"run,omitempty"`
	// Relay, for a run box: each run's network namespace gets a relay to
	// the loop's proxy.
	Relay *RelayNet `json:"relay,omitempty"`
	// HostNet, for a run box: the runs have the host's network (the loop
	// file's network: open), no namespace of their own.
	HostNet bool `json:"host_net,omitempty"`
}

// ServeRequest is one check: /bin/sh -c Line in Dir with Env.
type ServeRequest struct {
	Line string   `json:"line,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	Env  []string `json:"env,omitempty"`
	Kill bool     `json:"kill,omitempty"`
}

// ServeReply is a check's end: its exit status (128+signal when killed),
// or why it could not run.
type ServeReply struct {
	Exit   int    `json:"exit"`
	Signal int    `json:"signal,omitempty"` // a run's agent: the signal that ended it
	Err    string `json:"err,omitempty"`
}

func init() {
	if v, ok := os.LookupEnv(EnvServe); ok {
		os.Unsetenv(EnvServe)
		os.Exit(serveMain(v))
	}
}

func serveMain(v string) int {
	var s Serve
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		fmt.Fprintf(os.Stderr, "looprinter check box: bad spec: %v\n", err)
		return 126
	}
	// No check inherits the engine's connection or the box's folders.
	unix.CloseOnExec(ServeFD)
	for _, fd := range s.Keep {
		unix.CloseOnExec(fd)
	}
	// The runtime tries its way to start a process once (a clone that
	// exits at once, os.checkPidfd): here, not as the first process of a
	// check's PID namespace (whose end would end the namespace). Finding
	// a process makes that try without starting a program (a shell
	// started for it cost a few milliseconds of CPU per box).
	probePidfd()
	lastCap = capLastCap()
	// HOME's base (the folders on the way to what it keeps, the copies of
	// its small files) is the same for every check, and none writes it
	// (it lies under the check's layer): made once, in this namespace,
	// where this namespace can be mounted on (as root; a user's server
	// holds its capabilities in a user namespace that does not own it, and
	// each check makes its own).
	for i, l := range s.Layers {
		if l.Built && s.Bases != "" {
			base := filepath.Join(s.Bases, strconv.Itoa(i))
			if MakeBase(l, base) == nil {
				s.Layers[i].Base = base
			}
		}
	}
	var mu sync.Mutex
	var running *os.Process
	buf, oob := make([]byte, 1<<20), make([]byte, unix.CmsgSpace(4*maxRunFDs))
	for {
		n, oobn, _, _, err := unix.Recvmsg(ServeFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil || n == 0 {
			break // the engine is gone: so is the box
		}
		if s.Run {
			s.acceptRun(buf[:n], receivedFiles(oob[:oobn]))
			continue
		}
		var req ServeRequest
		if json.Unmarshal(buf[:n], &req) != nil {
			continue
		}
		if req.Kill {
			mu.Lock()
			if running != nil {
				running.Kill()
			}
			mu.Unlock()
			continue
		}
		out := receivedFile(oob[:oobn])
		if out == nil {
			reply(ServeReply{Exit: 126, Err: "no output for the check"})
			continue
		}
		go func() {
			code, err := s.serveCheck(req, out, func(p *os.Process) {
				mu.Lock()
				running = p
				mu.Unlock()
			})
			out.Close()
			mu.Lock()
			running = nil
			mu.Unlock()
			r := ServeReply{Exit: code}
			if err != nil {
				r.Err = err.Error()
			}
			reply(r)
		}()
	}
	mu.Lock()
	if running != nil {
		running.Kill()
	}
	mu.Unlock()
	return 0
}

// probePidfd makes the runtime's one try of pidfds and clone(CLONE_PIDFD)
// (os.FindProcess asks for it as os/exec's start does) in this process's
// namespaces.
func probePidfd() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
}

func reply(r ServeReply) {
	b, _ := json.Marshal(r)
	unix.Sendmsg(ServeFD, b, nil, nil, 0)
}

// receivedFile is the descriptor a message carried (the check's output),
// nil for none; any more are closed.
func receivedFile(oob []byte) *os.File {
	files := receivedFiles(oob)
	if len(files) == 0 {
		return nil
	}
	for _, f := range files[1:] {
		f.Close()
	}
	return files[0]
}

// receivedFiles are the descriptors a message carried, in order.
func receivedFiles(oob []byte) []*os.File {
	var files []*os.File
	for _, fd := range ReceivedFDs(oob) {
		files = append(files, os.NewFile(uintptr(fd), "received"))
	}
	return files
}

// ReceivedFDs are the descriptors a message's control data (oob)
// carried, in order.
func ReceivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

// serveCheck runs one check on a thread of its own, which ends with it
// (it is never unlocked): the thread leaves for a mount, IPC, PID (and,
// without the host's network, network) namespace of its own, lays fresh
// layers over the targets on a fresh tmpfs, lays again every mount of
// the view a check could write to (fresh tmpfs) or that lies on one
// (copies of bubblewrap's), gives up every capability and starts the
// shell, the first process of its PID namespace: when it ends, the
// kernel ends every process the check left.
func (s Serve) serveCheck(req ServeRequest, out *os.File, started func(*os.Process)) (int, error) {
	type result struct {
		code int
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the check's namespaces
		code, err := s.checkOnThread(req, out, started)
		ch <- result{code, err}
	}()
	r := <-ch
	return r.code, r.err
}

func (s Serve) checkOnThread(req ServeRequest, out *os.File, started func(*os.Process)) (int, error) {
	flags := unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWPID
	if s.NewNet {
		flags |= unix.CLONE_NEWNET
	}
	if err := unix.Unshare(flags); err != nil {
		return 126, fmt.Errorf("cannot make the check's namespaces: %w", err)
	}
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 126, fmt.Errorf("make the mounts private: %w", err)
	}
	if err := s.layView(); err != nil {
		return 126, err
	}
	if s.NewNet {
		if err := loopbackUp(); err != nil {
			return 126, fmt.Errorf("the check's loopback: %w", err)
		}
	}
	if err := dropCaps(); err != nil {
		return 126, err
	}
	cmd := exec.Command("/bin/sh", "-c", req.Line)
	cmd.Dir, cmd.Env = req.Dir, req.Env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("cannot start the check: %w", err)
	}
	started(cmd.Process)
	code, sig, err := waitExit(cmd.Wait())
	if sig != 0 {
		return 128 + sig, nil
	}
	return code, err
}

// layView lays the check's view in this thread's mount namespace: copies
// of the binds to lay again, taken first; the layers' folders on a fresh
// tmpfs; then each op in bubblewrap's order; /dev/shm fresh; the files
// removed and placed in the tree.
func (s Serve) layView() error {
	layers := make([]Layer, len(s.Layers))
	for i, l := range s.Layers {
		l.Upper = filepath.Join(s.Stage, strconv.Itoa(i), "u")
		l.Work = filepath.Join(s.Stage, strconv.Itoa(i), "w")
		l.Volatile = true
		layers[i] = l
	}
	return s.layViewOf(layers, false)
}

// layViewOf is layView with the layers given: a check's (fresh, their
// folders made on the stage) or a run's (its own, kept: run).
func (s Serve) layViewOf(layers []Layer, run bool) error {
	clones := map[int]int{}
	for i, op := range s.Ops {
		if op.Kind != "bind" {
			continue
		}
		from := op.Path
		if op.Target != "" {
			from = op.Target
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, from, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if errors.Is(err, unix.EINVAL) {
			// A user's box: every mount the check's namespace copied is
			// locked, and a mount holding one is copied with it (what it
			// holds lies under the mounts laid again over it).
			fd, err = unix.OpenTree(unix.AT_FDCWD, from, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		}
		if err != nil {
			return fmt.Errorf("copy the mount at %s: %w", op.Path, err)
		}
		clones[i] = fd
	}
	defer func() {
		for _, fd := range clones {
			unix.Close(fd)
		}
	}()
	if err := unix.Mount("tmpfs", s.Stage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return fmt.Errorf("the layers' folder: %w", err)
	}
	for _, l := range layers {
		if run {
			break
		}
		for _, d := range []string{l.Upper, l.Work} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		if fi, err := os.Stat(l.Target); err == nil {
			chownLike(l.Upper, fi)
			os.Chmod(l.Upper, fi.Mode().Perm())
		}
	}
	p, err := prepareLayers(layers, s.UserNS)
	if err != nil {
		return fmt.Errorf("cannot lay the copy-on-write layers: %w", err)
	}
	defer p.close()
	// The stage and the folders aside stay where they are, under an empty
	// read-only tmpfs laid last (the layers hold their folders).
	relaid := map[string]int{} // a target bound again: a copy of its layer
	defer func() {
		for _, fd := range relaid {
			unix.Close(fd)
		}
	}()
	for i, op := range s.Ops {
		if op.Kind == "symlink" {
			if err := os.Symlink(op.Target, op.Path); err != nil {
				return fmt.Errorf("lay a link at %s: %w", op.Path, err)
			}
			continue
		}
		if err := s.mountpoint(op, clones[i]); err != nil {
			return fmt.Errorf("lay %s at %s: %w", op.Kind, op.Path, err)
		}
		var err error
		switch op.Kind {
		case "tmpfs":
			flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
			if op.RO {
				flags |= unix.MS_RDONLY
			}
			err = unix.Mount("tmpfs", op.Path, "tmpfs", flags, "mode=0755")
		case "bind":
			err = unix.MoveMount(clones[i], "", unix.AT_FDCWD, op.Path, unix.MOVE_MOUNT_F_EMPTY_PATH)
			if err == nil {
				delete(clones, i)
			}
		case "layers":
			if err = p.mount(); err != nil {
				break
			}
			for _, o := range s.Ops {
				if o.Kind == "relayer" {
					fd, cerr := unix.OpenTree(unix.AT_FDCWD, o.Path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
					if cerr != nil {
						return fmt.Errorf("copy the layer at %s: %w", o.Path, cerr)
					}
					relaid[o.Path] = fd
				}
			}
		case "relayer":
			fd, ok := relaid[op.Path]
			if !ok {
				return fmt.Errorf("no layer at %s to lay again", op.Path)
			}
			err = unix.MoveMount(fd, "", unix.AT_FDCWD, op.Path, unix.MOVE_MOUNT_F_EMPTY_PATH)
			delete(relaid, op.Path)
			unix.Close(fd)
		}
		if err != nil {
			return fmt.Errorf("lay %s at %s: %w", op.Kind, op.Path, err)
		}
	}
	if err := unix.Mount("tmpfs", s.Aside, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_RDONLY, "mode=0755,size=4k"); err != nil {
		return fmt.Errorf("cover the layers' folders: %w", err)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("the check's /dev/shm: %w", err)
	}
	v := Spec{Layers: layers, Hide: s.Hide, Put: s.Put, Root: s.Root}
	if err := v.shapeView(); err != nil {
		return fmt.Errorf("cannot make the view: %w", err)
	}
	return nil
}

// mountpoint makes, where a fresh tmpfs laid earlier left none, the
// folder (or, for a file's bind, the empty file) op is laid on, as
// bubblewrap made it.
func (s Serve) mountpoint(op Op, clone int) error {
	paths := []string{op.Path}
	if op.Kind == "layers" {
		paths = nil
		for _, l := range s.Layers {
			paths = append(paths, l.Target)
		}
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		var st unix.Stat_t
		if op.Kind == "bind" && unix.Fstat(clone, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// lastCap is the kernel's last capability, read once by the server
// (capLastCap); -1: not read yet.
var lastCap = -1

// capLastCap is /proc/sys/kernel/cap_last_cap, 40 where it cannot be
// read.
func capLastCap() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 40
}

// dropCaps gives up, on this thread, every capability, for good (the
// bounding set empty: not even root gets one back by exec), with no new
// privileges.
func dropCaps() error {
	if err := dropBounding(); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop every capability: %w", err)
	}
	return nil
}
