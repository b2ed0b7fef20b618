//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/looprinter/looprinter/sandbox/nshelper"
	"golang.org/x/sys/unix"
)

// A gate's box outlives the gate: Close keeps its server for the next box
// that would start the same one (the loop's next gate, its next holdout
// run), so a loop starts bubblewrap and the server once per kind of box,
// not once per gate. What the server serves is its key (serverKey): the
// view, the layers and what they keep, the files placed, the environment,
// and the identity of every path bound in; a box whose view differs in
// any of them starts its own. Nothing of a check is in the server: each
// check is laid afresh in namespaces of its own that end with it.
//
// A box's setups write a layer of the box's own under its checks (its
// base): a server is kept, and taken, only by a box whose base is empty
// (no setup ran), and it lays no base; a setup gives any server that lays
// no base back first, so the box's next check starts one that lays it.

// keptServerIdle is how long a kept server waits for a box.
const keptServerIdle = 2 * time.Minute

// keptServerMax is how many servers are kept at most (the longest idle
// is ended first).
const keptServerMax = 4

var keptServers struct {
	sync.Mutex
	all  []*boxServer
	off  bool // tests: every box starts its own server
	took int  // servers a box took from here (tests)
}

// serverKey is what a box's server serves: the user, the environment,
// the server's spec, bubblewrap's arguments with the identity of each
// path a mount is taken from or laid on (viewIDs: a folder removed and
// made again, a file replaced, is not the one the server bound; one
// changed in place is, and the bind shows it), the files given by
// descriptor by theirs, and the content of HOME's small kept files,
// which the server copies once.
func serverKey(a []string, spec nshelper.Serve, env []string, passed []string) string {
	var k strings.Builder
	k.WriteString(strconv.Itoa(os.Getuid()))
	for _, e := range env {
		k.WriteString("\x02" + e)
	}
	js, _ := json.Marshal(spec)
	k.WriteString("\x03")
	k.Write(js)
	viewIDs(&k, a)
	for _, p := range passed {
		pathID(&k, p, false)
	}
	for _, l := range spec.Layers {
		if l.Built {
			for _, x := range l.Keep {
				pathID(&k, x, true)
			}
		}
	}
	return k.String()
}

// pathID writes p and its identity to k: its mount, device, inode and
// birth time (an inode's number is given again to the next file made;
// its birth time is not; a file system that keeps none adds the change
// time); with content, a file's change time and size too.
func pathID(k *strings.Builder, p string, content bool) {
	k.WriteByte(0)
	k.WriteString(p)
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_BTIME|unix.STATX_MNT_ID, &st) != nil {
		return
	}
	fmt.Fprintf(k, "\x01%d:%d:%d:%d:%d:%d.%d", st.Mnt_id, st.Dev_major, st.Dev_minor, st.Ino, st.Mask&unix.STATX_BTIME, st.Btime.Sec, st.Btime.Nsec)
	if st.Mask&unix.STATX_BTIME == 0 || content && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		// Without a birth time, the change time tells a path made again
		// (and any change to it: a box is then started more often).
		fmt.Fprintf(k, ":%d.%d:%d", st.Ctime.Sec, st.Ctime.Nsec, st.Size)
	}
}

// viewIDs writes bubblewrap's arguments a to k, with the identity of
// every path a mount is taken from or laid on. A box's view outlives the
// paths it was built from: a folder bound in and made again is not the
// one the box shows, and a folder a tmpfs or a bind covers, removed on
// the host, takes its cover with it (the kernel detaches a mount whose
// mount point is removed in another namespace): made again, it would show
// uncovered.
//
// Each option is read by bwrapOptions, which says which of its arguments
// are such paths. An option it does not know (or an argument where an
// option should be) makes the key one of its own: the box is never
// reused, rather than reused for a path nobody looked at. The command
// after "--" is the server's, by descriptor (the caller's passed files).
func viewIDs(k *strings.Builder, a []string) {
	for i := 0; i < len(a); i++ {
		k.WriteString("\x04" + a[i])
		if a[i] == "--" {
			return
		}
		paths, known := bwrapOptions[a[i]]
		if !known || i+len(paths) >= len(a) {
			fmt.Fprintf(k, "\x05unread:%d", uniqueKeys.Add(1))
			return
		}
		for _, isPath := range paths {
			i++
			k.WriteString("\x04" + a[i])
			if isPath {
				pathID(k, a[i], false)
			}
		}
	}
}

