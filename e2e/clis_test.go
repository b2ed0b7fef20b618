//go:build !windows

// Package e2e drives the genuine agent CLIs (Claude Code, Codex, Gemini CLI)
// against the fake model API on 127.0.0.1, through looprinter's adapters and
// through `looprinter run`. Nothing here reaches beyond 127.0.0.1.
//
// The CLIs are found through LOOPRINTER_AGENT_CLIS (the folder that
// scripts/install-agent-clis.sh installs into, or its bin folder), the
// repository's .cache/agent-clis, or PATH. When one is missing the test is
// skipped, unless CI or LOOPRINTER_REQUIRE_AGENT_CLIS=1 is set: then it fails.
package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/fakeapi"
)

// kit is what a test needs to know about one CLI.
type kit struct {
	backend string
	model   string
	bin     string
	// write is a reply where the model creates a file with the CLI's own
	// file tool; shell one where it runs a shell command.
	write func(abs, rel, content string) fakeapi.Reply
	shell func(cmd string) fakeapi.Reply
	// tools are the names Result.Tools shows for write and shell.
	writeTool, shellTool string
	// env gives the child environment that points the CLI at the fake API
	// with a temporary HOME.
	env func(t *testing.T, home, url string) map[string]string
}

var kits = []kit{
	{
		backend: "claude", model: "sonnet",
		write:     func(abs, rel, content string) fakeapi.Reply { return fakeapi.ClaudeWrite(abs, content) },
		shell:     fakeapi.ClaudeBash,
		writeTool: "Write", shellTool: "Bash",
		env: func(t *testing.T, home, url string) map[string]string {
			return map[string]string{
				"HOME":                 home,
				"CLAUDE_CONFIG_DIR":    filepath.Join(home, ".claude"),
				"XDG_CONFIG_HOME":      filepath.Join(home, ".config"),
				"ANTHROPIC_BASE_URL":   url,
				"ANTHROPIC_API_KEY":    "dummy-key-for-fakeapi",
				"ANTHROPIC_AUTH_TOKEN": "",
				"DISABLE_TELEMETRY":    "1",
			}
		},
	},
	{
		backend: "codex", model: "gpt-5.5",
		write: func(abs, rel, content string) fakeapi.Reply {
			return fakeapi.CodexPatch(fakeapi.CodexAddFile(rel, content))
		},
		shell:     fakeapi.CodexExec,
		writeTool: "apply_patch", shellTool: "exec_command",
		env: func(t *testing.T, home, url string) map[string]string {
			// Without these Codex looks up github.com and chatgpt.com at
			// start (update check, plugin sync): nothing may leave 127.0.0.1.
			dir := filepath.Join(home, ".codex")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			config := "check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n" +
				"[features]\nplugins = false\nremote_plugin = false\napps = false\n"
			if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			return map[string]string{
				"HOME":                      home,
				"CODEX_HOME":                filepath.Join(home, ".codex"),
				"XDG_CONFIG_HOME":           filepath.Join(home, ".config"),
				"LOOPRINTER_CODEX_BASE_URL": url + "/v1",
				"OPENAI_API_KEY":            "dummy-key-for-fakeapi",
				"OPENAI_BASE_URL":           "",
			}
		},
	},
	{
		backend: "gemini", model: "gemini-2.5-flash",
		write:     func(abs, rel, content string) fakeapi.Reply { return fakeapi.GeminiWrite(abs, content) },
		shell:     fakeapi.GeminiShell,
		writeTool: "write_file", shellTool: "run_shell_command",
		env: func(t *testing.T, home, url string) map[string]string {
			dir := filepath.Join(home, ".gemini")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},` +
				`"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},` +
				`"general":{"maxAttempts":1,"enableAutoUpdate":false,"enableAutoUpdateNotification":false}}`
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
				t.Fatal(err)
			}
			return map[string]string{
				"HOME":                   home,
				"XDG_CONFIG_HOME":        filepath.Join(home, ".config"),
				"GOOGLE_GEMINI_BASE_URL": url,
				"GEMINI_API_KEY":         "dummy-key-for-fakeapi",
				"GOOGLE_API_KEY":         "",
				"TMPDIR":                 filepath.Join(home, "tmp"),
			}
		},
	},
}

