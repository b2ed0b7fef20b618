//go:build !windows

package spec

// Bad input found by attack (issue 27): a loop file that is not a regular
// file or is too large, a webhook that is not an http(s) URL with a host,
// a schedule that fires without pause.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReadFile refuses what is not a regular file before reading it (a device
// is never read, a pipe with no writer never waited on), and a file over
// MaxFileSize; a file of exactly MaxFileSize is read whole.
func TestReadFileBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	refused := func(path, want string) {
		t.Helper()
		done := make(chan error, 1)
		go func() { _, err := ReadFile(path); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute): // a guard against a hang only
			t.Fatalf("ReadFile(%s) did not return", path)
		}
		var se *Error
		if !errors.As(err, &se) || se.Path != path || len(se.Problems) != 1 || !strings.Contains(se.Problems[0].Msg, want) {
			t.Errorf("ReadFile(%s) = %v, want a problem of %s: %q", path, err, path, want)
		}
	}
	refused("/dev/zero", "not a regular file (a character device)")
	refused(fifo, "not a regular file (a named pipe)")
	refused(dir, "not a regular file (a folder)")

	at := filepath.Join(dir, "max.yaml")
	if err := os.WriteFile(at, []byte(strings.Repeat("#", MaxFileSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(at); err != nil || len(data) != MaxFileSize {
		t.Errorf("a file of exactly %d bytes: %d bytes, %v", MaxFileSize, len(data), err)
	}
	over := filepath.Join(dir, "over.yaml")
	if err := os.WriteFile(over, []byte(strings.Repeat("#", MaxFileSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	refused(over, "larger than 1048576 bytes (1 MiB)")
	if MaxFileSize != 1<<20 {
		t.Errorf("MaxFileSize = %d, want 1 MiB", MaxFileSize)
	}

	// A missing file is the file system's error, not a loop file problem.
	if _, err := ReadFile(filepath.Join(dir, "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// Load reports the refusal as the loop file's problem, as it is.
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero is invalid (1 problem):\n  /dev/zero: not a regular file") {
		t.Errorf("Load(/dev/zero) = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "none.yaml")); err == nil || !strings.HasPrefix(err.Error(), "read loop file: ") {
		t.Errorf("Load of a missing file = %v", err)
	}
	ok := filepath.Join(dir, "loop.yaml")
	if err := os.WriteFile(ok, []byte("objective: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := Load(ok); err != nil || l.Objective != "x" {
		t.Errorf("Load of a good file: %v", err)
	}
}

// notify.webhook is an http or https URL with a host; the problem is where
// the webhook is written and does not repeat the URL.
func TestWebhookIsHTTPWithHost(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"file:///etc/passwd", "a file: URL is not posted to: want an http:// or https:// URL with a host"},
		{`"ht!tp://::"`, "not a URL: want an http:// or https:// URL with a host"},
		{"https:///hooks/T000", "the URL has no host"},
		{"http://:8080/hook", "the URL has no host"},
		{"hooks.example.com/T000", "the URL has no scheme"},
		{"ftp://example.com/secretpath", "a ftp: URL is not posted to"},
		{`" https://example.com"`, "not a URL"},
	} {
		src := "objective: x\nnotify:\n  webhook: " + c.url + "\n"
		problemAt(t, src, 3, 12, "notify.webhook: "+c.want)
		_, err := Parse([]byte(src), "loop.yaml")
		if err != nil && (strings.Contains(err.Error(), "passwd") || strings.Contains(err.Error(), "secretpath")) {
			t.Errorf("the problem repeats the URL: %v", err)
		}
	}
	for _, ok := range []string{"https://hooks.example.com/T000/B000/XXX", "http://127.0.0.1:8080/hook?key=1"} {
		if _, err := Parse([]byte("objective: x\nnotify:\n  webhook: \""+ok+"\"\n"), "loop.yaml"); err != nil {
			t.Errorf("webhook %q: %v", ok, err)
		}
	}
}

// schedule.every, when written, is above 0; left out, it is no schedule.
func TestScheduleEveryAboveZero(t *testing.T) {
	for _, zero := range []string{"0s", "0m", "\"0\""} {
		problemAt(t, "objective: x\nschedule:\n  every: "+zero+"\n", 3, 10, "schedule.every: 0s fires without pause: want a duration above 0")
	}
	for _, src := range []string{"objective: x\nschedule:\n  every: 1s\n", "objective: x\nschedule:\n  cron: \"@daily\"\n", "objective: x\n"} {
		if _, err := Parse([]byte(src), "loop.yaml"); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// Each kind of file that is not a regular one is named for what it is.
func TestFileKind(t *testing.T) {
	for m, want := range map[os.FileMode]string{
		os.ModeDir | 0o755:                   "a folder",
		os.ModeNamedPipe:                     "a named pipe",
		os.ModeSocket:                        "a socket",
		os.ModeDevice | os.ModeCharDevice:    "a character device",
		os.ModeDevice:                        "a device",
		os.ModeIrregular:                     "not a file",
		os.ModeDir | os.ModeNamedPipe:        "a folder",
		os.ModeNamedPipe | os.ModeCharDevice: "a named pipe",
		os.ModeSocket | os.ModeDevice:        "a socket",
	} {
		if got := fileKind(m); got != want {
			t.Errorf("fileKind(%v) = %q, want %q", m, got, want)
		}
	}
}
