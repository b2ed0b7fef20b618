package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// parseProcArgs parses what macOS's sysctl kern.procargs2 returns for a
// process: argc (a 32-bit integer, host order: little-endian on every Mac
// Go supports), the executable's path, NUL padding, argc NUL-terminated
// arguments, then the NUL-terminated environment (until an empty string
// or the end). env is returned NUL-separated, as Linux's
// /proc/PID/environ, so EnvHas reads both.
func parseProcArgs(b []byte) (args []string, env []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("procargs2: too short")
	}
	argc := int(binary.LittleEndian.Uint32(b))
	rest := b[4:]
	// The executable's path, then its padding.
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, nil, errors.New("procargs2: no executable path")
	}
	rest = rest[i:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	for ; argc > 0 && len(rest) > 0; argc-- {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			i = len(rest)
		}
		args = append(args, string(rest[:i]))
		rest = rest[min(i+1, len(rest)):]
	}
	if argc > 0 {
		return args, nil, errors.New("procargs2: arguments cut short")
	}
	var out []byte
	for len(rest) > 0 && rest[0] != 0 {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			i = len(rest)
		}
		out = append(out, rest[:i]...)
		out = append(out, 0)
		rest = rest[min(i+1, len(rest)):]
	}
	return args, out, nil
}
