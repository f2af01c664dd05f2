package query

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// TestEdgeCases: crafted files that break naive line handling, each
// pattern answered exactly as grep answers it.
func TestEdgeCases(t *testing.T) {
	needGrep(t)
	root := filepath.Join(t.TempDir(), "edge")
	os.MkdirAll(root, 0o755)
	// Lines longer than a scan buffer (one of 1¼ buffers, one of 2½): the
	// buffer must grow. (Not larger: under the race detector every byte
	// searched costs, 26 s for this test with 1 and 2 MiB lines.)
	mb := strings.Repeat("0123456789abcdef", scanBuf*5/4/16)
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
		mode lang.Mode
		fold bool
		pat  string
	}{
		{lang.ModeLiteral, false, "first"},
		{lang.ModeLiteral, false, "a\r"},
		{lang.ModeLiteral, false, "\r"},
		{lang.ModeLiteral, false, "end"},
		{lang.ModeLiteral, false, "without newline"},
		{lang.ModeLiteral, false, "partial"},
		{lang.ModeLiteral, false, "needle"},
		{lang.ModeLiteral, false, "cdef0123"},
		{lang.ModeLiteral, false, "f needle-in"},
		{lang.ModeLiteral, false, "\xff\xfe"},
		{lang.ModeLiteral, false, "\xc3 by"},
		{lang.ModeLiteral, false, "\xa9 "},
		{lang.ModeLiteral, false, "caf\xc3"},
		{lang.ModeLiteral, false, "mid\xe2"},
		{lang.ModeLiteral, false, "\x82word"},
		{lang.ModeLiteral, false, "\x1b[31m"},
		{lang.ModeLiteral, false, "\x7f"},
		{lang.ModeLiteral, false, "\t"},
		{lang.ModeLiteral, true, "ALPHA"},
		{lang.ModeLiteral, true, "jOSÉ"},
		{lang.ModeLiteral, false, "Σίσυ"},
		{lang.ModeLiteral, false, "ίσυφ"},
		{lang.ModeRegex, false, "^$"},
		{lang.ModeRegex, false, "^first$"},
		{lang.ModeRegex, false, "end\r$"},
		{lang.ModeRegex, false, "beta.$"},
		{lang.ModeRegex, false, "needle$"},
		{lang.ModeRegex, false, "^[0-9a-f]{64}"},
		{lang.ModeRegex, false, "ansi$"},
		{lang.ModeRegex, false, "tab\there"},
		{lang.ModeRegex, false, "s(ign|top)"},
		{lang.ModeRegex, true, "DELTA"},
		{lang.ModeLiteral, false, "10.1.2.3"},
		{lang.ModeLiteral, false, "0.1.2.3"},
		{lang.ModeLiteral, false, " 10.1.2.3 "},
		{lang.ModeLiteral, false, "1.2."},
		{lang.ModeLiteral, false, "2..3"},
		{lang.ModeRegex, false, `10\.1\.2\.3`},
	}
	for _, tc := range cases {
		q, err := Compile([]string{tc.pat}, tc.mode, tc.fold)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		got, _ := search(t, s, q, Options{})
		flags := "-F"
		if tc.mode == lang.ModeRegex {
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
	// Words in the query language on the same files (reference lines read
	// once: they cache their tokens).
	ref := refLines(t, root)
	for _, qs := range []string{"0*", "97", "1*", "10*", "first", "needle", "KELVIN k", "stop", "josé", "café", "σίσυφος", "in long", "0123456789abcdef*"} {
		q, err := Compile([]string{qs}, lang.ModeQuery, true)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := search(t, s, q, Options{})
		var want []gotLine
		for li := range ref {
			if l := &ref[li]; refEval(q.root, l) {
				want = append(want, gotLine{l.path, l.no, string(l.text)})
			}
		}
		if err := diffLines(got, want); err != nil {
			t.Errorf("query %q: %v", qs, err)
		}
	}
}
