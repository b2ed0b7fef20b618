package agent

import (
	"io"
	"os"
	"strings"
	"syscall"
)

// stdinFor is what the agent reads on its standard input: nothing (the
// null device) when stdin is empty; a pipe already holding all of it and
// closed for writing when it fits in the pipe's buffer (no goroutine copies
// it); else a reader, which os/exec copies into a pipe as the agent reads.
func stdinFor(stdin string) (io.Reader, error) {
	if stdin == "" {
		return nil, nil
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, err
	}
	// Non-blocking: a pipe's buffer can be a single page when the user has
	// many pipes open; a write that does not fit falls back to the copy.
	n, err := syscall.Write(p[1], []byte(stdin))
	syscall.Close(p[1])
	if err != nil || n != len(stdin) {
		syscall.Close(p[0])
		return strings.NewReader(stdin), nil
	}
	if err := syscall.SetNonblock(p[0], false); err != nil {
		syscall.Close(p[0])
		return nil, err
	}
	return os.NewFile(uintptr(p[0]), "|0"), nil
}
