//go:build linux

package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What an agent run changed is known from the kernel, not from walking the
// checkout: a treeWatch follows the loop folder with inotify (one watch per
// folder, set up once per engine, new folders added as they appear) and
// collects the paths that changed between two takes. An iteration's cost
// then follows the number of changes, not of files.
//
// It fails closed: when the kernel's event queue overflows, a watch cannot
// be added (the user's watch limit), a new folder cannot be read, more than
// maxDirty paths changed, or the loop folder itself moved, the events since
// the last take are incomplete, take says so, and the engine walks the whole
// folder for that iteration instead (and sets the watch up again).
type treeWatch struct {
	dir   string
	fd    int
	skip  func(rel, name string) bool // folders that are never looked into
	wds   map[int32]string            // watch → folder, relative to dir ("" for dir)
	dirs  map[string]int32            // folder → watch
	dirty map[string]uint8            // path → what happened to it since the last take
	gone  map[string]bool             // folders moved away or removed since the last take
	lost  string                      // why the events since the last take are incomplete
	buf   []byte
	// Protected files are watched one by one too: a write through a hard
	// link from outside the folder reaches only the file's own watch.
	files  map[int32][]string // file watch → protected paths (hard links share one)
	fileWd map[string]int32
	// While an agent runs, a goroutine reads the events as they come
	// (follow), so that a run changing more files than the kernel's queue
	// holds (fs.inotify.max_queued_events, 16,384 by default) does not
	// overflow it. Nothing else touches the watch until unfollow returns.
	stopFd int           // eventfd that ends the follower; -1 when none runs
	done   chan struct{} // closed when the follower has ended
}

const (
	dirtyChanged = 1 << iota
	dirtyCreated // the first event of the path since the last take made it
)

// maxDirty bounds the paths remembered between two takes (a run that
// changes more is judged by a full walk).
var maxDirty = 200000

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR

// newTreeWatch watches every folder under dir that skip does not exclude.
func newTreeWatch(dir string, skip func(rel, name string) bool) (*treeWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	w := &treeWatch{dir: dir, fd: fd, skip: skip, wds: map[int32]string{}, dirs: map[string]int32{},
		dirty: map[string]uint8{}, gone: map[string]bool{}, buf: make([]byte, 64<<10),
		files: map[int32][]string{}, fileWd: map[string]int32{}, stopFd: -1}
	if err := w.addTree("", false); err != nil {
		w.close()
		return nil, err
	}
	if w.lost != "" {
		w.close()
		return nil, errors.New(w.lost)
	}
	return w, nil
}

func (w *treeWatch) close() {
	w.unfollow()
	if w != nil && w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}

// addTree watches folder rel and every folder under it; with created, every
// file found is marked as made since the last take (a folder that appears
// brings its files with it, and their events came before its watch).
func (w *treeWatch) addTree(rel string, created bool) error {
	root := w.dir
	if rel != "" {
		root = filepath.Join(w.dir, filepath.FromSlash(rel))
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		r := rel
		if p != root {
			sub, _ := filepath.Rel(root, p)
			r = path.Join(rel, filepath.ToSlash(sub))
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != w.dir {
				return nil // gone again before it was read: its removal is an event too
			}
			w.fail(fmt.Sprintf("cannot read %s: %v", r, err))
			return filepath.SkipAll
		}
		if d.IsDir() {
			if r != "" && w.skip(r, d.Name()) {
				return filepath.SkipDir
			}
			wd, err := unix.InotifyAddWatch(w.fd, p, watchMask)
			if err != nil {
				if errors.Is(err, unix.ENOSPC) {
					w.fail(fmt.Sprintf("the user's inotify watch limit (fs.inotify.max_user_watches) was reached at %s", orDot(r)))
				} else if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) {
					w.fail(fmt.Sprintf("cannot watch %s: %v", orDot(r), err))
				}
				return filepath.SkipAll
			}
			if old, ok := w.wds[int32(wd)]; ok && old != r {
				delete(w.dirs, old)
			}
			w.wds[int32(wd)] = r
			w.dirs[r] = int32(wd)
			return nil
		}
		if created {
			w.mark(r, dirtyCreated)
		}
		return nil
	})
}

func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

func (w *treeWatch) fail(why string) {
	if w.lost == "" {
		w.lost = why
	}
}

func (w *treeWatch) mark(rel string, how uint8) {
	if w.lost != "" {
		return
	}
	old, seen := w.dirty[rel]
	if !seen {
		if len(w.dirty) >= maxDirty {
			w.fail(fmt.Sprintf("more than %d paths changed", maxDirty))
			return
		}
		w.dirty[rel] = how | dirtyChanged
		return
	}
	w.dirty[rel] = old | dirtyChanged
}

// follow starts reading the events in a goroutine as they are queued, until
// unfollow. Until then no other method of w may be called. Without an
// eventfd it does nothing: the events are read at the take, as before.
func (w *treeWatch) follow() {
	if w == nil || w.fd < 0 || w.stopFd >= 0 {
		return
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return
	}
	w.stopFd, w.done = efd, make(chan struct{})
	go func() {
		defer close(w.done)
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(efd), Events: unix.POLLIN}}
		for {
			fds[0].Revents, fds[1].Revents = 0, 0
			if _, err := unix.Poll(fds, -1); err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return // the take drains what is left
			}
			if fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents&unix.POLLIN != 0 {
				// A moment for the events to gather: one read for a batch,
				// not a wake-up per event (the queue holds thousands).
				time.Sleep(2 * time.Millisecond)
				w.drain()
			} else if fds[0].Revents != 0 {
				return
			}
		}
	}()
}

