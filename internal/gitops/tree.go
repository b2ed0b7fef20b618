package gitops

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/safegit"
)

// errNotByName sends a commit back to staging in the index and git
// write-tree: the paths or the repository are ones the tree edit does not
// handle (a folder or a nested repository named, no HEAD yet, file modes
// or links that git does not take from the disk here).
var errNotByName = errors.New("not by name")

// maxTreesByName bounds the trees one commit edits by name; past it, the
// index and write-tree are cheaper than a process per tree.
const maxTreesByName = 200

// treeByName is the tree of the next commit: HEAD's, with the paths
// (relative to Dir) as they are on disk, each written or removed, and the
// index updated for those paths only. Every git command it runs reads or
// writes objects and single trees, never the whole index but once (the
// update of the named paths), so a commit's cost follows the change, not
// the checkout: git write-tree rewrites the whole index (4 MB at 50,000
// files) a second time. It returns errNotByName where it cannot.
func (c *Committer) treeByName(head string, paths []string) (string, error) {
	if head == "" {
		return "", errNotByName
	}
	if c.byName == nil {
		ok := true
		for _, k := range []string{"core.fileMode", "core.symlinks"} {
			if v, _ := Git(c.Dir, "config", "--type=bool", k); v == "false" {
				ok = false
			}
		}
		prefix, err := Git(c.Dir, "rev-parse", "--show-prefix")
		if err != nil {
			ok = false
		}
		c.prefix = strings.TrimSuffix(prefix, "/")
		c.byName = &ok
	}
	if !*c.byName {
		return "", fmt.Errorf("%w: core.fileMode or core.symlinks is false here", errNotByName)
	}
	if len(paths) == 0 {
		root, err := Git(c.Dir, "rev-parse", "--verify", "--quiet", head+"^{tree}")
		if err != nil {
			return "", fmt.Errorf("%w: %v", errNotByName, err)
		}
		return root, nil
	}
	// What each path is now: a blob with its mode (hashed below), or gone.
	type entry struct{ mode, sha, link string }
	now := map[string]*entry{}   // repository-relative path → nil: removed
	local := map[string]string{} // repository-relative path → relative to Dir
	var present []string
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\t") {
			return "", errNotByName // hash-object --stdin-paths reads lines
		}
		full := path.Join(c.prefix, p)
		local[full] = p
		fi, err := os.Lstat(filepath.Join(c.Dir, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			now[full] = nil
		case err != nil:
			return "", errNotByName
		case fi.Mode().IsRegular():
			mode := "100644"
			if fi.Mode().Perm()&0o111 != 0 {
				mode = "100755"
			}
			now[full] = &entry{mode: mode}
			present = append(present, p)
		case fi.Mode()&os.ModeSymlink != 0:
			to, err := os.Readlink(filepath.Join(c.Dir, filepath.FromSlash(p)))
			if err != nil {
				return "", errNotByName
			}
			now[full] = &entry{mode: "120000", link: to}
			present = append(present, p)
		default:
			return "", fmt.Errorf("%w: %s is a folder", errNotByName, p) // a nested repository, or a path git would walk
		}
	}
	// Files the ignore rules match, by the rules alone (no read of the
	// index): they are left out unless HEAD tracks them (seen below).
	ignored := map[string]bool{}
	if len(present) > 0 {
		out, _ := gitIn(c.Dir, strings.Join(present, "\x00"), "check-ignore", "--no-index", "-z", "--stdin")
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				ignored[path.Join(c.prefix, p)] = true
			}
		}
	}
	// The folders on the ways to the paths, deepest first. A path that is
	// also such a folder (a file that became a folder, or the other way
	// round) goes to the index.
	dirs := map[string]bool{"": true}
	for p := range now {
		for d := parentOf(p); d != ""; d = parentOf(d) {
			dirs[d] = true
		}
	}
	if len(dirs) > maxTreesByName {
		return "", errNotByName
	}
	var named []string
	for d := range dirs {
		if _, ok := now[d]; ok {
			return "", fmt.Errorf("%w: %s is a file and a folder", errNotByName, d)
		}
		if d != "" {
			named = append(named, d)
		}
	}
	// What HEAD holds at each of them, read at once: each is a folder or
	// nothing (not a file, not a nested repository's commit).
	old, err := c.readTrees(head, named)
	if err != nil {
		return "", err
	}
	var regular, update []string
	for full, e := range now {
		if ignored[full] && old[parentOf(full)][path.Base(full)] == "" {
			delete(now, full) // ignored, and not tracked: not the loop's to commit
			continue
		}
		update = append(update, local[full])
		switch {
		case e == nil:
		case e.link != "":
			sha, err := gitIn(c.Dir, e.link, "hash-object", "-w", "--stdin")
			if err != nil {
				return "", err
			}
			e.sha = strings.TrimSpace(sha)
		default:
			regular = append(regular, full)
		}
	}
	if len(regular) > 0 {
		// Through the attributes' filters, as git add hashes.
		var in strings.Builder
		for _, full := range regular {
			in.WriteString(filepath.Join(c.Dir, filepath.FromSlash(local[full])) + "\n")
		}
		out, err := gitIn(c.Dir, in.String(), "hash-object", "-w", "--stdin-paths")
		if err != nil {
			return "", err
		}
		shas := strings.Fields(out)
		if len(shas) != len(regular) {
			return "", fmt.Errorf("git hash-object: %d names for %d files", len(shas), len(regular))
		}
		for i, full := range regular {
			now[full].sha = shas[i]
		}
	}
	depth := func(d string) int {
		if d == "" {
			return -1
		}
		return strings.Count(d, "/")
	}
	order := append(named, "")
	sort.Slice(order, func(i, j int) bool {
		if a, b := depth(order[i]), depth(order[j]); a != b {
			return a > b
		}
		return order[i] < order[j]
	})
	// The new trees, deepest first, written by one git mktree --batch: a
	// folder's tree is made once the trees below it are.
	mk, err := startMktree(c.Dir)
	if err != nil {
		return "", err
	}
	defer mk.close()
	trees := map[string]string{} // folder → its new tree ("" when empty)
	for _, d := range order {
		entries := old[d] // name → "mode type sha"; nil when new
		if entries == nil {
			entries = map[string]string{}
		}
		for p, e := range now {
			if parentOf(p) != d {
				continue
			}
			name := path.Base(p)
			if e == nil {
				delete(entries, name)
			} else {
				entries[name] = e.mode + " blob " + e.sha
			}
		}
		for sub, sha := range trees {
			if parentOf(sub) != d {
				continue
			}
			name := path.Base(sub)
			if sha == "" {
				delete(entries, name)
			} else {
				entries[name] = "040000 tree " + sha
			}
		}
		if len(entries) == 0 && d != "" {
			trees[d] = ""
			continue
		}
		sha, err := mk.tree(entries)
		if err != nil {
			return "", err
		}
		trees[d] = sha
	}
	// The index follows, for the named paths only: one write of it, in the
	// background (the next agent run starts meanwhile); the committer
	// settles it before its next git command that reads the index, and
	// every other git command of the engine waits for its index.lock.
	c.settle()
	done := make(chan error, 1)
	if len(update) == 0 {
		return trees[""], nil
	}
	stdin := strings.Join(update, "\x00") + "\x00"
	go func() {
		_, err := gitIn(c.Dir, stdin, "update-index", "--add", "--remove", "-z", "--stdin")
		done <- err
	}()
	c.indexUpdate = done
	return trees[""], nil
}

