package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/logdex/logdex/query"
)

// The hand-written encoder (jsonenc.go) stays only while it beats the
// libraries that would replace it. BenchmarkSearchPage renders one page of
// /api/search hits each way; docs/benchmarks.md has the figures:
//
//	go test ./server -run '^$' -bench SearchPage -benchmem -count 6

// pageHit is a hit as searchJSON has it when it renders one: highlights
// already clipped, context lines read.
type pageHit struct {
	h             query.Hit
	hl            [][2]int
	before, after []query.Line
}

// pageEncoder appends a page's hits, comma-separated, as /api/search sends
// them inside "hits":[...].
type pageEncoder struct {
	name      string
	sameBytes bool // as the hand-written encoder, else the same JSON value
	encode    func(dst []byte, hits []pageHit) ([]byte, error)
}

// pageEncoders are the ways to render a page. encoding/json gives the
// same bytes as the hand-written encoder; go-json-experiment (even with
// its v1 options) writes U+FFFD for invalid UTF-8 as is rather than as
// \ufffd: the same JSON value, not the same bytes (TestPageEncodersAgree).
var pageEncoders = []pageEncoder{
	{"hand", true, encodePageHand},
	{"encoding-json", true, marshalEach(json.Marshal)},
	{"go-json-experiment-v1opts", false, marshalEach(func(v any) ([]byte, error) { return jsonv2.Marshal(v, jsonv1.DefaultOptionsV1()) })},
	{"go-json-experiment", false, marshalEach(func(v any) ([]byte, error) { return jsonv2.Marshal(v, v2Shape) })},
}

// v2Shape are the options under which go-json-experiment writes the
// documented shape: by default it rejects invalid UTF-8, leaves <>& and
// U+2028 unescaped, writes nil slices as [] and omits only empty JSON
// values (not false) for omitempty.
var v2Shape = jsonv2.JoinOptions(
	jsontext.AllowInvalidUTF8(true),
	jsontext.EscapeForHTML(true),
	jsontext.EscapeForJS(true),
	jsonv2.FormatNilSliceAsNull(true),
	jsonv1.OmitEmptyWithLegacySemantics(true),
)

// encodePageHand is what searchJSON does: each hit into a scratch buffer,
// then copied to the response buffer.
func encodePageHand(dst []byte, hits []pageHit) ([]byte, error) {
	var scratch []byte
	for i := range hits {
		if i > 0 {
			dst = append(dst, ',')
		}
		p := &hits[i]
		scratch = appendHit(scratch[:0], &p.h, p.hl, p.before, p.after, time.UTC)
		dst = append(dst, scratch...)
	}
	return dst, nil
}

// marshalEach is the library way: build the documented hitJSON of each
// hit (the string copies and base64 included) and marshal it. Hits are
// marshalled one by one because the response streams them as they come.
func marshalEach(marshal func(any) ([]byte, error)) func([]byte, []pageHit) ([]byte, error) {
	return func(dst []byte, hits []pageHit) ([]byte, error) {
		for i := range hits {
			if i > 0 {
				dst = append(dst, ',')
			}
			p := &hits[i]
			b, err := marshal(hitStruct(&p.h, p.hl, p.before, p.after))
			if err != nil {
				return dst, err
			}
			dst = append(dst, b...)
		}
		return dst, nil
	}
}

// hitStruct builds the documented shape of a hit.
func hitStruct(h *query.Hit, hl [][2]int, before, after []query.Line) hitJSON {
	hj := hitJSON{FileID: h.File.ID, Path: h.File.Path, PathB64: pathB64(h.File.Path), Line: h.Line, Offset: h.Offset, Length: h.Length, Binary: h.Binary, Highlights: hl}
	if h.Timed {
		hj.Time = time.Unix(0, h.Time).UTC().Format(time.RFC3339Nano)
	}
	hj.Text, hj.TextB64, hj.Truncated = lineText(h.Text)
	hj.Before, hj.After = lineStructs(before), lineStructs(after)
	return hj
}

func lineStructs(ls []query.Line) []lineJSON {
	var out []lineJSON
	for _, l := range ls {
		lj := lineJSON{Line: l.No}
		lj.Text, lj.TextB64, lj.Truncated = lineText(l.Text)
		out = append(out, lj)
	}
	return out
}

