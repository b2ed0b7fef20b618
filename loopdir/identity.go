package loopdir

import (
	"fmt"
	"os"
	"strings"
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
