package server

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a temp copy of fixtures/logs with its index.
type fixture struct {
	logs  string // root of the copied logs
	index string
}

// newFixture copies the committed sample tree and indexes it.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	tmp := t.TempDir()
	fx := &fixture{logs: filepath.Join(tmp, "logs"), index: filepath.Join(tmp, "index")}
	copyTree(t, "../fixtures/logs", fx.logs)
	fx.reindex(t)
	return fx
}

func (fx *fixture) reindex(t testing.TB) *indexer.Result {
	t.Helper()
	res, err := indexer.Update(context.Background(), indexer.Options{Dir: fx.index, Roots: []string{fx.logs}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (fx *fixture) reindexFunc() func(context.Context, *mmapstore.Index) (ReindexResult, error) {
	return func(ctx context.Context, open *mmapstore.Index) (ReindexResult, error) {
		res, err := indexer.Update(ctx, indexer.Options{Dir: fx.index, Roots: []string{fx.logs}, Logger: zerolog.Nop(), Open: open})
		if err != nil {
			return ReindexResult{}, err
		}
		return ReindexResult{Changed: res.Changed, Summary: "test"}, nil
	}
}

// liveFuncs are serve's Reindex and Merge: live runs that leave merging
// to the background merger, with segments of segBytes of logs; merged
// counts the segments merged.
func (fx *fixture) liveFuncs(segBytes int64, merged *atomic.Int64) (reindex func(context.Context, *mmapstore.Index) (ReindexResult, error), merge func(context.Context) (ReindexResult, error)) {
	reindex = func(ctx context.Context, open *mmapstore.Index) (ReindexResult, error) {
		res, err := indexer.Update(ctx, indexer.Options{Dir: fx.index, Roots: []string{fx.logs}, SegmentBytes: segBytes, MergeLater: true, Logger: zerolog.Nop(), Open: open})
		if err != nil {
			return ReindexResult{}, err
		}
		return ReindexResult{Changed: res.Changed, Summary: "test", MergeDue: res.MergeDue}, nil
	}
	merge = func(ctx context.Context) (ReindexResult, error) {
		res, err := indexer.Merge(ctx, indexer.Options{Dir: fx.index, SegmentBytes: segBytes, Logger: zerolog.Nop()})
		if err != nil {
			return ReindexResult{}, err
		}
		merged.Add(int64(res.Merged))
		return ReindexResult{Changed: res.Changed, Summary: "merged"}, nil
	}
	return reindex, merge
}

// serving makes a server of opt, opens its index and serves it on a
// loopback port; it returns the server and its base URL.
func serving(t *testing.T, opt Options) (*Server, string) {
	t.Helper()
	s, err := New(opt)
	must(t, err)
	_, err = s.Reload()
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go s.Serve(ln)
	return s, "http://" + ln.Addr().String()
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testServer runs a Server over fx behind httptest.
type testServer struct {
	*Server
	ts *httptest.Server
	fx *fixture
}

func newTestServer(t testing.TB, fx *fixture, opts ...func(*Options)) *testServer {
	t.Helper()
	opt := Options{IndexDir: fx.index, Display: []string{"logs"}, Logger: zerolog.Nop()}
	for _, f := range opts {
		f(&opt)
	}
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	// A raw answer switches to streaming after rawBufferTime; on a loaded
	// machine a small answer would cross it and lose the headers tests
	// check. Tests that want streaming lower rawBuffer.ranges.
	s.rawBuffer.wait = time.Hour
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return &testServer{Server: s, ts: ts, fx: fx}
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

func (r *response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// get requests path (with query) and reads the whole answer.
func (ts *testServer) get(t testing.TB, path string, header ...string) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, ts.ts.Client(), req)
}

func do(t testing.TB, c *http.Client, req *http.Request) *response {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read body: %v", req.URL, err)
	}
	return &response{code: resp.StatusCode, header: resp.Header, body: b}
}

// searchResp mirrors /api/search's body.
type searchResp struct {
	Query      string `json:"query"`
	Mode       string `json:"mode"`
	Case       string `json:"case"`
	Total      int64  `json:"total"`
	TotalExact *bool  `json:"total_exact"`
	TookMS     float64
	Hits       []hitJSON `json:"hits"`
	NextCursor *string   `json:"next_cursor"`
	Stats      struct {
		Candidates, Verified, Segments int64
	} `json:"stats"`
	Warnings []string `json:"warnings"`
}

func (ts *testServer) search(t testing.TB, params string) *searchResp {
	t.Helper()
	r := ts.get(t, "/api/search?"+params)
	if r.code != http.StatusOK {
		t.Fatalf("search %s: %d %s", params, r.code, r.body)
	}
	var sr searchResp
	r.json(t, &sr)
	return &sr
}

// fileBytes reads a fixture file by display path ("logs/...").
func (fx *fixture) fileBytes(t testing.TB, display string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.logs, strings.TrimPrefix(display, "logs/")))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type httptestServer = httptest.Server

var newHTTPTestServer = httptest.NewServer

// mapFS builds an in-memory UI.
func mapFS(files map[string]string) fs.FS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}