// benchLogLine returns a log line of 150-300 bytes in one of the shapes
// search results show: access logs (quotes, &), Java stack frames (tabs),
// JSON payloads (quotes, backslashes), non-ASCII messages, markup, and
// now and then a byte that is not UTF-8 (sent in base64 too).
func benchLogLine(r *rand.Rand) string {
	var s string
	switch r.IntN(10) {
	case 0, 1, 2:
		s = fmt.Sprintf(`10.%d.%d.%d - - [14/Mar/2024:10:%02d:%02d +0000] "GET /api/v2/users?id=%d&expand=roles HTTP/1.1" %d %d "-" "Mozilla/5.0 (X11; Linux x86_64)"`,
			r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(60), r.IntN(60), r.IntN(1e6), 200+r.IntN(4)*100, r.IntN(1e5))
	case 3, 4:
		s = fmt.Sprintf("2024-03-14 10:%02d:%02d,%03d ERROR [DataXceiver-%d] dfs.DataNode: IOException in block blk_%d\tat org.apache.hadoop.hdfs.server.datanode.BlockReceiver.receivePacket(BlockReceiver.java:%d)",
			r.IntN(60), r.IntN(60), r.IntN(1000), r.IntN(64), r.Int64(), r.IntN(2000))
	case 5:
		s = fmt.Sprintf(`{"ts":"2024-03-14T10:%02d:%02dZ","level":"warn","msg":"upstream \"auth\" slow","path":"C:\\srv\\auth\\%d.cfg","latency_ms":%d}`,
			r.IntN(60), r.IntN(60), r.IntN(100), r.IntN(5000))
	case 6:
		s = fmt.Sprintf("Mar 14 10:%02d:%02d node-%d app[%d]: Benutzer müller: Anmeldung fehlgeschlagen — 用户登录失败 (ошибка %d)",
			r.IntN(60), r.IntN(60), r.IntN(32), r.IntN(1e5), r.IntN(100))
	case 7:
		s = fmt.Sprintf(`2024-03-14 10:%02d:%02d WARN render: template <div class="user">%d</div> & <script> stripped`, r.IntN(60), r.IntN(60), r.IntN(1e4))
	case 8:
		s = fmt.Sprintf("2024-03-14 10:%02d:%02d INFO session %x opened for user root by (uid=0) pid %d", r.IntN(60), r.IntN(60), r.Uint64(), r.IntN(1e5))
	default:
		s = fmt.Sprintf("2024-03-14 10:%02d:%02d DEBUG raw frame \xff\xfe from device %d: len=%d", r.IntN(60), r.IntN(60), r.IntN(64), r.IntN(1500))
	}
	keys := []string{"rid", "user", "node", "shard", "attempt", "trace"}
	for want := 150 + r.IntN(151); len(s) < want; {
		s += fmt.Sprintf(" %s=%x", keys[r.IntN(len(keys))], r.Uint32())
	}
	return s
}

// benchPage returns 100 hits as a search would deliver them, each with
// ctx lines of context before and after.
func benchPage(ctx int) []pageHit {
	r := rand.New(rand.NewPCG(1, 2))
	files := make([]*query.File, 8)
	for i := range files {
		files[i] = &query.File{ID: uint64(1000 + i*37), Path: fmt.Sprintf("/var/log/%s/%s-%d.log", []string{"nginx", "hdfs", "app"}[i%3], []string{"access", "datanode", "api"}[i%3], i)}
	}
	hits := make([]pageHit, 100)
	for i := range hits {
		text := benchLogLine(r)
		no := int64(1 + r.IntN(5e6))
		h := query.Hit{File: files[i*len(files)/len(hits)], Line: no, Offset: no * 180, Length: int64(len(text)), Text: []byte(text)}
		hl := [][2]int{}
		for range 1 + r.IntN(3) {
			at := r.IntN(len(text) - 20)
			hl = append(hl, [2]int{at, at + 3 + r.IntN(15)})
		}
		p := pageHit{h: h, hl: hl}
		for k := ctx; k > 0; k-- {
			p.before = append(p.before, query.Line{No: no - int64(k), Text: []byte(benchLogLine(r))})
		}
		for k := 1; k <= ctx; k++ {
			p.after = append(p.after, query.Line{No: no + int64(k), Text: []byte(benchLogLine(r))})
		}
		hits[i] = p
	}
	return hits
}

var benchPages = []struct {
	name string
	ctx  int
}{{"plain", 0}, {"context2", 2}}

func BenchmarkSearchPage(b *testing.B) {
	for _, pg := range benchPages {
		hits := benchPage(pg.ctx)
		for _, enc := range pageEncoders {
			b.Run(fmt.Sprintf("page=%s/enc=%s", pg.name, enc.name), func(b *testing.B) {
				b.ReportAllocs()
				var dst []byte
				cpu := processCPU()
				for b.Loop() {
					var err error
					if dst, err = enc.encode(dst[:0], hits); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
				b.SetBytes(int64(len(dst))) // output bytes: MB/s is the encoding rate
			})
		}
	}
}

// TestPageEncodersAgree holds the benchmark honest: every encoder writes
// the same bytes as the hand-written one for the benchmark's pages, and
// those bytes are valid JSON.
func TestPageEncodersAgree(t *testing.T) {
	for _, pg := range benchPages {
		hits := benchPage(pg.ctx)
		want, _ := encodePageHand(nil, hits)
		if !json.Valid(append(append([]byte{'['}, want...), ']')) {
			t.Fatalf("%s: hand-written page is not valid JSON", pg.name)
		}
		if !bytes.Contains(want, []byte(`"text_b64"`)) || !bytes.Contains(want, []byte(`\u003c`)) || !strings.Contains(string(want), "用户") {
			t.Fatalf("%s: page lacks base64, escapes or non-ASCII text", pg.name)
		}
		var wantHits []hitJSON
		if err := json.Unmarshal(append(append([]byte{'['}, want...), ']'), &wantHits); err != nil {
			t.Fatal(err)
		}
		for _, enc := range pageEncoders[1:] {
			got, err := enc.encode(nil, hits)
			if err != nil {
				t.Fatalf("%s %s: %v", pg.name, enc.name, err)
			}
			if !enc.sameBytes {
				var gotHits []hitJSON
				if err := json.Unmarshal(append(append([]byte{'['}, got...), ']'), &gotHits); err != nil || !reflect.DeepEqual(gotHits, wantHits) {
					t.Fatalf("%s %s: not the same JSON value (%v)", pg.name, enc.name, err)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("%s %s differs at byte %d:\n got %.120s\nwant %.120s", pg.name, enc.name, i, got[i:], want[i:])
			}
		}
	}
}

// processCPU is the CPU time of this process so far. Benchmarks report it
// per operation (cpu-ns/op) beside the wall time: on a machine shared
// with other jobs the wall time also counts the time the benchmark waited
// for a core, its CPU time far less. It includes the garbage collector's
// work on other threads, which the allocating alternatives cause.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
