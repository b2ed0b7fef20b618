package netpolicy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/netproxy"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

func parse(t *testing.T, y string) *spec.Loop {
	t.Helper()
	dir := t.TempDir()
	l, err := spec.Parse([]byte("objective: x\nverify: [true]\n"+y), filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestAllow(t *testing.T) {
	l := parse(t, "agent: {backend: claude, env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:8099'}}\nnetwork: {allow: [proxy.golang.org, api.anthropic.com]}\n")
	got := Allow(l)
	want := []string{"127.0.0.1:8099", "api.anthropic.com", "console.anthropic.com", "proxy.golang.org"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
	l = parse(t, "agent: {backend: command, command: x}\n")
	if len(Allow(l)) != 0 {
		t.Errorf("command backend: %v", Allow(l))
	}
}

func TestMasks(t *testing.T) {
	home := "/h"
	l := parse(t, "agent: {backend: claude}\nsandbox: {mode: auto, deny_read: [~/secret, /srv/k], allow_read: [~/.aws]}\n")
	m := Masks(l, home, "/h/work/loop")
	for _, want := range []string{"/h/.ssh", "/h/.netrc", "/h/.config/gh", "/h/secret", "/srv/k", "/h/.codex/auth.json"} {
		if !slices.Contains(m, want) {
			t.Errorf("%s not masked: %v", want, m)
		}
	}
	for _, not := range []string{"/h/.aws", "/h/.claude/.credentials.json"} {
		if slices.Contains(m, not) {
			t.Errorf("%s masked: %v", not, m)
		}
	}
	// A loop folder inside a credential folder is never hidden from itself.
	if slices.Contains(Masks(l, home, "/h/.ssh/proj"), "/h/.ssh") {
		t.Error("the loop folder's own parent was masked")
	}
}

func TestStartModes(t *testing.T) {
	if x, err := Start(parse(t, "network: open\n"), sandbox.Bwrap); err != nil || x != nil || x.Network() != nil {
		t.Errorf("open: %v %v", x, err)
	}
	x, err := Start(parse(t, "network: off\n"), sandbox.Bwrap)
	if err != nil || x.Network() == nil || x.Network().Port != 0 || x.Network().Socket != "" {
		t.Errorf("off: %+v %v", x, err)
	}
	x.Close()
	x, err = Start(parse(t, "network: {allow: [a.example]}\n"), sandbox.Bwrap)
	if err != nil || x.Network().Socket == "" || x.Network().Port != RelayPort {
		t.Fatalf("bwrap: %+v %v", x, err)
	}
	sock := x.Network().Socket
	x.Close()
	if _, err := os.Stat(filepath.Dir(sock)); !os.IsNotExist(err) {
		t.Errorf("socket folder left: %v", err)
	}
	x, err = Start(parse(t, "network: {allow: [a.example]}\n"), sandbox.Landlock)
	if err != nil || x.Network().Socket != "" || x.Network().Port == 0 {
		t.Fatalf("landlock: %+v %v", x, err)
	}
	x.report(connRefused("b.example", 443))
	x.Close()
	evs := x.Drain()
	if len(evs) != 1 || evs[0].Event != record.NetRefused || evs[0].To != "b.example:443" {
		t.Errorf("drain: %+v", evs)
	}
	if len(x.Drain()) != 0 {
		t.Error("a second drain repeats")
	}
}

func connRefused(h string, p int) netproxy.Conn {
	return netproxy.Conn{Proto: "connect", Host: h, Port: p, Why: "not in the allowlist"}
}
