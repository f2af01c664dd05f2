package server

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/logdex/logdex/query"
)

var jsonStringCases = []string{
	"", "plain ascii", `quote " backslash \ slash /`, "<html> & </html>",
	"ctl \x00\x01\x07\b\f\n\r\t\x1f\x7f", "utf8 ünïcødé 日本語 🙂",
	"bad \xff\xfe utf8 \xc3", "cut \xe6\x97", "seps \u2028 \u2029 \u2027 \u202a",
	"\xed\xa0\x80 surrogate", strings.Repeat("long line ", 1000),
	// Specials at every place of an 8-byte word (the encoder skips safe
	// bytes 8 at a time).
	"abcdefgh<bcdefgh>bcdefgh&bcdefgh\"bcdefgh\\bcdefgh\x1fbcdefgh\x7fbcdefgh\x80",
	"abcdefg\x00abcdef\u00e9abcdefg\x20abcdefgh\u2028abcdefgh",
	// A JSON log line: a character to escape every few bytes.
	`{"ts":"2026-10-10T00:09:11.112Z","level":"error","msg":"a <b> & c\\d","k":""}`,
	// Runes across the 8-byte words, and invalid ones inside a word.
	"abcdef\u00e9\u2029bc\xe2\x80abcdef\xffabcdefg\xf0\x9f\x98\x80z",
	// Past the encoder's 4 KiB pieces: the worst case's room (every byte
	// a 6-byte escape) and runes across a piece's end.
	strings.Repeat("\x01", 9000), strings.Repeat("a\"", 5000), strings.Repeat("x\u00e9", 3000),
	strings.Repeat("\xff", 5000), strings.Repeat("\u2028", 3000) + "tail",
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonStringCases {
		checkJSONString(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCases {
		f.Add(s)
	}
	f.Fuzz(checkJSONString)
}

func checkJSONString(t *testing.T, s string) {
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("string %q:\n got %s\nwant %s", s, got, want)
	}
	if got := appendJSONString([]byte("x"), []byte(s)); !bytes.Equal(got[1:], want) {
		t.Fatalf("bytes %q:\n got %s\nwant %s", s, got[1:], want)
	}
	if _, valid := appendJSONStringValid(nil, []byte(s)); valid != utf8.ValidString(s) {
		t.Fatalf("bytes %q: valid %t, want %t", s, valid, !valid)
	}
}

// TestAppendHitMatchesMarshal holds the hand-written hit encoder to what
// json.Marshal of hitJSON (the documented shape) gives.
func TestAppendHitMatchesMarshal(t *testing.T) {
	long := strings.Repeat("é", maxLineBytes/2) + "tail" // cut inside a rune: base64 too
	cases := []struct {
		name          string
		path, text    string
		hl            [][2]int
		before, after []query.Line
		timed, binary bool
	}{
		{name: "plain", path: "app/api.log", text: "ERROR user=mallory failed", hl: [][2]int{{11, 18}}},
		{name: "no highlights", path: "a.log", text: "x", hl: [][2]int{}},
		{name: "escapes", path: `dir "q"/<a>&b.log`, text: "tab\there \"quoted\" \\ <tag>", hl: [][2]int{{0, 3}, {4, 8}}},
		{name: "invalid utf8", path: "bin.log", text: "bad \xff byte", hl: [][2]int{{0, 3}}},
		{name: "invalid utf8 path", path: "caf\xe9/\xff.log", text: "x", hl: [][2]int{{0, 1}}},
		{name: "long", path: "long.log", text: long, hl: [][2]int{{0, 2}}},
		{name: "context", path: "c.log", text: "hit", hl: [][2]int{{0, 3}},
			before: []query.Line{{No: 1, Text: []byte("one")}, {No: 2, Text: []byte("t\xffwo")}},
			after:  []query.Line{{No: 4, Text: []byte("four <b>")}}},
		{name: "after only", path: "c.log", text: "first", hl: [][2]int{}, after: []query.Line{{No: 2, Text: []byte("")}}},
		{name: "timed", path: "t.log", text: "2026-11-29T14:02:03.5Z x", hl: [][2]int{}, timed: true},
		{name: "binary", path: "wtmp", text: "\x01root", hl: [][2]int{{1, 5}}, binary: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &query.Hit{File: &query.File{ID: 42, Path: c.path}, Line: 3, Offset: 1234, Length: int64(len(c.text)), Text: []byte(c.text),
				Time: 1795874523500000000, Timed: c.timed, Binary: c.binary}
			want, err := json.Marshal(hitStruct(h, c.hl, c.before, c.after))
			if err != nil {
				t.Fatal(err)
			}
			if got := appendHit(nil, h, c.hl, c.before, c.after, time.UTC); !bytes.Equal(got, want) {
				t.Fatalf("\n got %.300s\nwant %.300s", got, want)
			}
		})
	}
}

