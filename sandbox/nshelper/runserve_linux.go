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
	"syscall"

	"golang.org/x/sys/unix"
)

// A loop's agent runs in one box: the engine starts bubblewrap once per
// loop (and view) with this package's server inside it, as a gate's
// checks do (serveMain), and each agent run is then a request to it
// (a RunRequest): the server lays the run's view afresh on a thread of
// its own (new mount, IPC and network namespaces; the layers over the
// tree and HOME with the run's own upper folders, which the engine reads
// after the run; every tmpfs fresh), starts the agent as the first
// process of a PID namespace of its own with a /proc of that namespace,
// and answers with the agent's exit. No Go runtime and no bubblewrap
// start per run: the starts were most of what a confined run cost.

// RunLayer names a run's layer folders, as the box's view shows them
// (the engine's folders of the loop's layers are bound aside in it:
// overlayfs takes only folders of the mount namespace it is laid in).
type RunLayer struct {
	Upper string   `json:"upper"`
	Work  string   `json:"work"`
	Lower []string `json:"lower,omitempty"`
}

// RunRequest is one agent run: Argv in Dir with Env, its stdin, stdout
// and stderr the first three descriptors the message carried, the
// fourth the run's own connection (a unix packet socket: the server's
// answers, RunStarted then ServeReply), Cgroup (an index, -1: none) the
// cgroup its first process is born in, and Layers, one per layer of the
// server (in the Serve's order), each in a folder the box's view holds
// aside.
type RunRequest struct {
	Argv   []string   `json:"argv"`
	Dir    string     `json:"dir"`
	Env    []string   `json:"env"`
	Cgroup int        `json:"cgroup"`
	Layers []RunLayer `json:"layers"`
}

// RunStarted is the server's first answer to a run whose agent started,
// with a pidfd of the agent as the message's descriptor (the engine
// reads its own pid for it there). A run that could not start gets a
// ServeReply instead (Err set).
type RunStarted struct {
	Started bool `json:"started"`
}

// procCovered are the files of a run's /proc laid read-only over
// themselves, as bubblewrap lays them: what of the kernel's settings a
// process without capabilities could otherwise write (as root, the
// owner's write bit is enough for most of /proc/sys).
var procCovered = []string{"sys", "sysrq-trigger", "irq", "bus"}

// runFirstFD is the first descriptor of a run's request past its stdio
// and its connection.
const runFirstFD = 4

// acceptRun starts one run's request (msg, the descriptors it carried)
// and answers on the run's own connection.
func (s Serve) acceptRun(msg []byte, files []*os.File) {
	var req RunRequest
	if len(files) < runFirstFD || json.Unmarshal(msg, &req) != nil {
		for _, f := range files {
			f.Close()
		}
		return
	}
	conn := int(files[3].Fd())
	send := func(v any, fd int) {
		b, _ := json.Marshal(v)
		var oob []byte
		if fd >= 0 {
			oob = unix.UnixRights(fd)
		}
		unix.Sendmsg(conn, b, oob, nil, 0)
	}
	go func() {
		// The run's thread of its own, never unlocked: it dies with the
		// run's namespaces.
		runtime.LockOSThread()
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		code, sig, err := s.runOnThread(req, files, func(pidfd int) bool {
			send(RunStarted{Started: true}, pidfd)
			// The engine's answer once it knows the agent's process
			// (until then the agent is held at its start: it cannot
			// end, and its pid cannot be another's).
			var b [1]byte
			n, _, _, _, err := unix.Recvmsg(conn, b[:], nil, 0)
			return err == nil && n == 1
		})
		r := ServeReply{Exit: code, Signal: sig}
		if err != nil {
			r.Err = err.Error()
		}
		send(r, -1)
	}()
}

