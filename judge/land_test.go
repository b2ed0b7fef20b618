package judge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

func TestRunnerStartFallsBackToTheProtectedFiles(t *testing.T) {
	priv := t.TempDir()
	if _, err := RunnerStart(priv); err == nil {
		t.Fatal("no list kept: an error (fail closed)")
	}
	p := loopdir.Private(priv)
	os.WriteFile(p.ProtectedAtStart(), []byte(`["go.mod","a_test.go"]`), 0o600)
	rf, err := RunnerStart(priv)
	if err != nil || !reflect.DeepEqual(rf.Files, []string{"go.mod", "a_test.go"}) {
		t.Fatalf("from the protected files: %v, %v", rf, err)
	}
	data, _ := json.Marshal(guard.RunnerFiles{Files: []string{"go.mod"}, Top: []string{"go.mod"}})
	os.WriteFile(p.RunnerFilesAtStart(), data, 0o600)
	if rf, err = RunnerStart(priv); err != nil || !reflect.DeepEqual(rf.Files, []string{"go.mod"}) || !reflect.DeepEqual(rf.Top, []string{"go.mod"}) {
		t.Fatalf("from the runner files: %v, %v", rf, err)
	}
	os.WriteFile(p.RunnerFilesAtStart(), []byte("{"), 0o600)
	if _, err := RunnerStart(priv); err == nil {
		t.Fatal("a corrupt list: an error")
	}
}

func TestLandFailsClosedWithoutTheLoopsStart(t *testing.T) {
	dir, run := t.TempDir(), t.TempDir()
	l := &spec.Loop{Dir: dir, Verify: []string{"true"}}
	rs, aside, err := Land{Loop: l, RunDir: run, LogDir: filepath.Join(t.TempDir(), "logs"), Prefix: "gate"}.Checks(context.Background())
	if err == nil || rs != nil || aside != nil {
		t.Fatalf("no list of the files the loop started with: the gates must not run (%v, %v, %v)", rs, aside, err)
	}
}