// BenchmarkJSONLine encodes a JSON log line (a quote every few bytes) and
// a plain one as JSON strings, from bytes and from a string, reporting
// CPU time per line beside wall time.
func BenchmarkJSONLine(b *testing.B) {
	lines := map[string][]byte{
		"jsonl": []byte(`{"ts":"2026-10-10T00:09:11.112Z","ts_ms":1791590951112,"level":"error","service":"inventory","version":"2.14.6","pod":"inventory-xplb94qsmb-cwjc8","node":"ip-10-3-39-114.eu-west-1.compute.internal","trace_id":"6c6af902837e7ea2f8674a00deffc899","span_id":"e7262c97c1340bba","msg":"deadlock detected"}`),
		"plain": []byte(`2026-10-10 00:09:11.112 ERROR [inventory-xplb94qsmb-cwjc8] c.e.inventory.StockService - deadlock detected while reserving sku 48213 for order 99812 (attempt 2 of 3)`),
	}
	for name, line := range lines {
		dst := make([]byte, 0, 8<<10)
		s := string(line)
		for _, enc := range []struct {
			from string
			f    func() []byte
		}{
			{"bytes", func() []byte { return appendJSONString(dst[:0], line) }},
			{"string", func() []byte { return appendJSONString(dst[:0], s) }},
		} {
			b.Run(name+"/"+enc.from, func(b *testing.B) {
				b.SetBytes(int64(len(line)))
				cpu0 := processCPU()
				for b.Loop() {
					dst = enc.f()
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// TestAppendTime holds the UTC fast path to time.RFC3339Nano, over the
// whole range of int64 nanoseconds, around day, leap-year and century
// boundaries, and with and without fractions.
func TestAppendTime(t *testing.T) {
	ts := []int64{0, -1, 1, 999999999, 1e9, -1e9, -1e9 + 1, math.MaxInt64, math.MinInt64, 951782400e9, 951868800e9 - 1, 4107542400e9, 1791590951112000000}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		ts = append(ts, int64(rng.Uint64()), rng.Int64N(4e18)/1e9*1e9, rng.Int64N(4e18)/1e6*1e6)
	}
	for _, ns := range ts {
		want := time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
		if got := string(appendTime(nil, ns, time.UTC)); got != want {
			t.Fatalf("%d: got %s, want %s", ns, got, want)
		}
	}
	tok, err := time.LoadLocation("Asia/Tokyo")
	if err == nil {
		want := time.Unix(0, ts[12]).In(tok).Format(time.RFC3339Nano)
		if got := string(appendTime(nil, ts[12], tok)); got != want {
			t.Fatalf("Tokyo: got %s, want %s", got, want)
		}
	}
}

// TestJSONSpecialAgreesWithJSONSafe holds the word-at-a-time test to the
// byte table: a word whose bytes are all safe but one is marked exactly at
// that byte, for every byte value at every position.
func TestJSONSpecialAgreesWithJSONSafe(t *testing.T) {
	const filler = 'a'
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 8; pos++ {
			var w uint64
			for i := 0; i < 8; i++ {
				c := uint64(filler)
				if i == pos {
					c = uint64(b)
				}
				w |= c << (8 * i)
			}
			marked := jsonSpecial(w) != 0
			if safe := jsonSafe[b] != 0; marked == safe {
				t.Errorf("byte %#02x at %d: jsonSafe %v, jsonSpecial marks %v", b, pos, safe, marked)
			}
			if m := jsonSpecial(w); m != 0 && m&(0xff<<(8*pos)) == 0 {
				t.Errorf("byte %#02x at %d: marked elsewhere (%#x)", b, pos, m)
			}
		}
	}
}
