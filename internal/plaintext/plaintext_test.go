package plaintext

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\x1b[31mFAIL\x1b[0m build", "FAIL build"},
		{"\x1b]0;title\x07done\r\n", "done\n"},
		{"bell\a and \x1b[2K\rline", "bell and line"},
		{"plain\ttext\n", "plain\ttext\n"},
		{"fix \x1b[2J\x1b[Hthe parser", "fix the parser"},
	} {
		if got := Of(tc.in); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
