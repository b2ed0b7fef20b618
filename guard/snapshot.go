package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/looprinter/looprinter/loopdir"
)

// The snapshot is the engine's on-disk copy of the protected files, kept in
// its private folder: the path, file type, mode and content (by hash; the
// content itself in a blob store) of each. It is written before an agent run
// starts, so that whatever the run does, even if the engine dies during it,
// the next live engine can compare and restore. Compared by stat first
// (inode, size, mode, mtime, ctime: ctime cannot be set back by a process),
// by content only when the stat differs.
type snapshot struct {
	Entries []snapEntry `json:"entries"`

	index map[string]int // entry of each path, made when first needed
}

type snapEntry struct {
	Path    string `json:"path"` // slash-separated, relative to the loop directory
	Rule    string `json:"rule,omitempty"`
	Kind    string `json:"kind"` // file | symlink
	Mode    uint32 `json:"mode"` // permission bits
	Sum     string `json:"sha256,omitempty"`
	Link    string `json:"link,omitempty"`
	Size    int64  `json:"size"`
	Ino     uint64 `json:"ino"`
	MtimeNS int64  `json:"mtime_ns"`
	CtimeNS int64  `json:"ctime_ns"`
	Nlink   uint64 `json:"nlink,omitempty"` // more than 1: compared by stat every time, whatever the watch says
}

// loadSnapshot reads the last snapshot; nil when there is none.
func loadSnapshot(priv string) *snapshot {
	data, err := os.ReadFile(loopdir.Private(priv).Protected())
	if err != nil {
		return nil
	}
	var g snapshot
	if json.Unmarshal(data, &g) != nil {
		return nil
	}
	return &g
}

// File is one protected file and the rule that protects it.
type File struct{ Path, Rule string }

// takeSnapshot writes the snapshot of files to the private folder. Files
// whose stat matches the previous snapshot are not read again. With old
// (the snapshot in memory) and restat, a file restat does not name keeps
// its entry without a stat: the engine's watch saw no change to it.
func takeSnapshot(dir, priv string, files []File, old *snapshot, restat func(rel string) bool) (*snapshot, error) {
	if old == nil {
		old, restat = loadSnapshot(priv), nil
	}
	prev := map[string]snapEntry{}
	if old != nil {
		for _, e := range old.Entries {
			prev[e.Path] = e
		}
	}
	g := &snapshot{Entries: make([]snapEntry, 0, len(files))}
	stored := false
	for _, f := range files {
		if p, ok := prev[f.Path]; ok && restat != nil && p.Nlink <= 1 && p.Rule == f.Rule && !restat(f.Path) {
			g.Entries = append(g.Entries, p)
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(path)
		if err != nil {
			continue // does not exist: nothing to protect yet
		}
		e := statEntry(f.Path, fi)
		e.Rule = f.Rule
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			e.Kind = "symlink"
			e.Link, _ = os.Readlink(path)
		case fi.Mode().IsRegular():
			e.Kind = "file"
			if p, ok := prev[f.Path]; ok && p.Kind == "file" && sameStat(p, e) {
				e.Sum = p.Sum
			} else if e.Sum, err = storeBlob(priv, path); err != nil {
				return nil, fmt.Errorf("snapshot of protected file %s: %w", f.Path, err)
			} else {
				stored = true
			}
		default:
			continue // a fifo, socket or device is never read
		}
		g.Entries = append(g.Entries, e)
	}
	if old != nil && slices.Equal(old.Entries, g.Entries) {
		if _, err := os.Lstat(loopdir.Private(priv).Protected()); err == nil {
			return g, nil // the same snapshot as before the last run
		}
	}
	if stored {
		// Every new blob reaches the disk before the snapshot that names
		// it: one syncfs for all of them, not an fsync each (the first
		// snapshot of a large checkout stores thousands).
		if err := syncFS(filepath.Join(priv, "blobs")); err != nil {
			return nil, err
		}
	}
	data, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(loopdir.Private(priv).Protected(), data); err != nil {
		return nil, err
	}
	return g, nil
}

func sameStat(a, b snapEntry) bool {
	return a.Ino == b.Ino && a.Size == b.Size && a.Mode == b.Mode && a.MtimeNS == b.MtimeNS && a.CtimeNS == b.CtimeNS
}

// storeBlob copies a regular file into the blob store and returns its hash.
// It opens with O_NOFOLLOW|O_NONBLOCK and checks the type on the open file,
// so a path swapped for a fifo or a link cannot hang or redirect it.
func storeBlob(priv, path string) (string, error) {
	f, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := os.MkdirAll(filepath.Join(priv, "blobs"), 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Join(priv, "blobs"), ".blob*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), f); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	dst := loopdir.Private(priv).Blob(sum)
	if _, err := os.Stat(dst); err == nil {
		return sum, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", err
	}
	return sum, os.Rename(tmp.Name(), dst)
}

// errNotRegular says a path is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading only if it is a regular file, without
// following a final symlink and without blocking on a fifo.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|ONoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, errNotRegular
	}
	return f, nil
}

