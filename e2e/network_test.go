//go:build !windows

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/sandbox"
)

// Under the default sandbox, a genuine CLI's shell tool is confined like
// the CLI: a host off the allowlist is refused by the loop's proxy (a
// net_refused record names it), and the fake model API, on the host's
// loopback, is unreachable without the proxy; the CLI itself reaches the
// API through the proxy, and the loop ends DONE.
func TestLoopNetworkConfined(t *testing.T) {
	if kind, err := sandbox.Resolve(sandbox.Auto); err != nil || kind != sandbox.Bwrap {
		t.Skipf("the network is confined under bubblewrap only (here: %s %v)", kind, err)
	}
	eachCLI(t, func(t *testing.T, k kit) {
		looprinter(t)
		srv := startAPI(t)
		l := newLoop(t, k, srv.URL, loopOpts{})
		probe := fmt.Sprintf(`curl -s -m 10 -o /dev/null -w 'evil:%%{http_code}\n' https://evil.example/ >> out/net.txt 2>&1; `+
			`if curl -s -m 5 --noproxy '*' -o /dev/null %s/; then echo direct:reached; else echo direct:failed; fi >> out/net.txt`, srv.URL)
		srv.Add(planReplies(k, l.dir)...)
		srv.Add(withUsage(k.shell("mkdir -p out && "+probe), 3000, 100, 2000))
		srv.Add(buildReplies(k, l.dir, "T-001", "one")...)
		srv.Add(buildReplies(k, l.dir, "T-002", "two")...)
		code, _, _, _ := l.run(t, 12*time.Minute)
		if code != 0 {
			t.Fatalf("exit %d, want 0 (DONE)", code)
		}
		net, err := os.ReadFile(filepath.Join(l.dir, "out", "net.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(net), "evil:000") && !strings.Contains(string(net), "evil:403") {
			t.Errorf("the refused host answered: %s", net)
		}
		if !strings.Contains(string(net), "direct:failed") {
			t.Errorf("the shell tool reached the host's loopback without the proxy: %s", net)
		}
		evs := l.records(t)
		refused := false
		for _, e := range only(evs, "net_refused") {
			refused = refused || e.To == "evil.example:443"
		}
		if !refused {
			t.Errorf("no net_refused record names evil.example:443")
		}
		if len(only(evs, "net_allowed")) == 0 {
			t.Errorf("no net_allowed record: the CLI did not go through the proxy")
		}
	})
}
