//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"io"
)

// boxServer is a box's server: Linux only.
type boxServer struct{}

// Serves says whether the box runs a check in its server: never here.
func (b *CheckBox) Serves(env []string) bool { return false }

// Run is Linux only.
func (b *CheckBox) Run(ctx context.Context, dir, shellLine string, env []string, out io.Writer) (int, error) {
	return -1, errors.New("sandbox: this box runs each check as a process of its own")
}

func (b *CheckBox) closeServer() {}

// RunUsage is Linux only.
func (b *CheckBox) RunUsage(ctx context.Context, dir, shellLine string, env []string, out io.Writer) (int, Usage, error) {
	code, err := b.Run(ctx, dir, shellLine, env, out)
	return code, Usage{}, err
}
