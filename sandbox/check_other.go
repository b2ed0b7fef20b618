//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvCheck marks the Landlock check helper (Linux only).
const EnvCheck = "LOOPRINTER_SANDBOX_CHECK"

func landlockABI() int { return 0 }

func (b *CheckBox) prepare() error {
	return errors.New("sandbox: checks can be confined on Linux only (bwrap or landlock); choose `sandbox: off` here")
}

// Command runs shellLine with /bin/sh -c in dir, unconfined (off is the
// only kind here); cleanup does nothing.
func (b *CheckBox) Command(ctx context.Context, dir, shellLine string, env []string) (*exec.Cmd, func(), error) {
	if !filepath.IsAbs(dir) {
		return nil, nil, errors.New("sandbox: the check's folder is not an absolute path")
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", shellLine)
	cmd.Dir, cmd.Env = dir, env
	return cmd, func() {}, nil
}

func removeTree(p string) error { return os.RemoveAll(p) }

// SetupCommand is Command here (off is the only kind).
func (b *CheckBox) SetupCommand(ctx context.Context, dir, shellLine string, env []string) (*exec.Cmd, func(), error) {
	return b.Command(ctx, dir, shellLine, env)
}

// InView: no check box lays a view here; nothing is named outside it.
func (b *CheckBox) InView(string, []string) bool { return true }