// uniqueKeys makes the key of a view viewIDs cannot read one of its own.
var uniqueKeys atomic.Int64

// bwrapOptions are bubblewrap's options a view may hold, each with its
// arguments: true for a path of the host's a mount is taken from or laid
// on. A --symlink's is laid in a folder an earlier option of the view
// made (a --tmpfs or --dir, read here) and holds text, not a host path;
// --chdir names a folder of the box's own view.
var bwrapOptions = map[string][]bool{
	"--die-with-parent": nil, "--unshare-pid": nil, "--new-session": nil,
	"--unshare-user": nil, "--unshare-user-try": nil, "--unshare-net": nil,
	"--unshare-ipc": nil, "--unshare-uts": nil, "--unshare-cgroup": nil,
	"--unshare-cgroup-try": nil, "--unshare-all": nil, "--share-net": nil,
	"--as-pid-1": nil, "--clearenv": nil, "--disable-userns": nil,
	"--assert-userns-disabled": nil,

	"--cap-drop": {false}, "--cap-add": {false}, "--info-fd": {false},
	"--uid": {false}, "--gid": {false}, "--unsetenv": {false},
	"--hostname": {false}, "--perms": {false}, "--size": {false},
	"--chdir": {false}, "--argv0": {false},

	"--tmpfs": {true}, "--dir": {true}, "--remount-ro": {true},
	"--dev": {true}, "--proc": {true}, "--mqueue": {true},

	"--bind": {true, true}, "--ro-bind": {true, true}, "--dev-bind": {true, true},
	"--bind-try": {true, true}, "--ro-bind-try": {true, true}, "--dev-bind-try": {true, true},
	"--symlink": {false, false}, "--setenv": {false, false}, "--chmod": {false, true},
}

// takeServer is a kept server with key, out of the kept ones; nil for
// none. A kept server that ended meanwhile is closed.
func takeServer(key string) *boxServer {
	closeIdleServers()
	keptServers.Lock()
	var found *boxServer
	for i, s := range keptServers.all {
		if s.key == key {
			found = s
			keptServers.all = slices.Delete(keptServers.all, i, i+1)
			break
		}
	}
	keptServers.Unlock()
	if found == nil {
		return nil
	}
	if !found.alive() {
		found.close()
		return nil
	}
	keptServers.Lock()
	keptServers.took++
	keptServers.Unlock()
	return found
}

// alive says whether the server still reads its connection: an idle
// server never writes, so anything to read is its end.
func (s *boxServer) alive() bool {
	fds := []unix.PollFd{{Fd: int32(s.conn.Fd()), Events: unix.POLLIN | unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

// keepServer keeps s for the next box with its key, or ends it (no key,
// broken, kept off: LOOPRINTER_CHECK_BOX_SERVER=gate keeps none, a box
// per gate as before).
func keepServer(s *boxServer) {
	keptServers.Lock()
	if s.key == "" || s.broken.Load() || keptServers.off || os.Getenv("LOOPRINTER_CHECK_BOX_SERVER") == "gate" {
		keptServers.Unlock()
		s.close()
		return
	}
	s.last = time.Now()
	keptServers.all = append(keptServers.all, s)
	var old *boxServer
	if len(keptServers.all) > keptServerMax {
		old = keptServers.all[0]
		keptServers.all = keptServers.all[1:]
	}
	keptServers.Unlock()
	time.AfterFunc(keptServerIdle+time.Second, closeIdleServers)
	if old != nil {
		old.close()
	}
}

// closeIdleServers ends the kept servers no box took for keptServerIdle.
func closeIdleServers() {
	now := time.Now()
	closeKeptServers(func(s *boxServer) bool { return now.Sub(s.last) >= keptServerIdle })
}

// closeKeptServers ends the kept servers which says to.
func closeKeptServers(which func(*boxServer) bool) {
	for _, s := range takeOut(&keptServers.Mutex, &keptServers.all, which) {
		s.close()
	}
}

// takeOut removes from *all, holding mu, the elements which says to, and
// returns them.
func takeOut[T any](mu *sync.Mutex, all *[]T, which func(T) bool) []T {
	mu.Lock()
	defer mu.Unlock()
	var out []T
	*all = slices.DeleteFunc(*all, func(x T) bool {
		if which(x) {
			out = append(out, x)
			return true
		}
		return false
	})
	return out
}
