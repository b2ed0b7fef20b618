package judge

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/loopdir"
)

// Runs that write the loop folder in place (Landlock, off) leave no layer
// whose apply would keep the originals of what they change under the
// dependency folders, and the watch of a run's changes does not look into
// those folders. So before the first such run the engine lists every path
// under a dependency folder or a cache of the loop folder, with what
// identifies its content (size, modification and change times, inode,
// mode: the change time cannot be set back by a program), in the private
// folder (Pristine.Listing). The clean room then compares the folder with
// that listing (one walk of the folder): a path that is new is left out of
// its view, and one changed or removed, whose original is not known, is
// left out too (a check that needs it fails: closed). The records name
// every such path (the clean room's `pristine`).

// pstat identifies a path's content.
type pstat struct {
	Size  int64  `json:"s"`
	Mtime int64  `json:"m"`
	Ctime int64  `json:"c"`
	Ino   uint64 `json:"i"`
	Mode  uint32 `json:"o"`
}

func (p *Pristine) listingPath() string { return filepath.Join(p.root, "start-listing.json") }

// Listing lists the loop folder's pristine paths as they are now, once:
// the engine calls it before every agent run that writes the folder in
// place; the first call's listing stays.
func (p *Pristine) Listing() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := os.Lstat(p.listingPath()); err == nil {
		return nil
	}
	cur, err := listPristine(p.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.root, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	tmp := p.listingPath() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.listingPath())
}

// inPlace compares the folder with the listing (when there is one) and
// says how each path that differs stands for the clean room: "new" or
// "lost". Paths the record already holds are left as they are there.
// An unreadable listing or folder is an error: the clean room cannot be
// made on trust.
func (p *Pristine) inPlace() (map[string]string, error) {
	data, err := os.ReadFile(p.listingPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var start map[string]pstat
	if err := json.Unmarshal(data, &start); err != nil {
		return nil, errors.New("the engine's listing of the dependency folders at the loop's start is corrupt (" + p.listingPath() + ")")
	}
	cur, err := listPristine(p.dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for rel, st := range cur {
		was, ok := start[rel]
		switch {
		case !ok:
			out[rel] = "new"
		case was != st:
			out[rel] = "lost"
		}
	}
	for rel := range start {
		if _, ok := cur[rel]; !ok {
			out[rel] = "lost"
		}
	}
	return out, nil
}

// listPristine lists the paths of dir that the clean room keeps as at the
// start (PristinePath), but not folders, nor the engine's records or .git.
func listPristine(dir string) (map[string]pstat, error) {
	out := map[string]pstat{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, rerr := filepath.Rel(dir, path)
		if rerr != nil || rel == "." {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == loopdir.RecordsDir || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !PristinePath(rel) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := pstat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
		st.Ctime, st.Ino = changeTime(fi)
		out[rel] = st
		return nil
	})
	return out, err
}