// FileSum is the sha256 of a regular file, "" when it is absent, and a
// marker for anything else; reads are bounded by the file's own size and
// never block.
func FileSum(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	if !fi.Mode().IsRegular() {
		return "not-a-file:" + fi.Mode().Type().String()
	}
	f, err := openRegular(path)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// check compares the protected files with the snapshot and puts back every
// change: a modified, deleted, retyped or re-moded file is recreated from the
// blob store with its mode (a symlink or directory put in its place is
// removed first, never written through), and a new file matching a user glob
// is removed. keep may let a change that weakens nothing stay (the loop
// file, judged field by field). created are the files the run added and
// protectNew says which of them the agent may not add (and which rule).
// restat, when not nil, names the files the watch saw change: the others
// (and no file with other hard links) are not looked at.
func (g *snapshot) check(dir, priv string, keep func(rel string, old, cur []byte) (bool, string), created []string, protectNew func(rel string) (string, bool), restat func(rel string) bool) ([]Tamper, error) {
	var out []Tamper
	for _, e := range g.Entries {
		if restat != nil && e.Nlink <= 1 && !restat(e.Path) {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(e.Path))
		fi, err := os.Lstat(path)
		what := ""
		switch {
		case err != nil:
			what = "deleted"
		case e.Kind == "symlink":
			if fi.Mode()&os.ModeSymlink == 0 {
				what = "replaced"
			} else if l, _ := os.Readlink(path); l != e.Link {
				what = "modified"
			}
		case !fi.Mode().IsRegular():
			what = "replaced by a " + TypeName(fi.Mode())
		case sameStat(e, statEntry(e.Path, fi)):
			// untouched
		case uint32(fi.Mode().Perm()) != e.Mode:
			what = fmt.Sprintf("changed from mode %04o to %04o", e.Mode, fi.Mode().Perm())
		case FileSum(path) != e.Sum:
			what = "modified"
		}
		if what == "" {
			continue
		}
		why := ""
		if what == "modified" && e.Kind == "file" && keep != nil {
			old, _ := os.ReadFile(loopdir.Private(priv).Blob(e.Sum))
			if cur, err := ReadBounded(path, 64<<20); err == nil {
				var ok bool
				if ok, why = keep(e.Path, old, cur); ok {
					continue // a change that weakens nothing stays
				}
			}
		}
		if err := g.put(dir, priv, e); err != nil {
			return out, fmt.Errorf("cannot restore protected file %s: %w", e.Path, err)
		}
		out = append(out, Tamper{File: e.Path, What: what, Why: why, Rule: e.Rule})
	}
	known := map[string]bool{} // the snapshot's paths
	onWay := map[string]bool{} // the folders on the way to one of them
	if len(created) > 0 {
		for _, e := range g.Entries {
			known[e.Path] = true
			for d := path.Dir(e.Path); d != "." && d != "/" && !onWay[d]; d = path.Dir(d) {
				onWay[d] = true
			}
		}
	}
	for _, rel := range created {
		if known[rel] || protectNew == nil || onWay[rel] {
			continue // a path the restore above has just made again
		}
		rule, ok := protectNew(rel)
		if !ok {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return out, fmt.Errorf("cannot remove %s: %w", rel, err)
		}
		out = append(out, Tamper{File: rel, What: "created", Rule: rule})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// put recreates one protected file as the snapshot has it.
func (g *snapshot) put(dir, priv string, e snapEntry) error {
	path := filepath.Join(dir, filepath.FromSlash(e.Path))
	if err := safeParent(dir, path); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
	}
	if e.Kind == "symlink" {
		os.Remove(path)
		return os.Symlink(e.Link, path)
	}
	data, err := os.ReadFile(loopdir.Private(priv).Blob(e.Sum))
	if err != nil {
		return fmt.Errorf("the snapshot's copy is missing: %w", err)
	}
	// A rename replaces whatever is at path (a symlink included) instead of
	// writing through it.
	return WriteFile(path, data, os.FileMode(e.Mode), true)
}

// safeParent makes sure every folder between dir and path is a real folder
// inside dir (not a symlink that leads elsewhere), creating missing ones.
func safeParent(dir, path string) error {
	rel, err := filepath.Rel(dir, filepath.Dir(path))
	if err != nil {
		return err
	}
	cur := dir
	if rel == "." {
		return nil
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") { // rel is clean: no empty part
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case os.IsNotExist(err):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !fi.IsDir():
			// a link or file where a folder was: remove it and make the folder
			if err := os.Remove(cur); err != nil {
				return err
			}
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

// TypeName names the type of a file that is not a regular one, as the
// records say it ("symlink", "folder", "fifo" …).
func TypeName(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "folder"
	case m&os.ModeNamedPipe != 0:
		return "fifo"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// ReadBounded reads a regular file of at most max bytes.
func ReadBounded(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return data, nil
}
