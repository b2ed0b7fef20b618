package judge

import "testing"

func TestSignatureIgnoresNoise(t *testing.T) {
	a := "--- FAIL: TestParse (0.02s)\n    parse_test.go:12: at 2026-11-30T01:02:03Z in /tmp/go-build123/x pid 4411 addr 0xc000123456 took 35ms"
	b := "--- FAIL: TestParse (1.90s)\n    parse_test.go:12: at 2026-12-01T09:08:07Z in /tmp/go-build999/y pid 17 addr 0xc000ffffff took 2s"
	if Signature(a) != Signature(b) {
		t.Errorf("same failure, different signatures:\n%s\n%s", Normalize(a), Normalize(b))
	}
	c := "--- FAIL: TestParse (0.02s)\n    parse_test.go:13: want 3, got 4"
	if Signature(a) == Signature(c) {
		t.Error("different failures share a signature")
	}
}
