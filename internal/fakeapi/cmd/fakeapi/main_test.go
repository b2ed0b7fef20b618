package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/testkit"
)

// The program serves a script file, prints its URL and logs each request.
func TestProgram(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakeapi")
	testkit.GoBuild(t, bin, ".")
	script := filepath.Join(dir, "script.yaml")
	os.WriteFile(script, []byte("replies:\n  - text: hello from the script\n"), 0o644)
	logFile := filepath.Join(dir, "requests.jsonl")
	cmd := exec.Command(bin, "-script", script, "-log", logFile)
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q", url)
	}
	resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "hello from the script") {
		t.Errorf("reply %s", body)
	}
	// A second request finds the script used up.
	resp, _ = http.Post(url+"/v1/messages", "application/json", strings.NewReader(`{}`))
	if resp.StatusCode != 500 {
		t.Errorf("exhausted script: status %d", resp.StatusCode)
	}
	resp.Body.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("fakeapi did not stop on SIGTERM")
	}
	b, _ := os.ReadFile(logFile)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("log has %d lines:\n%s", len(lines), b)
	}
	var r struct {
		Method, Path, Body, API string
		Reply                   int
	}
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r.Method != "POST" || r.Path != "/v1/messages" ||
		r.API != "anthropic" || r.Reply != 0 || r.Body != `{"model":"m"}` {
		t.Errorf("log line %s: %+v %v", lines[0], r, err)
	}
}