// settle waits for the update of the index the last commit started. If it
// failed, the next commit stages the whole folder, which mends the index.
func (c *Committer) settle() {
	if c.indexUpdate == nil {
		return
	}
	if err := <-c.indexUpdate; err != nil {
		c.scanned = false
	}
	c.indexUpdate = nil
}

// readTrees reads, with one git cat-file --batch, the entries of HEAD's
// root tree ("") and of the folders named, each as name → "mode type sha"
// (nil for a folder HEAD does not have). A name that is a file or a
// nested repository's commit in HEAD is errNotByName.
func (c *Committer) readTrees(head string, named []string) (map[string]map[string]string, error) {
	all := append([]string{""}, named...)
	var q strings.Builder
	for _, d := range all {
		if d == "" {
			q.WriteString(head + "^{tree}\n")
		} else {
			q.WriteString(head + ":" + d + "\n")
		}
	}
	out, err := gitIn(c.Dir, q.String(), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotByName, err)
	}
	trees := map[string]map[string]string{}
	rest := out
	for _, d := range all {
		header, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return nil, fmt.Errorf("%w: git cat-file ended early", errNotByName)
		}
		rest = after
		if strings.HasSuffix(header, " missing") {
			if d == "" {
				return nil, fmt.Errorf("%w: %s has no tree", errNotByName, head)
			}
			continue
		}
		f := strings.Fields(header) // sha type size
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: git cat-file said %q", errNotByName, header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size+1 > len(rest) {
			return nil, fmt.Errorf("%w: git cat-file said %q", errNotByName, header)
		}
		body := rest[:size]
		rest = rest[size+1:]
		if f[1] != "tree" {
			return nil, fmt.Errorf("%w: %s is a %s in %s", errNotByName, d, f[1], head)
		}
		entries, err := parseTree(body, len(f[0])/2)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNotByName, err)
		}
		trees[d] = entries
	}
	return trees, nil
}

