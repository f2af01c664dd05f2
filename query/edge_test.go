package query

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEdgeCases: crafted files that break naive line handling, each
// pattern answered exactly as grep answers it.
func TestEdgeCases(t *testing.T) {
	needGrep(t)
	root := filepath.Join(t.TempDir(), "edge")
	os.MkdirAll(root, 0o755)
	mb := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	files := map[string]string{
		"empty-lines.log": "\n\nfirst\n\n\nsecond\n\n",
		"crlf.log":        "alpha beta\r\ngamma\r\n\r\ndelta end\r\n",
		"no-newline.log":  "one\ntwo\nthree without newline",
		"only-partial":    "partial line only",
		"empty.log":       "",
		"long.log":        "before\n" + mb + " needle-in-long\n" + mb + mb + "\nafter needle\n",
		"invalid-utf8.log": "ok line\n\xff\xfe broken \xc3 bytes\nmid\xe2\x82word\n" +
			"José caf\xc3\xa9 \xed\xa0\x80surrogate\n",
		"binaryish.log": "\x01\x02\x03 ctrl \x7f del\n\x1b[31mred\x1b[0m ansi\ntab\there\n",
		"unicode.log":   "KELVIN \u212a sign\nſtop long s\nİstanbul\nΣίσυφος\n",
		"dots.log":      "kernel v0.97 (c)\nip 10.1.2.3 up\nhost 110.1.2.30\nversion 1.2..3.\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 1<<20, root)
	cases := []struct {
		mode Mode
		fold bool
		pat  string
	}{
		{ModeLiteral, false, "first"},
		{ModeLiteral, false, "a\r"},
		{ModeLiteral, false, "\r"},
		{ModeLiteral, false, "end"},
		{ModeLiteral, false, "without newline"},
		{ModeLiteral, false, "partial"},
		{ModeLiteral, false, "needle"},
		{ModeLiteral, false, "cdef0123"},
		{ModeLiteral, false, "f needle-in"},
		{ModeLiteral, false, "\xff\xfe"},
		{ModeLiteral, false, "\xc3 by"},
		{ModeLiteral, false, "\xa9 "},
		{ModeLiteral, false, "caf\xc3"},
		{ModeLiteral, false, "mid\xe2"},
		{ModeLiteral, false, "\x82word"},
		{ModeLiteral, false, "\x1b[31m"},
		{ModeLiteral, false, "\x7f"},
		{ModeLiteral, false, "\t"},
		{ModeLiteral, true, "ALPHA"},
		{ModeLiteral, true, "jOSÉ"},
		{ModeLiteral, false, "Σίσυ"},
		{ModeLiteral, false, "ίσυφ"},
		{ModeRegex, false, "^$"},
		{ModeRegex, false, "^first$"},
		{ModeRegex, false, "end\r$"},
		{ModeRegex, false, "beta.$"},
		{ModeRegex, false, "needle$"},
		{ModeRegex, false, "^[0-9a-f]{64}"},
		{ModeRegex, false, "ansi$"},
		{ModeRegex, false, "tab\there"},
		{ModeRegex, false, "s(ign|top)"},
		{ModeRegex, true, "DELTA"},
		{ModeLiteral, false, "10.1.2.3"},
		{ModeLiteral, false, "0.1.2.3"},
		{ModeLiteral, false, " 10.1.2.3 "},
		{ModeLiteral, false, "1.2."},
		{ModeLiteral, false, "2..3"},
		{ModeRegex, false, `10\.1\.2\.3`},
	}
	for _, tc := range cases {
		q, err := Compile([]string{tc.pat}, tc.mode, tc.fold)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		got, _ := search(t, s, q, Options{})
		flags := "-F"
		if tc.mode == ModeRegex {
			flags = "-E"
		}
		if tc.fold {
			flags += "i"
		}
		want := grepLines(t, []string{flags, "-e", tc.pat}, []string{root})
		if err := diffLines(got, want); err != nil {
			t.Errorf("%s %q: %v", flags, tc.pat, err)
		}
		// The same without reading text: offsets and line numbers agree.
		var nums []gotLine
		st, err := s.Search(t.Context(), q, Options{}, func(h *Hit) error {
			nums = append(nums, gotLine{h.File.Path, h.Line, ""})
			return nil
		})
		if err != nil || int(st.Total) != len(want) || len(nums) != len(want) {
			t.Errorf("%s %q without text: %d hits (total %d), want %d", flags, tc.pat, len(nums), st.Total, len(want))
		}
	}
	// Words in the query language on the same files.
	for _, qs := range []string{"0*", "97", "1*", "10*", "first", "needle", "KELVIN k", "stop", "josé", "café", "σίσυφος", "in long", "0123456789abcdef*"} {
		q, err := Compile([]string{qs}, ModeQuery, true)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := search(t, s, q, Options{})
		var want []gotLine
		for li, l := range refLines(t, root) {
			_ = li
			if refEval(q.Root, &l) {
				want = append(want, gotLine{l.path, l.no, string(l.text)})
			}
		}
		if err := diffLines(got, want); err != nil {
			t.Errorf("query %q: %v", qs, err)
		}
	}
}
