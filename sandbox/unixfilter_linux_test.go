package sandbox

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A process that installs the unix-socket filter on its thread and reports
// what each kind of socket call gives (UNIXFILTER_TEST_CHILD): the test
// binary doubles as it.
func init() {
	if os.Getenv("UNIXFILTER_TEST_CHILD") == "" {
		return
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println("no_new_privs:", err)
		os.Exit(2)
	}
	if err := refuseUnixSockets(); err != nil {
		fmt.Println("filter:", err)
		os.Exit(2)
	}
	report := func(name string, err error) {
		if err == nil {
			fmt.Println(name, "allowed")
		} else {
			fmt.Println(name, "refused:", err)
		}
	}
	for _, c := range []struct {
		name        string
		domain, typ int
	}{
		{"unix-stream", unix.AF_UNIX, unix.SOCK_STREAM},
		{"unix-dgram", unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC},
		{"inet", unix.AF_INET, unix.SOCK_STREAM},
		{"inet6", unix.AF_INET6, unix.SOCK_DGRAM},
	} {
		fd, err := unix.Socket(c.domain, c.typ, 0)
		if err == nil {
			unix.Close(fd)
		}
		report(c.name, err)
	}
	// The domain is an int: a value with high bits set is AF_UNIX to the
	// kernel, and to the filter.
	fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, 1<<32|unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if errno == 0 {
		unix.Close(int(fd))
		report("unix-high-bits", nil)
	} else {
		report("unix-high-bits", errno)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	report("socketpair", err)
	// What the thread executes keeps the filter.
	out, err := exec.Command("/bin/sh", "-c", "exec 3<>/dev/null; echo child ran").CombinedOutput()
	fmt.Printf("exec: %s %v\n", strings.TrimSpace(string(out)), err)
	os.Exit(0)
}

// Under the filter, socket(AF_UNIX) is refused with EACCES in the process
// and in what it executes; other sockets and socketpair are not.
func TestUnixFilterRefusesUnixSockets(t *testing.T) {
	if _, err := filterArches(runtime.GOARCH); err != nil {
		t.Skip(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "UNIXFILTER_TEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{
		"unix-stream refused: permission denied",
		"unix-dgram refused: permission denied",
		"unix-high-bits refused: permission denied",
		"inet allowed",
		"inet6 allowed",
		"socketpair allowed",
		"exec: child ran <nil>",
	} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// seccompData is a struct seccomp_data as the filter's loads see it: the
// VM of x/net/bpf loads words big-endian, the kernel natively; each word
// is laid where the filter reads it.
func seccompData(arch, nr uint32, arg0 uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[seccompNr:], nr)
	binary.BigEndian.PutUint32(b[seccompArch:], arch)
	binary.BigEndian.PutUint32(b[seccompArg0:], uint32(arg0))
	binary.BigEndian.PutUint32(b[seccompArg0+4:], uint32(arg0>>32))
	return b
}

// The filter of every architecture it knows, run on the calls a process
// of that machine can make: the native and the compatibility ABI, x32 on
// x86_64, socketcall on i386, and an architecture it does not know.
func TestUnixSocketProgram(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	)
	cases := map[string][]struct {
		name      string
		arch, nr  uint32
		arg0      uint64
		wantDeny  bool
		wantAllow bool
	}{
		"amd64": {
			{name: "socket unix", arch: unix.AUDIT_ARCH_X86_64, nr: 41, arg0: unix.AF_UNIX, wantDeny: true},
			{name: "socket inet", arch: unix.AUDIT_ARCH_X86_64, nr: 41, arg0: unix.AF_INET, wantAllow: true},
			{name: "socket unix, high bits", arch: unix.AUDIT_ARCH_X86_64, nr: 41, arg0: 0xffffffff00000000 | unix.AF_UNIX, wantDeny: true},
			{name: "socketpair unix", arch: unix.AUDIT_ARCH_X86_64, nr: 53, arg0: unix.AF_UNIX, wantAllow: true},
			{name: "connect", arch: unix.AUDIT_ARCH_X86_64, nr: 42, arg0: 3, wantAllow: true},
			{name: "x32 socket unix", arch: unix.AUDIT_ARCH_X86_64, nr: 41 | x32Bit, arg0: unix.AF_UNIX, wantDeny: true},
			{name: "x32 socket inet", arch: unix.AUDIT_ARCH_X86_64, nr: 41 | x32Bit, arg0: unix.AF_INET, wantAllow: true},
			{name: "i386 socketcall", arch: unix.AUDIT_ARCH_I386, nr: 102, arg0: 1, wantDeny: true},
			{name: "i386 socket unix", arch: unix.AUDIT_ARCH_I386, nr: 359, arg0: unix.AF_UNIX, wantDeny: true},
			{name: "i386 socket inet", arch: unix.AUDIT_ARCH_I386, nr: 359, arg0: unix.AF_INET, wantAllow: true},
			{name: "i386 socketpair", arch: unix.AUDIT_ARCH_I386, nr: 360, arg0: unix.AF_UNIX, wantAllow: true},
			{name: "i386 read (41 is dup there)", arch: unix.AUDIT_ARCH_I386, nr: 41, arg0: unix.AF_UNIX, wantAllow: true},
			{name: "unknown arch", arch: unix.AUDIT_ARCH_AARCH64, nr: 198, arg0: unix.AF_INET, wantDeny: true},
		},
		"arm64": {
			{name: "socket unix", arch: unix.AUDIT_ARCH_AARCH64, nr: 198, arg0: unix.AF_UNIX, wantDeny: true},
			{name: "socket inet", arch: unix.AUDIT_ARCH_AARCH64, nr: 198, arg0: unix.AF_INET, wantAllow: true},
			{name: "socketpair unix", arch: unix.AUDIT_ARCH_AARCH64, nr: 199, arg0: unix.AF_UNIX, wantAllow: true},
			{name: "arm socket unix", arch: unix.AUDIT_ARCH_ARM, nr: 281, arg0: unix.AF_UNIX, wantDeny: true},
			{name: "arm socketpair", arch: unix.AUDIT_ARCH_ARM, nr: 288, arg0: unix.AF_UNIX, wantAllow: true},
			{name: "unknown arch", arch: unix.AUDIT_ARCH_X86_64, nr: 41, arg0: unix.AF_INET, wantDeny: true},
		},
	}
	for goarch, calls := range cases {
		ins, err := unixSocketProgram(goarch)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(ins)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		for _, c := range calls {
			got, err := vm.Run(seccompData(c.arch, c.nr, c.arg0))
			if err != nil {
				t.Fatalf("%s %s: %v", goarch, c.name, err)
			}
			if c.wantDeny == c.wantAllow {
				t.Fatalf("%s %s: the case says neither or both", goarch, c.name)
			}
			want := uint32(allow)
			if c.wantDeny {
				want = deny
			}
			if uint32(got) != want {
				t.Errorf("%s %s: the filter returns %#x, want %#x", goarch, c.name, got, want)
			}
		}
	}
	if _, err := unixSocketProgram("riscv64"); err == nil || !strings.Contains(err.Error(), "riscv64") {
		t.Errorf("an architecture without a filter: %v", err)
	}
}

// Which kernels need the seccomp filter: before Landlock ABI 9, unless the
// loop lets sockets in.
func TestUnixFilterNeeded(t *testing.T) {
	for _, c := range []struct {
		abi     int
		sockets []string
		want    bool
	}{
		{1, nil, true}, {7, nil, true}, {8, nil, true},
		{7, []string{"/run/db.sock"}, false},
		{9, nil, false}, {10, []string{"/run/db.sock"}, false},
	} {
		if got := unixFilter(c.abi, c.sockets); got != c.want {
			t.Errorf("unixFilter(%d, %v) = %v, want %v", c.abi, c.sockets, got, c.want)
		}
	}
}

// listenUnix serves a unix socket outside every loop folder, as a user's
// daemon does.
func listenUnix(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "daemon.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return sock
}

// An agent run under Landlock cannot reach a unix socket of the host; with
// the socket in sandbox.allow_sockets it can.
func TestLandlockAgentUnixSockets(t *testing.T) {
	need(t, Landlock)
	sock := listenUnix(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprint("allowed=", allowed), func(t *testing.T) {
			l := newLayout(t)
			if err := CopyFile(exe, filepath.Join(l.dir, "dialer"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := l.policy(Landlock)
			if allowed {
				p.View.AllowSockets = []string{sock}
			}
			out := run(t, p, l, "CHECKBOX_TEST_DIAL="+sock+" ./dialer; echo exit=$?")
			if connected := strings.Contains(out, "connected"); connected != allowed {
				t.Fatalf("connected to %s: %v: %s", sock, connected, out)
			}
			if !allowed && !strings.Contains(out, "permission denied") {
				t.Fatalf("not refused by the sandbox: %s", out)
			}
		})
	}
}

// A check under Landlock cannot reach a unix socket of the host; with the
// socket in sandbox.allow_sockets it can.
func TestLandlockCheckUnixSockets(t *testing.T) {
	sock := listenUnix(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprint("allowed=", allowed), func(t *testing.T) {
			f := newBoxFixture(t)
			o := CheckBoxOptions{Network: CheckNetworkHost}
			if allowed {
				o.View.AllowSockets = []string{sock}
			}
			b := f.box(t, Landlock, o)
			if err := CopyFile(exe, filepath.Join(f.tree, "dialer"), 0o755); err != nil {
				t.Fatal(err)
			}
			out, code := runBox(t, b, f.tree, "./dialer", append(f.env, "CHECKBOX_TEST_DIAL="+sock))
			if connected := code == 0 && strings.Contains(out, "connected"); connected != allowed {
				t.Fatalf("connected to %s: %v (exit %d): %s", sock, connected, code, out)
			}
			if !allowed && !strings.Contains(out, "permission denied") {
				t.Fatalf("not refused by the sandbox: %s", out)
			}
		})
	}
}