// parseTree reads a raw tree object ("MODE NAME\0" and the raw object id,
// hashLen bytes, per entry) into name → "mode type sha".
func parseTree(body string, hashLen int) (map[string]string, error) {
	out := map[string]string{}
	for len(body) > 0 {
		sp := strings.IndexByte(body, ' ')
		nul := strings.IndexByte(body, 0)
		if sp < 0 || nul < sp || nul+1+hashLen > len(body) {
			return nil, errors.New("a tree object git cannot have written")
		}
		mode, name := body[:sp], body[sp+1:nul]
		id := hex.EncodeToString([]byte(body[nul+1 : nul+1+hashLen]))
		body = body[nul+1+hashLen:]
		kind := "blob"
		switch {
		case mode == "40000":
			mode, kind = "040000", "tree"
		case mode == "160000":
			kind = "commit"
		}
		out[name] = mode + " " + kind + " " + id
	}
	return out, nil
}

// mktree is one git mktree --batch -z: a tree per call, its id read back
// before the next (a folder's tree names the trees below it).
type mktree struct {
	stop context.CancelFunc
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
}

func startMktree(dir string) (*mktree, error) {
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, "git", safegit.Args("mktree", "-z", "--batch")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	in, err := cmd.StdinPipe()
	if err != nil {
		stop()
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		stop()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		stop()
		return nil, err
	}
	return &mktree{stop: stop, cmd: cmd, in: in, out: bufio.NewReader(outPipe)}, nil
}

func (m *mktree) tree(entries map[string]string) (string, error) {
	var b strings.Builder
	for name, meta := range entries {
		b.WriteString(meta + "\t" + name + "\x00")
	}
	b.WriteByte(0) // the blank entry that ends a tree of the batch
	if _, err := io.WriteString(m.in, b.String()); err != nil {
		return "", fmt.Errorf("git mktree: %w", err)
	}
	line, err := m.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("git mktree: %w", err)
	}
	return strings.TrimSpace(line), nil
}

func (m *mktree) close() {
	m.in.Close()
	m.cmd.Wait()
	m.stop()
}

// parentOf is the folder that holds d ("" for the top).
func parentOf(d string) string {
	if p := path.Dir(d); p != "." {
		return p
	}
	return ""
}
