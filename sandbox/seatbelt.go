package sandbox

import (
	"errors"
	"fmt"
	"os"
)

// wrapSeatbelt runs path under sandbox-exec with p's profile (see
// seatbeltProfile); dir is p.Dir, canonical. The agent's temporary files go
// to a private folder emptied for every run, as under landlock.
func (p Policy) wrapSeatbelt(dir, path string, args []string) (string, []string, []string, error) {
	if err := seatbeltProbe(); err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: seatbelt: %w", err)
	}
	tmp := TempDir(dir)
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: private temporary folder: %w", err)
	}
	ctmp, err := canonical(tmp)
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: private temporary folder: %w", err)
	}
	in, err := seatbeltInputFor(p, ctmp, canonical)
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: the loop folder: %w", err)
	}
	return sandboxExec, append([]string{"-p", seatbeltProfile(in), path}, args...), []string{"TMPDIR=" + ctmp}, nil
}

// seatbeltProbe says why sandbox-exec cannot run here, nil when it can.
func seatbeltProbe() error {
	if err := seatbeltHere(); err != nil {
		return err
	}
	fi, err := os.Stat(sandboxExec)
	if err != nil {
		return fmt.Errorf("%s: %w", sandboxExec, err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New(sandboxExec + " is not executable")
	}
	return nil
}