func (s Serve) runOnThread(req RunRequest, files []*os.File, started func(pidfd int) bool) (int, int, error) {
	if len(req.Argv) == 0 {
		return 126, 0, errors.New("the run's request has no command")
	}
	if len(req.Layers) != len(s.Layers) {
		return 126, 0, fmt.Errorf("the run names %d layers, the box has %d", len(req.Layers), len(s.Layers))
	}
	layers := make([]Layer, len(s.Layers))
	for i, l := range s.Layers {
		r := req.Layers[i]
		for _, d := range append([]string{r.Upper, r.Work}, r.Lower...) {
			if _, ok := within(s.Aside, d); !ok || !filepath.IsAbs(d) {
				return 126, 0, fmt.Errorf("the run's layer folder %s is not one the box holds", d)
			}
		}
		l.Upper, l.Work = r.Upper, r.Work
		l.Lower = append(append([]string(nil), r.Lower...), l.Lower...)
		layers[i] = l
	}
	flags := unix.CLONE_NEWNS | unix.CLONE_NEWIPC
	if !s.HostNet {
		flags |= unix.CLONE_NEWNET
	}
	if err := unix.Unshare(flags); err != nil {
		return 126, 0, fmt.Errorf("cannot make the run's namespaces: %w", err)
	}
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 126, 0, fmt.Errorf("make the mounts private: %w", err)
	}
	if err := s.layViewOf(layers, true); err != nil {
		return 126, 0, err
	}
	if !s.HostNet {
		ln, err := startRelayOf(s.Relay)
		if err != nil {
			return 126, 0, fmt.Errorf("cannot start the network relay: %w", err)
		}
		if ln != nil {
			defer ln.Close() // the relay ends with the run
		}
	}
	// The agent gets no capability from this thread: an empty bounding
	// set (not even root gets one back by exec), no ambient ones, no new
	// privileges. The thread keeps its own, to lay the run's /proc once
	// the agent's PID namespace exists.
	if err := dropBounding(); err != nil {
		return 126, 0, err
	}
	// A bare name is looked for on the run's PATH, in its view.
	prog := req.Argv[0]
	if !strings.Contains(prog, "/") {
		p, err := lookPathIn(prog, req.Env)
		if err != nil {
			return 127, 0, err
		}
		prog = p
	}
	cmd := exec.Command(prog)
	cmd.Args = req.Argv
	cmd.Dir, cmd.Env = req.Dir, req.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[1], files[2]
	// Stopped at its exec (traced) until its /proc is laid; a session of
	// its own; ended with this thread.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Ptrace: true, Cloneflags: syscall.CLONE_NEWPID}
	if req.Cgroup >= runFirstFD && req.Cgroup < len(files) {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(files[req.Cgroup].Fd())
	}
	if err := cmd.Start(); err != nil {
		return 127, 0, fmt.Errorf("cannot start the agent: %w", err)
	}
	pid := cmd.Process.Pid
	if err := layProc(pid); err != nil {
		cmd.Process.Kill()
		syscall.PtraceDetach(pid)
		cmd.Wait()
		return 126, 0, fmt.Errorf("cannot lay the run's /proc: %w", err)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		pidfd = -1
	}
	acked := started(pidfd)
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
	if !acked {
		cmd.Process.Kill()
		syscall.PtraceDetach(pid)
		cmd.Wait()
		return 126, 0, errors.New("the engine did not take the run")
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return 126, 0, fmt.Errorf("cannot let the agent go: %w", err)
	}
	return waitExit(cmd.Wait())
}

// lookPathIn finds name in the folders of env's PATH, as a shell would.
func lookPathIn(name string, env []string) (string, error) {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on the run's PATH", name)
}

// layProc waits for the traced agent's stop at its exec, then lays a
// /proc of its PID namespace over the view's (the server's), with the
// kernel's settings read-only.
func layProc(pid int) error {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if !ws.Stopped() {
		return fmt.Errorf("the agent did not stop at its start (%v)", ws)
	}
	fs, err := unix.Fsopen("proc", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fs)
	if err := unix.FsconfigSetString(fs, "pidns", "/proc/"+strconv.Itoa(pid)+"/ns/pid"); err != nil {
		return fmt.Errorf("a /proc of the run's PID namespace (pidns=, Linux 6.18): %w", err)
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return err
	}
	m, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(m)
	for _, c := range procCovered {
		fd, err := unix.OpenTree(m, c, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cover /proc/%s: %w", c, err)
		}
		err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
		if err == nil {
			err = unix.MoveMount(fd, "", m, c, unix.MOVE_MOUNT_F_EMPTY_PATH)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("cover /proc/%s: %w", c, err)
		}
	}
	return unix.MoveMount(m, "", unix.AT_FDCWD, "/proc", unix.MOVE_MOUNT_F_EMPTY_PATH)
}

// dropBounding empties this thread's bounding set and ambient
// capabilities and sets no_new_privs: what it starts runs without any
// capability, while the thread keeps its own.
func dropBounding() error {
	last := lastCap
	if last < 0 {
		last = capLastCap()
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear the ambient capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return nil
}

// RelayNet is a run box's relay to the loop's proxy: each run's network
// namespace gets its own listener on 127.0.0.1:Port, to Socket (a
// descriptor the server holds, as /proc/self/fd/N).
type RelayNet struct {
	Socket string `json:"socket,omitempty"`
	Port   int    `json:"port,omitempty"`
}

// startRelayOf brings the thread's (fresh) network namespace's loopback
// up and serves the relay there for the run, until its listener (nil:
// no relay) is closed.
func startRelayOf(r *RelayNet) (*os.File, error) {
	if err := loopbackUp(); err != nil {
		return nil, errors.New("bring the loopback up: " + err.Error())
	}
	if r == nil || r.Socket == "" || r.Port == 0 {
		return nil, nil
	}
	ln, err := listenLoopback(r.Port)
	if err != nil {
		return nil, err
	}
	go serveRelay(ln, r.Socket)
	return ln, nil
}

// maxRunFDs is the most descriptors a request carries (stdio, its
// connection, a cgroup, and each layer's folders).
const maxRunFDs = 128
