package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/histgen"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// No request reads the records without bound or panics, however far back
// it asks: n past the most one read takes is refused, /records without n
// is the last page (with the cursor of the one before), the stream's
// backlog after ?after= or Last-Event-ID is at most maxRecordsN records
// and says how many it leaves out. Before, each of these read back past
// 1.5 MB of one record file and panicked (makeslice: len out of range).
func TestRecordReadsBounded(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := histgen.Write(dir, histgen.Options{Name: "big", Iterations: 3000, PerFile: 5000}); err != nil {
		t.Fatal(err)
	}
	d := loopdir.Dir(dir)
	files, _ := d.RecordFiles()
	var biggest int64
	for _, f := range files {
		fi, _ := os.Stat(f)
		biggest = max(biggest, fi.Size())
	}
	if biggest < 3<<20 {
		t.Fatalf("the largest record file is %d bytes", biggest)
	}
	all, _ := d.ReadRecordsInOrder()
	tk, _, _ := OpenTokens(t.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		return rec
	}
	records := func(rec *httptest.ResponseRecorder) []record.Event {
		var evs []record.Event
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &evs) != nil {
			t.Fatalf("%d %.300s", rec.Code, rec.Body)
		}
		return evs
	}
	if rec := get("/api/loops/big/records?n=6000"); rec.Code != 400 || !strings.Contains(rec.Body.String(), "from 1 to 2000") {
		t.Fatalf("n=6000: %d %.300s", rec.Code, rec.Body)
	}
	if evs := records(get("/api/loops/big/records?n=2000")); len(evs) != 2000 || !evs[0].TS.Equal(all[len(all)-2000].TS) {
		t.Fatalf("n=2000: %d records", len(evs))
	}
	// Without n: the last page, then the pages before it by cursor,
	// back to the first record.
	rec := get("/api/loops/big/records")
	seen := len(records(rec))
	if seen != pageRecords {
		t.Fatalf("without n: %d records, want a page of %d", seen, pageRecords)
	}
	for cur := rec.Header().Get("X-Older-Cursor"); cur != ""; {
		rec = get("/api/loops/big/records?before=" + cur)
		page := records(rec)
		if len(page) == 0 {
			break
		}
		if len(page) > pageRecords {
			t.Fatalf("a page of %d", len(page))
		}
		seen += len(page)
		cur = rec.Header().Get("X-Older-Cursor")
	}
	if seen != len(all) {
		t.Fatalf("the pages hold %d records, the loop %d", seen, len(all))
	}
	// A cursor past a file's end, or at its very start, reads no more
	// than a page.
	last := files[len(files)-1]
	for _, off := range []int64{0, 1, biggest, biggest + 1, 1 << 62} {
		c := strconv.FormatInt(all[len(all)-1].TS.UnixNano(), 10) + "." + filepathBase(last) + "." + strconv.FormatInt(off, 10)
		if evs := records(get("/api/loops/big/records?n=2000&before=" + c)); len(evs) > 2000 {
			t.Fatalf("cursor at %d: %d records", off, len(evs))
		}
	}

	srv := httptest.NewServer(s)
	defer srv.Close()
	total := len(all)
	for _, tc := range []struct {
		query, lastID string
		want          int
		gap           bool
	}{
		{"?after=0", "", maxRecordsN, true},
		{"", "1", maxRecordsN, true},
		{"?n=6000", "", maxRecordsN, false},
		{"?after=" + strconv.Itoa(total-1500), "", 1500, false},
		{"?after=" + strconv.Itoa(total+50), "", 0, false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/loops/big/records/stream"+tc.query, nil)
		if tc.lastID != "" {
			req.Header.Set("Last-Event-ID", tc.lastID)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ids []int
		gap := false
		for len(ids) < tc.want && sc.Scan() {
			line := sc.Text()
			gap = gap || line == "event: gap"
			if id, ok := strings.CutPrefix(line, "id: "); ok {
				n, _ := strconv.Atoi(id)
				ids = append(ids, n)
			}
		}
		if tc.want == 0 {
			// Nothing is due: the stream waits for new records.
			go func() { time.Sleep(300 * time.Millisecond); cancel() }()
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "id: ") {
					t.Errorf("%s: sent %s", tc.query, sc.Text())
				}
			}
		}
		cancel()
		resp.Body.Close()
		if resp.StatusCode != 200 || len(ids) != tc.want || gap != tc.gap {
			t.Fatalf("%s %s: %d, %d records, gap %v", tc.query, tc.lastID, resp.StatusCode, len(ids), gap)
		}
		if tc.want > 0 && (ids[0] != total-tc.want+1 || ids[len(ids)-1] != total) {
			t.Fatalf("%s: ids %d..%d, want %d..%d", tc.query, ids[0], ids[len(ids)-1], total-tc.want+1, total)
		}
	}
}

func filepathBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
