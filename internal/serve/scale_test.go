package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/histgen"
	"github.com/looprinter/looprinter/internal/report"
	"github.com/looprinter/looprinter/loopdir"
)

// scaleOps are what TestHistoryScale measures, each in a process of its
// own: "none" is the process doing nothing, the floor of its memory.
var scaleOps = []string{"none", "page", "api-loop", "api-cost", "stream-200", "report-24h", "report-7d"}

// TestHistoryScale measures the reads that must not grow with a loop's
// history at two sizes of history (1,000 and 100,000 build iterations of
// the records histgen writes, one every 10 minutes): the loop page, GET
// /api/loops/NAME, GET /api/loops/NAME/cost, the record stream's first 200
// records, and `report --since 24h` and `--since 7d`. Each is timed (the
// median of 5, after one to warm up) in a process of its own, whose peak
// RSS is its memory. The goal: the larger within 2× of the smaller, under
// 100 ms and 50 MB at 100,000 iterations. It writes about 300 MB of
// records under the temporary folder and takes minutes:
//
//	LOOPRINTER_HISTORY_SCALE=1 go test ./internal/serve -run TestHistoryScale -v -timeout 60m
//
// LOOPRINTER_HISTORY_SIZES=1000,20000 measures other sizes.
func TestHistoryScale(t *testing.T) {
	if os.Getenv("LOOPRINTER_HISTORY_SCALE") == "" {
		t.Skip("set LOOPRINTER_HISTORY_SCALE=1 to measure (minutes, hundreds of MB of temporary files)")
	}
	sizes := []int{1000, 100000}
	if v := os.Getenv("LOOPRINTER_HISTORY_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("LOOPRINTER_HISTORY_SIZES=%q: give numbers of iterations, comma-separated", v)
			}
			sizes = append(sizes, n)
		}
	}
	type result struct {
		ms, allocMB, rssMB float64
	}
	res := map[string]map[int]result{}
	for _, n := range sizes {
		state, dir := t.TempDir(), t.TempDir()
		keep := os.Getenv("LOOPRINTER_HISTORY_DIR") // kept there, for profiles: TestHistoryScaleChild with LOOPRINTER_HISTORY_STATE=DIR/N/state
		if keep != "" {
			state, dir = filepath.Join(keep, strconv.Itoa(n), "state"), filepath.Join(keep, strconv.Itoa(n), "loop")
		}
		t.Setenv("LOOPRINTER_STATE_DIR", state)
		start := time.Now()
		if _, err := os.Stat(dir); keep == "" || err != nil {
			if err := histgen.Write(dir, histgen.Options{Name: "history", Iterations: n}); err != nil {
				t.Fatal(err)
			}
		}
		// What the engine does when a run ends: the tally and the summary.
		d := loopdir.Dir(dir)
		if _, err := d.Spend(); err != nil {
			t.Fatal(err)
		}
		os.Remove(d.Private().Summary())
		fold := time.Now()
		sum, err := d.Summary() // folded from nothing
		if err != nil {
			t.Fatal(err)
		}
		foldTime := time.Since(fold)
		files, _ := d.RecordFiles()
		var size int64
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				size += fi.Size()
			}
		}
		sfi, _ := os.Stat(d.Private().Summary())
		t.Logf("%d iterations: %d records, %d files, %.1f MB of records, summary %d KB (folded from the records in %v); set up in %v",
			n, sum.Records, len(files), float64(size)/1e6, sfi.Size()>>10, foldTime.Round(time.Millisecond), time.Since(start).Round(time.Second))
		for _, op := range scaleOps {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHistoryScaleChild$", "-test.v")
			cmd.Env = append(os.Environ(), "LOOPRINTER_HISTORY_CHILD="+op, "LOOPRINTER_HISTORY_STATE="+state)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s at %d: %v\n%s", op, n, err, out)
			}
			var r result
			for _, line := range strings.Split(string(out), "\n") {
				if _, rest, ok := strings.Cut(line, "SCALE "); ok {
					fmt.Sscanf(rest, "%f %f %f", &r.ms, &r.allocMB, &r.rssMB)
				}
			}
			if res[op] == nil {
				res[op] = map[int]result{}
			}
			res[op][n] = r
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| read |")
	for _, n := range sizes {
		fmt.Fprintf(&b, " %d: time | %d: allocated | %d: peak RSS |", n, n, n)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- | --- | --- |", len(sizes)) + "\n")
	for _, op := range scaleOps {
		fmt.Fprintf(&b, "| %s |", op)
		for _, n := range sizes {
			r := res[op][n]
			fmt.Fprintf(&b, " %.1f ms | %.1f MB | %.1f MB |", r.ms, r.allocMB, r.rssMB)
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

// TestHistoryScaleChild is one measurement of TestHistoryScale, in a
// process of its own.
func TestHistoryScaleChild(t *testing.T) {
	op := os.Getenv("LOOPRINTER_HISTORY_CHILD")
	if op == "" {
		t.Skip("run by TestHistoryScale")
	}
	os.Setenv("LOOPRINTER_STATE_DIR", os.Getenv("LOOPRINTER_HISTORY_STATE"))
	if op == "none" {
		fmt.Printf("SCALE 0 0 %.2f\n", peakRSS())
		return
	}
	tk, _, _ := OpenTokens(filepath.Join(t.TempDir(), "t.json"))
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk, Poll: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	var srv *httptest.Server
	do := map[string]func(){
		"page":     func() { get("/loops/history") },
		"api-loop": func() { get("/api/loops/history") },
		"api-cost": func() { get("/api/loops/history/cost") },
		"stream-200": func() {
			if srv == nil {
				srv = httptest.NewServer(s)
			}
			resp, err := srv.Client().Get(srv.URL + "/api/loops/history/records/stream")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for n := 0; n < 200 && sc.Scan(); {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Valid([]byte(data)) {
					n++
				}
			}
		},
		"report-24h": func() { reportSince(t, 24*time.Hour) },
		"report-7d":  func() { reportSince(t, 7*24*time.Hour) },
	}[op]
	if do == nil {
		t.Fatalf("no measurement %q", op)
	}
	do() // warm up
	var ms []float64
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := 0; i < 5; i++ {
		start := time.Now()
		do()
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	runtime.ReadMemStats(&m1)
	sort.Float64s(ms)
	fmt.Printf("SCALE %.2f %.2f %.2f\n", ms[len(ms)/2], float64(m1.TotalAlloc-m0.TotalAlloc)/5/1e6, peakRSS())
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

func reportSince(t *testing.T, d time.Duration) {
	now := time.Now()
	r, err := report.Build(now.Add(-d), now)
	if err != nil || len(r.Loops) != 1 {
		t.Fatalf("report: %v, %+v", err, r)
	}
	_ = r.Text()
}

// peakRSS is this process's peak resident memory in MB (VmHWM: the
// rusage of a child started by fork and exec may count its parent's).
func peakRSS() float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
