package judge

import (
	"strings"
	"testing"
)

const libRS = `pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64 // a '}' in a comment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_of_two() {
        let s = "}}";
        assert_eq!(1.0, mean(&[0.5, 1.5]));
    }
}
`

// The inline test module's span is protected; the rest of the file is
// not; a file without one, or of another language, has none.
func TestInlineTestsChanged(t *testing.T) {
	spans := InlineTestSpans("src/lib.rs", []byte(libRS))
	if len(spans) != 1 || !strings.HasPrefix(libRS[spans[0][0]:], "#[cfg(test)]") || spans[0][1] != len(libRS)-1 {
		t.Fatalf("spans %v", spans)
	}
	fix := strings.Replace(libRS, "xs.iter().sum::<f64>() / xs.len() as f64", "if xs.is_empty() { return 0.0 }\n    xs.iter().sum::<f64>() / xs.len() as f64", 1)
	if n := InlineTestsChanged("src/lib.rs", []byte(libRS), []byte(fix)); n != "" {
		t.Errorf("a change outside the test module: %s", n)
	}
	gamed := strings.Replace(fix, "assert_eq!(1.0,", "assert_eq!(0.0,", 1)
	if n := InlineTestsChanged("src/lib.rs", []byte(libRS), []byte(gamed)); !strings.Contains(n, "edits_inline_tests") || !strings.HasPrefix(n, "6:1:") {
		t.Errorf("an edit of the test module: %q", n)
	}
	gone := libRS[:spans[0][0]]
	if n := InlineTestsChanged("src/lib.rs", []byte(libRS), []byte(gone)); !strings.Contains(n, "is gone") {
		t.Errorf("a removed test module: %q", n)
	}
	if n := InlineTestsChanged("src/lib.rs", []byte("fn a() {}\n"), []byte(gamed)); n != "" {
		t.Errorf("a new test module: %q", n)
	}
	if InlineTestSpans("lib.go", []byte(libRS)) != nil {
		t.Error("a Go file has no Rust test module")
	}
}

// addedLines: the lines of the new text the old one does not hold as
// many times (moved lines are not added; a repeated line is).
func TestAddedLines(t *testing.T) {
	got := addedLines("a\nb\nc\n", "b\na\nx\nc\nc\n")
	if len(got) != 2 || got[0] != 3 || got[1] != 5 {
		t.Fatalf("addedLines = %v, want [3 5]", got)
	}
	if got := addedLines("", "x\n"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("a new file: %v", got)
	}
}
