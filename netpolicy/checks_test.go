package netpolicy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// The checks' proxy: on a unix socket, the hosts of checks.network.allow
// only (the agents' allowlist plays no part), each connection handed to
// the sink at once as a record of phase "checks".
func TestStartChecks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	l := parse(t, fmt.Sprintf("network: {allow: [agents.example]}\nchecks:\n  network: {allow: [%q]}\n", ln.Addr().String()))
	var mu sync.Mutex
	var evs []record.Event
	x, err := StartChecks(l, func(ev record.Event) { mu.Lock(); evs = append(evs, ev); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	n := x.Network()
	if n == nil || n.Socket == "" || n.Port != RelayPort {
		t.Fatalf("network %+v", n)
	}
	get := func(url string) string {
		c, err := net.Dial("unix", n.Socket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", url)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Status
	}
	if s := get("http://" + ln.Addr().String() + "/"); !strings.HasPrefix(s, "200") {
		t.Errorf("allowed host: %s", s)
	}
	if s := get("http://agents.example/"); !strings.HasPrefix(s, "403") {
		t.Errorf("the agents' host reached by a check: %s", s)
	}
	x.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := len(evs)
		mu.Unlock()
		if got >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var allowed, refused bool
	for _, ev := range evs {
		if ev.Phase != "checks" {
			t.Errorf("record without the checks' phase: %+v", ev)
		}
		allowed = allowed || ev.Event == record.NetAllowed && ev.To == ln.Addr().String()
		refused = refused || ev.Event == record.NetRefused && ev.To == "agents.example:80"
	}
	if !allowed || !refused {
		t.Errorf("records %+v", evs)
	}
	if len(x.Drain()) != 0 {
		t.Error("the checks' records are kept for Drain too")
	}
	y, err := StartChecks(parse(t, "checks:\n  network: {allow: [127.0.0.1:1]}\n"), func(record.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	y.Close()
}
