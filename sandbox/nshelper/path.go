package nshelper

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// HelperName is the small helper binary (cmd/looprinter-sandbox): where it
// lies beside the running executable and is of the same helper code, it is
// started as the layer helper instead of the executable itself. It starts
// in about a third of the CPU time of the engine's binary, whose size
// alone (the runtime's tables, the page faults of its start) costs a few
// milliseconds per start.
const HelperName = "looprinter-sandbox"

// EnvProbe asks the helper for its fingerprint (Fingerprint): it prints it
// and exits.
const EnvProbe = "LOOPRINTER_SANDBOX_HELPER_PROBE"

//go:embed *.go
var sources embed.FS

var fingerprint struct {
	sync.Once
	s string
}

// Fingerprint is a hash of this package's source: two binaries with the
// same fingerprint run the same helper code.
func Fingerprint() string {
	fingerprint.Do(func() {
		names, _ := fs.Glob(sources, "*.go")
		sort.Strings(names)
		h := sha256.New()
		for _, n := range names {
			b, _ := sources.ReadFile(n)
			h.Write([]byte(n + "\x00"))
			h.Write(b)
			h.Write([]byte{0})
		}
		fingerprint.s = hex.EncodeToString(h.Sum(nil))
	})
	return fingerprint.s
}

var helperPath struct {
	sync.Once
	path string
	err  error
}

// Path is the binary to start as the layer helper: HelperName beside the
// running executable when it answers the probe with this binary's
// fingerprint (found once per process), else the running executable,
// which serves as the helper as well (this package's init function).
func Path() (string, error) {
	helperPath.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			helperPath.err = err
			return
		}
		helperPath.path = exe
		if h := beside(exe); h != "" {
			helperPath.path = h
		}
	})
	return helperPath.path, helperPath.err
}

// beside is HelperName beside exe when it is a helper of the same code.
func beside(exe string) string {
	h := filepath.Join(filepath.Dir(exe), HelperName)
	fi, err := os.Stat(h)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 || h == exe {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h)
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), EnvLayers), EnvCheckLayers), EnvProbe+"=1")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(bytes.TrimSpace(out))) != Fingerprint() {
		return ""
	}
	return h
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}
