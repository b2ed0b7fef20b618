package agent

import (
	"io"
	"os"
	"strings"
	"syscall"
)

// stdinFor is what the agent reads on its standard input (see the Linux
// version); macOS has no pipe2, so the pipe is made close-on-exec and
// non-blocking after it is created (the engine starts agents one at a time,
// under syscall.ForkLock as os/exec does).
func stdinFor(stdin string) (io.Reader, error) {
	if stdin == "" {
		return nil, nil
	}
	var p [2]int
	syscall.ForkLock.RLock()
	err := syscall.Pipe(p[:])
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(p[1], true); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return strings.NewReader(stdin), nil
	}
	n, err := syscall.Write(p[1], []byte(stdin))
	syscall.Close(p[1])
	if err != nil || n != len(stdin) {
		syscall.Close(p[0])
		return strings.NewReader(stdin), nil
	}
	return os.NewFile(uintptr(p[0]), "|0"), nil
}
