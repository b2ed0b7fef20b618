package checkcmd

import (
	"reflect"
	"testing"
)

// LocalCompileErrors lists what only the file itself can fix, from go's
// and cargo's genuine output (go 1.26, cargo 1.95), and leaves out type
// errors that writing the code the tests call fixes.
func TestLocalCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want []string
	}{
		{"# example.com/gt/sub\nsub/s_test.go:3:32: expected operand, found '}'\nFAIL\texample.com/gt/sub [setup failed]\n",
			[]string{"sub/s_test.go:3:32: expected operand, found '}'"}},
		{"# example.com/gt [example.com/gt.test]\n./gt_test.go:3:28: declared and not used: x\n../x/y_test.go:2:20: \"os\" imported and not used\nFAIL\n",
			[]string{"gt_test.go:3:28: declared and not used: x", "../x/y_test.go:2:20: \"os\" imported and not used"}},
		{"sub/s.go:3:1: syntax error: unexpected EOF, expected }\n", []string{"sub/s.go:3:1: syntax error: unexpected EOF, expected }"}},
		{"./x_test.go:9:5: undefined: Parse\nFAIL\texample.com/x [build failed]\n", nil},
		{"./x_test.go:9:5: cannot use 1 (untyped int constant) as string value in argument to Parse\n", nil},
		{"   Compiling ct v0.1.0 (/tmp/ct)\nerror: this file contains an unclosed delimiter\n --> tests/lib.rs:3:35\n  |\n",
			[]string{"tests/lib.rs:3:35: this file contains an unclosed delimiter"}},
		{"error: expected one of `,`, `.`, `?`, or an operator, found `;`\n  --> src/lib.rs:10:20\n", []string{"src/lib.rs:10:20: expected one of `,`, `.`, `?`, or an operator, found `;`"}},
		{"error[E0425]: cannot find function `parse` in this scope\n --> tests/lib.rs:3:5\n", nil},
		{"error: could not compile `ct` (test \"lib\") due to 1 previous error\n", nil},
		{"\x1b[1m\x1b[91merror\x1b[0m\x1b[1m: unexpected closing delimiter: `}`\x1b[0m\n \x1b[1m\x1b[94m--> \x1b[0mtests/a.rs:4:1\n", []string{"tests/a.rs:4:1: unexpected closing delimiter: `}`"}},
	} {
		var got []string
		for _, ce := range LocalCompileErrors(tc.out, 1) {
			got = append(got, ce.String())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.out, got, tc.want)
		}
		if LocalCompileErrors(tc.out, 0) != nil {
			t.Errorf("%q: a check that passed built", tc.out)
		}
	}
}
