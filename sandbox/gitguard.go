package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// GitControlPaths are the paths of a repository folder (.git) through which
// a program gets run by the user's next git command, relative to it: the
// configuration (core.hooksPath, core.fsmonitor, filters, aliases,
// includes), the hooks and info/ (attributes that name filters, exclude).
// Landlock cannot keep them read-only inside a writable loop folder
// (its rules only grant), so under Landlock the engine snapshots them
// before an agent run and puts them back after it (GuardGit).
var GitControlPaths = []string{"config", "config.worktree", "hooks", "info", "commondir"}

// gitGuardMax bounds what a snapshot holds (a hooks folder holds a few
// small scripts): a bigger tree is refused rather than read.
const gitGuardMax = 8 << 20

// A GitGuard is a snapshot of a repository folder's control paths.
type GitGuard struct {
	gitDir string
	files  map[string]gitEntry // relative path (slashes) → what it was
}

type gitEntry struct {
	dir  bool
	mode fs.FileMode
	data []byte
}

// GuardGit snapshots the control paths of the repository folder gitDir
// (what GitControlPaths names, folders with what they hold). Links are
// not followed: a control path that is a symbolic link (or another special
// file) is refused, since what it points to could change under it.
func GuardGit(gitDir string) (*GitGuard, error) {
	g := &GitGuard{gitDir: gitDir, files: map[string]gitEntry{}}
	total := 0
	for _, top := range GitControlPaths {
		err := filepath.WalkDir(filepath.Join(gitDir, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(gitDir, p)
			rel = filepath.ToSlash(rel)
			fi, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case fi.IsDir():
				g.files[rel] = gitEntry{dir: true, mode: fi.Mode().Perm()}
			case fi.Mode().IsRegular():
				if total += int(fi.Size()); total > gitGuardMax {
					return fmt.Errorf("%s: the repository's control files exceed %d bytes", rel, gitGuardMax)
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				g.files[rel] = gitEntry{mode: fi.Mode().Perm(), data: data}
			default:
				return fmt.Errorf("%s in the repository folder is not a regular file or folder", rel)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sandbox: snapshot of %s: %w", gitDir, err)
		}
	}
	return g, nil
}

// savedGuard is a GitGuard on disk.
type savedGuard struct {
	GitDir string                `json:"git_dir"`
	Files  map[string]savedEntry `json:"files"`
}

type savedEntry struct {
	Dir  bool        `json:"dir,omitempty"`
	Mode fs.FileMode `json:"mode"`
	Data []byte      `json:"data,omitempty"`
}

// Save writes the snapshot to path, synced, so that a restart after a
// crash in the middle of the run can still put the control paths back
// (LoadGitGuard, then Restore).
func (g *GitGuard) Save(path string) error {
	sg := savedGuard{GitDir: g.gitDir, Files: make(map[string]savedEntry, len(g.files))}
	for rel, e := range g.files {
		sg.Files[rel] = savedEntry{Dir: e.dir, Mode: e.mode, Data: e.data}
	}
	data, err := json.Marshal(sg)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// LoadGitGuard reads a snapshot Save wrote.
func LoadGitGuard(path string) (*GitGuard, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sg savedGuard
	if err := json.Unmarshal(data, &sg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if sg.GitDir == "" || !filepath.IsAbs(sg.GitDir) {
		return nil, fmt.Errorf("%s: no repository folder", path)
	}
	g := &GitGuard{gitDir: sg.GitDir, files: make(map[string]gitEntry, len(sg.Files))}
	for rel, e := range sg.Files {
		clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
		if clean != rel || strings.HasPrefix(rel, "../") || rel == ".." || filepath.IsAbs(rel) {
			return nil, fmt.Errorf("%s: %q is not a path inside the repository folder", path, rel)
		}
		g.files[rel] = gitEntry{dir: e.Dir, mode: e.Mode.Perm(), data: e.Data}
	}
	return g, nil
}

// Restore puts the control paths back as the snapshot holds them: what was
// changed is rewritten (never through a link), what is new is removed,
// what was removed is made again. It returns the paths it put back
// (relative to the repository folder, with slashes), sorted: each is a
// change the agent made and the engine refused.
func (g *GitGuard) Restore() ([]string, error) {
	changed := map[string]bool{}
	var errs []error
	// What is there now and was not, or not as it was.
	for _, top := range GitControlPaths {
		var gone []string
		filepath.WalkDir(filepath.Join(g.gitDir, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(g.gitDir, p)
			rel = filepath.ToSlash(rel)
			was, ok := g.files[rel]
			fi, ierr := d.Info()
			switch {
			case ierr != nil:
				return nil
			case !ok, was.dir != fi.IsDir(), !fi.IsDir() && !fi.Mode().IsRegular():
				gone = append(gone, p) // new, or another kind of file: removed, made again below
				changed[rel] = true
				if fi.IsDir() {
					return filepath.SkipDir
				}
			case fi.IsDir():
				if fi.Mode().Perm() != was.mode {
					changed[rel] = true
					if err := os.Chmod(p, was.mode); err != nil {
						errs = append(errs, err)
					}
				}
			default:
				data, rerr := os.ReadFile(p)
				if rerr != nil || !bytes.Equal(data, was.data) || fi.Mode().Perm() != was.mode {
					gone = append(gone, p)
					changed[rel] = true
				}
			}
			return nil
		})
		for _, p := range gone {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// What the snapshot holds and is missing now, parents first.
	rels := make([]string, 0, len(g.files))
	for rel := range g.files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		e := g.files[rel]
		p := filepath.Join(g.gitDir, filepath.FromSlash(rel))
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if !nshelper.RealParent(g.gitDir, rel) {
			errs = append(errs, fmt.Errorf("cannot put back %s: a folder on its way is not a folder", rel))
			continue
		}
		changed[rel] = true
		if e.dir {
			if err := os.Mkdir(p, e.mode); err != nil {
				errs = append(errs, err)
			}
			os.Chmod(p, e.mode)
			continue
		}
		if err := writeNew(p, e.data, e.mode); err != nil {
			errs = append(errs, err)
		}
	}
	out := make([]string, 0, len(changed))
	for rel := range changed {
		out = append(out, rel)
	}
	sort.Strings(out)
	if len(errs) > 0 {
		return out, fmt.Errorf("sandbox: restore %s: %w", g.gitDir, errors.Join(errs...))
	}
	return out, nil
}

// writeNew makes the file p (which does not exist) with data and mode.
func writeNew(p string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(p, mode)
	}
	return err
}