// unfollow ends the follower and waits for it: what it read is w's again.
func (w *treeWatch) unfollow() {
	if w == nil || w.stopFd < 0 {
		return
	}
	var one [8]byte
	one[0] = 1 // the eventfd's counter is host-endian; any non-zero value wakes it
	one[7] = 1
	unix.Write(w.stopFd, one[:])
	<-w.done
	unix.Close(w.stopFd)
	w.stopFd, w.done = -1, nil
}

// drain reads every event the kernel has queued. It never blocks: events
// are queued when the change is made, so once every process of a run has
// ended, one drain sees all that the run did.
func (w *treeWatch) drain() {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if !errors.Is(err, unix.EAGAIN) {
				w.fail("reading the change events: " + err.Error())
			}
			return
		}
		if n <= 0 {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := ""
			if ev.Len > 0 {
				raw := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if i := strings.IndexByte(string(raw), 0); i >= 0 {
					raw = raw[:i]
				}
				name = string(raw)
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			w.event(ev.Wd, ev.Mask, name)
		}
	}
}

func (w *treeWatch) event(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.fail("the kernel's queue of change events overflowed")
		return
	}
	if rels, ok := w.files[wd]; ok {
		for _, rel := range rels {
			w.mark(rel, 0)
			if mask&unix.IN_IGNORED != 0 {
				delete(w.fileWd, rel)
			}
		}
		if mask&unix.IN_IGNORED != 0 {
			delete(w.files, wd)
		}
		return
	}
	folder, ok := w.wds[wd]
	if !ok {
		return // a folder no longer watched: its moves were handled as a whole
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.wds, wd)
		if w.dirs[folder] == wd {
			delete(w.dirs, folder)
		}
		return
	}
	if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0 {
		if folder == "" {
			w.fail("the loop folder itself was moved or removed")
		}
		return // the folder's own parent reports it by name
	}
	if name == "" {
		return
	}
	rel := path.Join(folder, name)
	if mask&unix.IN_ISDIR != 0 {
		if w.skip(rel, name) {
			return
		}
		switch {
		case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
			w.forget(rel)
			if err := w.addTree(rel, true); err != nil {
				w.fail(err.Error())
			}
		case mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
			w.forget(rel)
			w.gone[rel] = true
		}
		return
	}
	switch {
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		w.mark(rel, dirtyCreated)
	default:
		w.mark(rel, 0)
	}
}

const fileMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW

// watchFile watches one protected file (its inode, whatever path reaches
// it). Called again after the file may have been replaced, it moves the
// watch to the file now at the path. false when it cannot be watched (the
// watch limit): the engine then compares it by stat every time.
func (w *treeWatch) watchFile(rel string) bool {
	w.unfollow()
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if fi, err := os.Lstat(p); err != nil || fi.IsDir() {
		w.unwatchFile(rel)
		return false // a folder at a protected file's path: compared by stat
	}
	// IN_MASK_ADD: never take events away from a watch the path shares.
	wd32, err := unix.InotifyAddWatch(w.fd, p, fileMask|unix.IN_MASK_ADD)
	wd := int32(wd32)
	if old, ok := w.fileWd[rel]; ok && (err != nil || old != wd) {
		w.unwatchFile(rel)
	}
	if err != nil {
		return false
	}
	if _, isDir := w.wds[wd]; isDir {
		return false // a folder at a protected file's path: compared by stat
	}
	if w.fileWd[rel] != wd || !slices.Contains(w.files[wd], rel) {
		w.files[wd] = append(w.files[wd], rel)
		w.fileWd[rel] = wd
	}
	return true
}

// unwatchFile stops watching a path that is no longer protected.
func (w *treeWatch) unwatchFile(rel string) {
	w.unfollow()
	wd, ok := w.fileWd[rel]
	if !ok {
		return
	}
	delete(w.fileWd, rel)
	rest := slices.DeleteFunc(w.files[wd], func(s string) bool { return s == rel })
	if len(rest) == 0 {
		delete(w.files, wd)
		unix.InotifyRmWatch(w.fd, uint32(wd))
		return
	}
	w.files[wd] = rest
}

// watchesFile says whether a protected path has its own watch.
func (w *treeWatch) watchesFile(rel string) bool {
	w.unfollow()
	_, ok := w.fileWd[rel]
	return ok
}

// forget stops watching folder rel and everything under it.
func (w *treeWatch) forget(rel string) {
	for d, wd := range w.dirs {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			unix.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.dirs, d)
			delete(w.wds, wd)
		}
	}
}

// watchTake is what changed since the last take.
type watchTake struct {
	Changed []string // files, sorted
	Created []string // files that did not exist at the last take and do now
	Gone    []string // folders moved away or removed
	Lost    string   // when set, the lists are incomplete: walk instead
}

// take drains the events and returns what changed since the last take.
func (w *treeWatch) take() watchTake {
	w.unfollow()
	w.drain()
	t := watchTake{Lost: w.lost}
	if t.Lost == "" {
		for p, how := range w.dirty {
			if how&dirtyCreated != 0 {
				if _, err := os.Lstat(filepath.Join(w.dir, filepath.FromSlash(p))); err != nil {
					// Made and gone again within the run (an editor's
					// temporary file renamed over its target): it did
					// not exist before and does not now, so no change.
					continue
				}
				t.Created = append(t.Created, p)
			}
			t.Changed = append(t.Changed, p)
		}
		for d := range w.gone {
			t.Gone = append(t.Gone, d)
		}
		sort.Strings(t.Changed)
		sort.Strings(t.Created)
		sort.Strings(t.Gone)
	}
	clear(w.dirty)
	clear(w.gone)
	w.lost = ""
	return t
}
