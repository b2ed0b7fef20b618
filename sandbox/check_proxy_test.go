//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A box built with the judge's proxy never gets more network than the
// proxy: a proxy that is not running, a box that is not bubblewrap's, or
// one whose checks or setups have the host's network is refused; a box
// with it gives each check a namespace of its own with the relay in it,
// and names the relay as the check's proxy.
func TestCheckBoxProxy(t *testing.T) {
	tree := t.TempDir()
	n := &Network{Socket: "/nonexistent/proxy.sock", Port: 4321}
	for _, c := range []struct {
		o    CheckBoxOptions
		want string
	}{
		{CheckBoxOptions{Kind: Bwrap, Tree: tree, Proxy: &Network{}, SetupNetwork: CheckNetworkNone}, "not running"},
		{CheckBoxOptions{Kind: Landlock, Tree: tree, Proxy: n, SetupNetwork: CheckNetworkNone}, "only a bubblewrap"},
		{CheckBoxOptions{Kind: Bwrap, Tree: tree, Proxy: n, Network: CheckNetworkHost, SetupNetwork: CheckNetworkNone}, "host's network"},
		{CheckBoxOptions{Kind: Bwrap, Tree: tree, Proxy: n}, "host's network"}, // setups default to the host's
	} {
		if b, err := NewCheckBox(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			b.Close()
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	need(t, Bwrap)
	if err := LayerProbe(); err != nil {
		t.Skipf("no copy-on-write layer here: %v", err)
	}
	b, err := NewCheckBox(CheckBoxOptions{Kind: Bwrap, Tree: tree, Proxy: n, SetupNetwork: CheckNetworkNone, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, setup := range []bool{false, true} {
		cmd, cleanup, err := b.command(context.Background(), tree, "true", nil, setup)
		if err != nil {
			t.Fatal(err)
		}
		cleanup()
		var s layerSpec
		env := strings.Join(cmd.Env, "\n")
		for _, kv := range cmd.Env {
			if v, ok := strings.CutPrefix(kv, EnvCheckLayers+"="); ok {
				json.Unmarshal([]byte(v), &s)
			}
		}
		if s.Net == nil || s.Net.Socket != n.Socket || s.Net.Port != n.Port {
			t.Errorf("setup %v: the helper runs no relay: %+v", setup, s.Net)
		}
		if slices.Contains(s.Args, "--unshare-net") || slices.Contains(s.Args, "--info-fd") || s.FD3 || len(cmd.ExtraFiles) > 0 {
			t.Errorf("setup %v: bubblewrap leaves the relay's namespace, or waits on an info pipe: %q", setup, s.Args)
		}
		if !strings.Contains(env, "HTTP_PROXY=http://127.0.0.1:4321") {
			t.Errorf("setup %v: the check is not told its proxy:\n%s", setup, env)
		}
	}
}
