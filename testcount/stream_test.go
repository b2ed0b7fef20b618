package testcount

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// genReader produces size bytes of test output: go test -json events and
// go test -v lines with distinct names, pytest lines, noise and a very long
// line now and then. It counts the passes and skips it wrote.
type genReader struct {
	left           int
	n              int
	buf            []byte
	passed, skip   int
	sampleEvery    int
	sinceSample    int
	peakHeap       uint64
	memSampleCount int
}

func (g *genReader) Read(p []byte) (int, error) {
	if len(g.buf) == 0 {
		if g.left <= 0 {
			return 0, io.EOF
		}
		g.fill()
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	g.left -= n
	g.sinceSample += n
	if g.sampleEvery > 0 && g.sinceSample >= g.sampleEvery {
		g.sinceSample = 0
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		g.peakHeap = max(g.peakHeap, ms.HeapAlloc)
		g.memSampleCount++
	}
	return n, nil
}

func (g *genReader) fill() {
	g.n++
	i := strconv.Itoa(g.n)
	var b strings.Builder
	b.WriteString(`{"Time":"2026-11-30T15:00:32.079447379Z","Action":"output","Package":"example.com/big/p` + i + `","Test":"TestBig` + i + `","Output":"=== RUN   TestBig` + i + `\n"}` + "\n")
	b.WriteString(`{"Time":"2026-11-30T15:00:32.079447379Z","Action":"pass","Package":"example.com/big/p` + i + `","Test":"TestBig` + i + `","Elapsed":0}` + "\n")
	b.WriteString("=== RUN   TestV" + i + "\n--- PASS: TestV" + i + " (0.00s)\n    --- SKIP: TestV" + i + "/sub (0.00s)\n")
	g.passed += 2
	g.skip++
	b.WriteString("some noise from a build step, line " + i + " ... not a result\n")
	b.WriteString("\x1b[32mtests/test_x.py::test_" + i + " PASSED\x1b[0m    [ 50%]\n")
	if g.n%1000 == 0 {
		b.WriteString("ok  \texample.com/big/v" + i + "\t0.01s\n")
		b.WriteString(strings.Repeat("y", MaxLine+100) + "\n")
	}
	g.buf = []byte(b.String())
}

// 200 MB of output is read in bounded memory and every test is counted.
func TestStreamBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200 MB")
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g := &genReader{left: 200 << 20, sampleEvery: 4 << 20}
	c, err := Parse(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Known || c.Runner != "go,go-json" || c.Passed != g.passed || c.Skipped != g.skip || !c.NamesTruncated {
		t.Errorf("%s, truncated %v; wrote %d passed, %d skipped", c, c.NamesTruncated, g.passed, g.skip)
	}
	grew := int64(g.peakHeap) - int64(before.HeapAlloc)
	t.Logf("%d lines' worth of tests, peak heap %.1f MiB above the start (%d samples)", g.n, float64(grew)/(1<<20), g.memSampleCount)
	// Two name lists capped at MaxNameBytes, their maps, the waiting go -v
	// names, a 1 MiB line: well under 64 MiB.
	if grew > 64<<20 {
		t.Errorf("peak heap grew by %d MiB", grew>>20)
	}
}

func BenchmarkParse(b *testing.B) {
	const size = 32 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(&genReader{left: size}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSamples reads the real samples, all of them, as one output.
func BenchmarkParseSamples(b *testing.B) {
	files, _ := filepath.Glob("testdata/*.txt")
	var all strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		all.Write(data)
	}
	s := all.String()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		ParseString(s, nil)
	}
}

// Garbage never panics, and the counts are sane whatever the chunking.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data, uint8(7))
	}
	f.Add([]byte("ok 1\n1..1\n\x1b[\x1b]\x1b"), uint8(1))
	f.Add([]byte("=== RUN T\n--- PASS: \xff\xfe (0.00s)\n"), uint8(3))
	f.Add([]byte("Ran 1 test in 0.1s\n\nFAILED (failures=99999999999999999999, errors=-1)\n"), uint8(2))
	extra := []Pattern{{Name: "user", Passed: `(\d+) ok`, Total: `total (\d+)`, Skipped: `(\d*) skip`}}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		c, err := Parse(strings.NewReader(string(data)), extra)
		if err != nil {
			t.Fatal(err)
		}
		if c.Passed < 0 || c.Failed < 0 || c.Skipped < 0 {
			t.Errorf("negative: %+v", c)
		}
		if c.Known != (c.Runner != "") {
			t.Errorf("Known %v with runner %q", c.Known, c.Runner)
		}
		p, _ := NewParser(extra)
		size := int(chunk%64) + 1
		for b := data; len(b) > 0; {
			n := min(size, len(b))
			p.Write(b[:n])
			b = b[n:]
		}
		c2 := p.Counts()
		if c.String() != c2.String() || len(c.PassedNames) != len(c2.PassedNames) {
			t.Errorf("chunks of %d: %s, whole: %s", size, c2, c)
		}
		Compare(c, c2)
		Compare(Counts{Known: true, Passed: 1 << 30, PassedNames: []string{"a"}}, c)
	})
}
