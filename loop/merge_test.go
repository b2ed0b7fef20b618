package loop

import (
	"context"
	"github.com/looprinter/looprinter/wave"
	"strings"
	"testing"
)

func TestMergeTextThreeWay(t *testing.T) {
	ctx, tmp := context.Background(), t.TempDir()
	base := "a\nb\nc\nd\ne\nf\n"
	cases := []struct {
		name, ours, theirs string
		want               string
		conflict           bool
	}{
		{"different lines merge", "A\nb\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nF\n", "A\nb\nc\nd\ne\nF\n", false},
		{"same change on both sides", "a\nB\nc\nd\ne\nf\n", "a\nB\nc\nd\ne\nf\n", "a\nB\nc\nd\ne\nf\n", false},
		{"only ours changed", "a\nb\nC\nd\ne\nf\n", base, "a\nb\nC\nd\ne\nf\n", false},
		{"only theirs changed", base, "a\nb\nc\nD\ne\nf\n", "a\nb\nc\nD\ne\nf\n", false},
		{"same line two ways", "a\nb\nX\nd\ne\nf\n", "a\nb\nY\nd\ne\nf\n", "", true},
		{"both appended", base + "x\n", base + "y\n", base + "x\ny\n", false},
		{"binary on one side", "a\x00b\n", "a\nb\nc\nd\ne\nF\n", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, conflict, err := wave.MergeText(ctx, tmp, []byte(base), []byte(c.ours), []byte(c.theirs))
			if err != nil {
				t.Fatal(err)
			}
			if conflict != c.conflict || (!c.conflict && string(got) != c.want) {
				t.Fatalf("merged %q conflict %v, want %q conflict %v", got, conflict, c.want, c.conflict)
			}
			if c.conflict && got != nil {
				t.Fatalf("a conflict returned text %q", got)
			}
		})
	}
	// A file created on both sides (no base) with different text conflicts;
	// a base larger than the bound is a conflict, never read by git.
	if _, conflict, err := wave.MergeText(ctx, tmp, nil, []byte("one\n"), []byte("two\n")); err != nil || !conflict {
		t.Fatalf("both created: conflict %v err %v", conflict, err)
	}
	big := strings.Repeat("x\n", wave.MaxMergeBytes)
	if _, conflict, _ := wave.MergeText(ctx, tmp, []byte(big), []byte(big+"a\n"), []byte("b\n"+big)); !conflict {
		t.Fatal("a side over the bound was merged")
	}
}

func TestApplyLogTouchedSince(t *testing.T) {
	var l wave.ApplyLog
	l.Add([]string{"a.go", "b.go"})
	start := l.Mark() // a run starts after the first apply
	l.Add([]string{"b.go", "c.go"})
	l.Add([]string{"d.go"})
	if got := strings.Join(l.TouchedSince(start, []string{"a.go", "c.go", "d.go", "e.go"}), ","); got != "c.go,d.go" {
		t.Fatalf("touched since the run started: %q", got)
	}
	if got := l.TouchedSince(l.Mark(), []string{"a.go", "b.go"}); len(got) != 0 {
		t.Fatalf("nothing applied since: %q", got)
	}
	if got := strings.Join(l.TouchedSince(99, []string{"a.go"}), ","); got != "a.go" {
		t.Fatalf("an unknown start is judged against every applied run: %q", got)
	}
	// A folder replaced whole touches every path under it, and no path
	// that merely shares its prefix.
	l.Add([]string{"pkg"}, "pkg")
	if got := strings.Join(l.TouchedSince(3, []string{"pkg/x.go", "pkg/sub/y.go", "pkgs/z.go", "pkg"}), ","); got != "pkg,pkg/sub/y.go,pkg/x.go" {
		t.Fatalf("under a replaced folder: %q", got)
	}
}
