package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// EnvExec marks a process started by Wrap for landlock: this package's init
// function applies the policy it holds (JSON) and executes the real command.
const EnvExec = "LOOPRINTER_SANDBOX_EXEC"

// helperSpec is what the re-executed helper needs.
type helperSpec struct {
	Exec  string   `json:"exec"`  // the program to execute (argv is the helper's os.Args[1:])
	Dirs  []string `json:"dirs"`  // writable directory trees
	Files []string `json:"files"` // writable single files
	// Net: TCP connect only to NetPort (0: none) where the kernel has
	// Landlock ABI 4 or later.
	Net     bool `json:"net,omitempty"`
	NetPort int  `json:"net_port,omitempty"`
	// ReadDirs and ReadFiles are what the run may read besides what it
	// may write: the view's manifest (see BuildManifest).
	ReadDirs  []string `json:"read_dirs,omitempty"`
	ReadFiles []string `json:"read_files,omitempty"`
	// Sockets are the host's unix sockets the loop lets in
	// (sandbox.allow_sockets): with none, no unix socket can be reached
	// by path (see landlockRules).
	Sockets []string `json:"sockets,omitempty"`
}

// fsRights are the filesystem rights the ruleset handles: everything up to
// ABI 5 (ioctl on devices). Connecting to a unix socket by path (ABI 9) is
// handled too, by landlockRules, which keeps it to the box's own folders
// and the sockets the loop lets in.
const fsRights = landlock.AccessFSSet(1<<16 - 1)

// devices stay writable (and usable with ioctl) for every agent; the rest of
// /dev is read-only, so a disk cannot be written to directly.
var (
	deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}
	deviceDirs  = []string{"/dev/pts", "/dev/shm"}
)

func init() {
	if v, ok := os.LookupEnv(EnvExec); ok {
		os.Exit(helperMain(v))
	}
}

// helperMain runs in the re-executed binary before anything else: it
// restricts this thread with Landlock and executes the real command, which
// inherits the restriction. It returns only on failure.
func helperMain(spec string) int {
	os.Unsetenv(EnvExec)
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "looprinter sandbox: "+format+"\n", a...)
		return code
	}
	var s helperSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fail(126, "bad %s: %v", EnvExec, err)
	}
	if len(os.Args) < 2 || s.Exec == "" {
		return fail(126, "no command to run")
	}
	// The restriction and the exec must happen on the same OS thread; the
	// thread is never unlocked.
	runtime.LockOSThread()
	if err := restrictThread(s); err != nil {
		return fail(126, "%v", err)
	}
	err := syscall.Exec(s.Exec, os.Args[1:], os.Environ())
	code := 126
	if errors.Is(err, syscall.ENOENT) {
		code = 127
	}
	return fail(code, "cannot run %s: %v", s.Exec, err)
}

var landlockOnce struct {
	sync.Once
	abi int
	err error
}

func landlockProbe() error {
	landlockOnce.Do(func() {
		abi, err := llsyscall.LandlockGetABIVersion()
		switch {
		case err != nil:
			landlockOnce.err = fmt.Errorf("the kernel has no Landlock (%v)", err)
		case abi < 1:
			landlockOnce.err = errors.New("the kernel has no Landlock")
		default:
			landlockOnce.abi = abi
			if _, err := os.Executable(); err != nil {
				landlockOnce.err = errNoExe
			}
		}
	})
	return landlockOnce.err
}

func landlockWhat() string {
	if landlockOnce.abi == 0 {
		return "Landlock"
	}
	return fmt.Sprintf("Landlock ABI %d", landlockOnce.abi)
}

// tempDirPrefix begins the name of every run's private temporary folder
// (TempDir), in the system's temporary folder.
const tempDirPrefix = "looprinter-sandbox-"

// TempDir is the private temporary folder of landlock runs in dir (TMPDIR);
// Wrap empties it for every run.
func TempDir(dir string) string {
	h := sha256.Sum256([]byte(filepath.Clean(dir)))
	return filepath.Join(os.TempDir(), tempDirPrefix+hex.EncodeToString(h[:8]))
}

// TempDirOf is the private temporary folder of the runs in dir in slot
// (runs at once): slot 0's is TempDir's.
func TempDirOf(dir string, slot int) string {
	if slot <= 0 {
		return TempDir(dir)
	}
	return fmt.Sprintf("%s-%d", TempDir(dir), slot+1)
}

