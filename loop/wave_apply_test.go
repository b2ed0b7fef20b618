package loop

import (
	"context"
	"github.com/looprinter/looprinter/wave"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// The applies of one wave, without mounts: each run's layer is a folder
// of files (what an overlay's upper holds), applied by copying. A file two
// runs changed on different lines is merged in the second run's layer
// against the folder as the wave found it; the same line two ways, or a
// new file two ways, is a conflict; both runs beginning the progress file
// keep both findings; a path no earlier run touched keeps its base.
func TestWaveApplyPrepare(t *testing.T) {
	ctx := context.Background()
	dir, priv := t.TempDir(), t.TempDir()
	write := func(root, rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(root, rel string) string {
		b, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return string(b)
	}
	base := "a\nb\nc\nd\ne\nf\n"
	write(dir, "f.txt", base)
	progress := loopdir.OutputDir + "/progress.txt"
	layer := func(files map[string]string) sandbox.Layer {
		l := sandbox.Layer{Target: dir, Upper: t.TempDir()}
		for rel, text := range files {
			write(l.Upper, rel, text)
		}
		return l
	}
	w := &waveApply{Merger: wave.NewMerger()}
	apply := func(l sandbox.Layer) string {
		why, err := w.Prepare(ctx, dir, priv, l)
		if err != nil {
			t.Fatal(err)
		}
		if why == "" {
			for _, rel := range w.Paths {
				write(dir, rel, read(l.Upper, rel))
			}
			w.Log.Add(w.Paths, w.Replaced...)
		}
		return why
	}
	if why := apply(layer(map[string]string{"f.txt": "A\nb\nc\nd\ne\nf\n", progress: "T-001: done\n", "new.txt": "one\n"})); why != "" {
		t.Fatalf("the first run conflicts: %s", why)
	}
	if why := apply(layer(map[string]string{"f.txt": "a\nb\nc\nd\ne\nF\n", progress: "T-002: done\n", "g.txt": "g\n"})); why != "" {
		t.Fatalf("different lines conflict: %s", why)
	}
	if got := read(dir, "f.txt"); got != "A\nb\nc\nd\ne\nF\n" {
		t.Fatalf("merged f.txt %q", got)
	}
	if got := read(dir, progress); got != "T-001: done\nT-002: done\n" {
		t.Fatalf("progress %q", got)
	}
	if b := w.Base["f.txt"]; string(b.Data) != base || w.Base["new.txt"].Absent != true {
		t.Fatalf("bases: f.txt %q, new.txt absent %v", b.Data, w.Base["new.txt"].Absent)
	}
	for _, c := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"f.txt": "X\nb\nc\nd\ne\nf\n"}, "its change to f.txt conflicts"},
		{map[string]string{"new.txt": "two\n"}, "its change to new.txt conflicts"},
	} {
		if why := apply(layer(c.files)); !strings.Contains(why, c.want) {
			t.Errorf("%v: %q, want %q", c.files, why, c.want)
		}
	}
	// A run that wrote what the folder already holds, or a path no run
	// of the wave changed, applies as it is.
	if why := apply(layer(map[string]string{"f.txt": "A\nb\nc\nd\ne\nF\n", "h.txt": "h\n"})); why != "" {
		t.Fatalf("an equal change conflicts: %s", why)
	}
}