// required reports whether a missing CLI must fail the test.
func required() bool {
	return os.Getenv("CI") != "" || os.Getenv("LOOPRINTER_REQUIRE_AGENT_CLIS") == "1"
}

// findCLI locates one CLI's program, or skips (fails in CI).
func findCLI(t *testing.T, name string) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("LOOPRINTER_AGENT_CLIS"); d != "" {
		dirs = append(dirs, filepath.Join(d, "bin"), filepath.Join(d, "node_modules", ".bin"), d)
	}
	_, here, _, _ := runtime.Caller(0)
	repo := filepath.Dir(filepath.Dir(here))
	dirs = append(dirs, filepath.Join(repo, ".cache", "agent-clis", "bin"))
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " CLI not found: run scripts/install-agent-clis.sh and set LOOPRINTER_AGENT_CLIS to its folder"
	if required() {
		t.Fatal(msg + " (required: CI or LOOPRINTER_REQUIRE_AGENT_CLIS=1 is set)")
	}
	t.Skip(msg)
	return ""
}

// eachCLI runs f as a subtest for every CLI, with its program located.
func eachCLI(t *testing.T, f func(t *testing.T, k kit)) {
	for _, k := range kits {
		k := k
		t.Run(k.backend, func(t *testing.T) {
			k.bin = findCLI(t, k.backend)
			f(t, k)
		})
	}
}

// startAPI starts the fake API with a script; it is closed with the test.
func startAPI(t *testing.T, replies ...fakeapi.Reply) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.Start(fakeapi.Script{Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// sinceRefusal is the time from the first model request (the one the fake
// API refused) to end: how long the run went on after the refusal. The
// time before it, the CLI starting (seconds of Node.js start-up on a loaded
// machine), is logged, not judged.
func sinceRefusal(t *testing.T, srv *fakeapi.Server, start, end time.Time) time.Duration {
	t.Helper()
	reqs := srv.ModelRequests()
	if len(reqs) == 0 {
		t.Fatalf("the CLI made no model request")
	}
	d := end.Sub(reqs[0].Time)
	t.Logf("start-up %s, then %d model request(s), blocked %s after the first", reqs[0].Time.Sub(start).Round(time.Millisecond), len(reqs), d.Round(time.Millisecond))
	return d
}

// deadURL is a loopback URL where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// newMark returns a unique value put in each child's environment, so that
// the test can find any process the run left behind.
func newMark() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "e2e-" + hex.EncodeToString(b)
}

const markVar = "LOOPRINTER_E2E_MARK"

// marked lists the processes whose environment carries the mark.
func marked(mark string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	needle := []byte(markVar + "=" + mark + "\x00")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if strings.Contains(string(env)+"\x00", string(needle)) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// assertNoLeftovers fails if a process carrying the mark is still alive
// (a process already sent SIGKILL may take a moment to exit on a loaded
// machine, and one escaping on purpose is still there after 10s).
func assertNoLeftovers(t *testing.T, mark string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if left = marked(mark); len(left) == 0 {
			return
		}
	}
	t.Errorf("processes left behind by the run: %v", left)
}

// geminiTurnsSupported tells whether the gemini adapter can apply
// max_turns here: Gemini CLI reads the system settings file it writes only
// from root-owned folders that nobody else can write (the user cache folder).
func geminiTurnsSupported() (bool, string) {
	if os.Geteuid() != 0 {
		return false, "gemini: max_turns goes through a system settings file, which Gemini CLI reads only when looprinter runs as root"
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return false, "gemini: no user cache folder: " + err.Error()
	}
	for p := dir; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
				return false, "gemini: " + p + " is not root-owned and private, so Gemini CLI would ignore the settings file"
			}
		}
		if filepath.Dir(p) == p {
			return true, ""
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