// RemoveTempDir removes the private temporary folders of the runs in dir
// (TempDirOf, every slot), when the loop's engine stops: what an agent left
// there is not kept from one run to the next anyway.
func RemoveTempDir(dir string) {
	if c, err := canonical(dir); err == nil {
		dir = c
	}
	t := TempDir(dir)
	os.RemoveAll(t)
	if more, err := filepath.Glob(t + "-*"); err == nil {
		for _, m := range more {
			os.RemoveAll(m)
		}
	}
}

// wrapLandlock: p's paths are canonical and exist.
func (p Policy) wrapLandlock(path string, args []string) (string, []string, []string, error) {
	if err := landlockProbe(); err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: landlock: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: %w", errNoExe)
	}
	tmp := TempDirOf(p.Dir, p.Slot)
	if err := freshPrivateDir(tmp); err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: private temporary folder: %w", err)
	}
	s := helperSpec{Exec: path, Dirs: []string{p.Dir, tmp}}
	m := p.manifest(path)
	s.ReadDirs, s.ReadFiles = readRules(m, p.Shown...)
	s.Sockets = m.sockets()
	if p.Net != nil {
		s.Net, s.NetPort = true, p.Net.Port
	}
	// Read-only paths outside Dir are kept out of the writable trees that hold
	// them; those inside Dir cannot be (Unenforced).
	var outside []string
	for _, r := range p.ReadOnly {
		if !Within(r, p.Dir) {
			outside = append(outside, r)
		}
	}
	for _, w := range p.Writable {
		grant(w, outside, &s.Dirs, &s.Files)
	}
	spec, err := json.Marshal(s)
	if err != nil {
		return "", nil, nil, err
	}
	env := append([]string{"TMPDIR=" + tmp, EnvExec + "=" + string(spec)}, p.Net.Env()...)
	return exe, append([]string{path}, args...), env, nil
}

// grant adds w to the writable dirs or files, except the read-only paths in
// ro: a tree holding one is granted entry by entry around it (its own
// directory stays without create/remove rights). Symbolic links met on the
// way are not followed.
func grant(w string, ro []string, dirs, files *[]string) {
	var inside []string
	for _, r := range ro {
		if r == w || Within(w, r) {
			return
		}
		if Within(r, w) {
			inside = append(inside, r)
		}
	}
	fi, err := os.Stat(w)
	if err != nil {
		return
	}
	if !fi.IsDir() {
		*files = append(*files, w)
		return
	}
	if len(inside) == 0 {
		*dirs = append(*dirs, w)
		return
	}
	ents, err := os.ReadDir(w)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		grant(filepath.Join(w, e.Name()), inside, dirs, files)
	}
}

// resolveUnixABI is the first Landlock ABI that mediates connecting to a
// unix socket by its path.
const resolveUnixABI = 9

// LandlockUnixByPath says whether this kernel's Landlock itself mediates
// connecting to a unix socket by path (ABI 9), so that the landlock
// sandbox can let in only the sockets the loop lists.
func LandlockUnixByPath() bool {
	return landlockProbe() == nil && landlockOnce.abi >= resolveUnixABI
}

// SocketGap is validate's and doctor's warning about sandbox.allow_sockets
// under kind ("" when there is none to give): Landlock before ABI 9
// cannot tell one unix socket path from another, so letting any socket
// in lets every unix socket of the host in, by path.
func SocketGap(kind string, sockets []string) string {
	if kind != Landlock || len(sockets) == 0 {
		return ""
	}
	if LandlockUnixByPath() {
		return ""
	}
	return fmt.Sprintf("sandbox.allow_sockets: under landlock, allow_sockets opens every unix socket of the host by path (a terminal multiplexer's, an ssh agent's), not only %s: %s cannot tell one socket path from another; use bwrap to allow only these", strings.Join(sockets, ", "), landlockWhat())
}

// landlockUnixNote is what the landlock sandbox guarantees about unix
// sockets on this kernel.
func landlockUnixNote() string {
	if LandlockUnixByPath() {
		return "no unix socket of the host's but those in sandbox.allow_sockets (Landlock ABI 9)"
	}
	return "no unix socket of the host's (a seccomp filter refuses making any unix socket; socketpair works), unless sandbox.allow_sockets is set, which opens every one by path"
}

// landlockUnixGap is what that costs a check.
func landlockUnixGap() string {
	if LandlockUnixByPath() {
		return "a unix socket is reachable only in the check's own folders and sandbox.allow_sockets"
	}
	return "no unix socket can be made (a seccomp filter; socketpair works): code that makes one of its own (a Python multiprocessing manager or forkserver, the default start method from Python 3.14, a test server on a socket file) fails unless sandbox.allow_sockets is set, which opens every unix socket of the host by path"
}
