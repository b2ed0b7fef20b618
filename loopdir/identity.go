package loopdir

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// ErrOtherLoop says a loop folder's engine state belongs to another loop:
// a second loop file, with another name, in the same folder.
type ErrOtherLoop struct{ Dir, Holds, Wants string }

func (e *ErrOtherLoop) Error() string {
	return fmt.Sprintf("the folder %s holds the loop %q (its counters, evidence and state); the loop file's loop %q would take them over. "+
		"Give %q a folder of its own, or run it with --fresh to start it here from nothing (the state of %q is set aside)",
		e.Dir, e.Holds, e.Wants, e.Wants, e.Holds)
}

// loopName names the loop whose state the private folder holds.
func (p Private) loopName() string { return p.join("loop-name") }

// Claim ties the loop folder's engine state to the loop named name. The
// first engine to run there writes the name; a loop file with another name
// is refused (*ErrOtherLoop), unless fresh: then it takes the folder over.
// A folder whose state was written before names were kept is adopted.
func (d Dir) Claim(name string, fresh bool) error {
	p := d.Private()
	if _, err := p.Ensure(); err != nil {
		return err
	}
	data, err := os.ReadFile(p.loopName())
	holds := strings.TrimSpace(string(data))
	switch {
	case err == nil && holds == name:
		return nil
	case err == nil && holds != "" && !fresh:
		return &ErrOtherLoop{Dir: string(d), Holds: holds, Wants: name}
	case err != nil && !os.IsNotExist(err):
		return err
	}
	return os.WriteFile(p.loopName(), []byte(name+"\n"), 0o600)
}

// folderID names the loop folder the private folder belongs to: its device
// and inode, written by the first engine that ran there.
func (p Private) folderID() string { return p.join("folder-id") }

// Recreated says whether the loop folder at d's path is another folder than
// the one whose engine state the private folder holds (removed and made
// again: a re-clone, a reused CI workspace), and if so moves that state
// aside, to the path it returns, so that the loop starts as a new one. A
// private folder from before folder ids were kept is adopted, and so is one
// a fleet carried from another machine (its folder is another by nature).
func (d Dir) Recreated() (aside string, err error) {
	p := d.Private()
	if _, err := p.Ensure(); err != nil {
		return "", err
	}
	fi, err := os.Stat(string(d))
	if err != nil {
		return "", err
	}
	id, ok := folderIdentity(fi)
	if !ok {
		return "", nil
	}
	data, err := os.ReadFile(p.folderID())
	switch {
	case err == nil && strings.TrimSpace(string(data)) == id:
		return "", nil
	case err == nil && !exists(p.FleetStart()):
		aside = fmt.Sprintf("%s.replaced-%s", string(p), time.Now().UTC().Format("20060102T150405"))
		if err := os.Rename(string(p), aside); err != nil {
			return "", fmt.Errorf("set the old loop's state aside: %w", err)
		}
		if _, err := p.Ensure(); err != nil {
			return "", err
		}
	case err != nil && !os.IsNotExist(err):
		return "", err
	}
	return aside, os.WriteFile(p.folderID(), []byte(id+"\n"), 0o600)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
