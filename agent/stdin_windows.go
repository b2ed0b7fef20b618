package agent

import (
	"io"
	"strings"
)

// stdinFor is what the agent reads on its standard input: os/exec copies
// it into a pipe as the agent reads (no agent runs on Windows yet; see
// package proc).
func stdinFor(stdin string) (io.Reader, error) {
	if stdin == "" {
		return nil, nil
	}
	return strings.NewReader(stdin), nil
}
