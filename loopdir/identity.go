package loopdir

import (
	"crypto/rand"
	"encoding/hex"
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

// folderID names the loop folder the private folder belongs to: an id the
// first engine there chose, written here and in the loop folder's records
// folder, which only the engine writes (LoopID).
func (p Private) folderID() string { return p.join("folder-id") }

// LoopID is the loop folder's copy of the id of the loop whose engine state
// the private folder holds.
func (d Dir) LoopID() string { return d.join(RecordsDir, ".loop-id") }

// Recreated says whether the loop folder at d's path is another folder than
// the one whose engine state the private folder holds (removed and made
// again: a re-clone, a reused CI workspace; its records folder is gone or
// another loop's), and if so moves that state aside, to the path it
// returns, so that the loop starts as a new one. A private folder from
// before ids were kept is adopted, and so is one a fleet carried from
// another machine (its records come with it).
func (d Dir) Recreated() (aside string, err error) {
	p := d.Private()
	if _, err := p.Ensure(); err != nil {
		return "", err
	}
	data, err := os.ReadFile(p.folderID())
	id := strings.TrimSpace(string(data))
	switch {
	case err != nil && !os.IsNotExist(err):
		return "", err
	case err == nil && id != "":
		here, _ := os.ReadFile(d.LoopID())
		if strings.TrimSpace(string(here)) == id {
			return "", nil
		}
		if exists(p.FleetStart()) {
			return "", d.writeLoopID(id)
		}
		aside = fmt.Sprintf("%s.replaced-%s", string(p), time.Now().UTC().Format("20060102T150405.000000000"))
		if err := os.Rename(string(p), aside); err != nil {
			return "", fmt.Errorf("set the old loop's state aside: %w", err)
		}
		if _, err := p.Ensure(); err != nil {
			return "", err
		}
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id = hex.EncodeToString(b)
	if err := os.WriteFile(p.folderID(), []byte(id+"\n"), 0o600); err != nil {
		return "", err
	}
	return aside, d.writeLoopID(id)
}

func (d Dir) writeLoopID(id string) error {
	if err := os.MkdirAll(d.Records(), 0o700); err != nil {
		return err
	}
	return os.WriteFile(d.LoopID(), []byte(id+"\n"), 0o600)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
