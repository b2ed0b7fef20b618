package loopdir

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Usage counts the disk the agents' trees take (a sparse file what it
// holds), keeps the measure for a while, says when its walk stopped at
// its bound; FreeAgentTrees frees them and nothing else of the private
// folder; Orphans lists only folders no loop owns.
func TestUsageAndFree(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	p := PrivateUnder(root, dir)
	if _, err := p.Ensure(); err != nil {
		t.Fatal(err)
	}
	upper := p.LayerUpper("tree-abc")
	os.MkdirAll(upper, 0o700)
	os.MkdirAll(p.LayerWork("tree-abc")+"/work", 0o000) // as overlayfs leaves it
	if err := os.WriteFile(filepath.Join(upper, "dense"), make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(filepath.Join(upper, "sparse"))
	f.Truncate(2 << 30)
	f.Close()
	os.MkdirAll(p.AgentHome(), 0o700)
	os.WriteFile(filepath.Join(p.AgentHome(), "x"), make([]byte, 1<<20), 0o600)
	os.WriteFile(p.State(), []byte("{}"), 0o600)

	u := p.Usage(time.Minute)
	if u.Bytes < 4<<20 || u.Bytes > 5<<20 || u.Partial || u.Trees["layers/tree-abc"] < 3<<20 || u.Trees["home"] < 1<<20 {
		t.Fatalf("usage %+v: want about 4 MiB (the sparse file holds nothing)", u)
	}
	// Kept: a file added since is not seen until the measure is stale.
	os.WriteFile(filepath.Join(upper, "more"), make([]byte, 2<<20), 0o600)
	if again := p.Usage(time.Minute); again.Bytes != u.Bytes {
		t.Fatalf("a fresh measure was not reused: %d, then %d", u.Bytes, again.Bytes)
	}
	if again := p.Usage(0); again.Bytes < u.Bytes+2<<20 {
		t.Fatalf("a stale measure was reused: %d", again.Bytes)
	}
	defer func(n int) { usageWalk = n }(usageWalk)
	usageWalk = 3
	if b := p.MeasureUsage(); !b.Partial {
		t.Fatalf("a walk past its bound is not partial: %+v", b)
	}
	usageWalk = 200_000

	if orphans := Orphans(root, []string{dir}); len(orphans) != 0 {
		t.Fatalf("an owned folder is an orphan: %v", orphans)
	}
	if orphans := Orphans(root, nil); len(orphans) != 1 || orphans[0] != p {
		t.Fatalf("orphans %v, want %s", orphans, p)
	}
	n, err := p.FreeAgentTrees(true)
	if err != nil || n < 6<<20 {
		t.Fatalf("dry run: %d %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(upper, "dense")); err != nil {
		t.Fatal("a dry run removed a file")
	}
	if n, err := p.FreeAgentTrees(false); err != nil || n < 6<<20 {
		t.Fatalf("free: %d %v", n, err)
	}
	if len(p.AgentTrees()) != 0 {
		t.Fatalf("left: %v", p.AgentTrees())
	}
	if _, err := os.Stat(p.State()); err != nil {
		t.Fatal("the state went with the trees")
	}
	if u := p.Usage(time.Hour); u.Bytes != 0 {
		t.Fatalf("after freeing: %+v", u)
	}
}
