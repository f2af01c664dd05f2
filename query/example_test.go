package query_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// Example indexes a directory of logs, opens the index and pages through
// the hits of a query two at a time with a cursor, reading each hit's
// text.
func Example() {
	logs, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(logs)
	os.WriteFile(filepath.Join(logs, "api.log"), []byte(
		"10:00:01 INFO request ok\n"+
			"10:00:02 ERROR db timeout after 30s\n"+
			"10:00:03 INFO request ok\n"+
			"10:00:04 ERROR upstream timeout\n"), 0o644)
	os.WriteFile(filepath.Join(logs, "worker.log"), []byte(
		"10:00:05 WARN retrying job 7 after timeout\n"), 0o644)

	// Index the directory (the index lives apart from the logs).
	dir, _ := os.MkdirTemp("", "index")
	defer os.RemoveAll(dir)
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{logs}, Logger: zerolog.Nop()}); err != nil {
		log.Fatal(err)
	}

	// Open a snapshot of it and search, printing paths relative to "logs".
	ix, err := mmapstore.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	s := query.NewSearcher(ix, []string{"logs"})
	defer s.Close()
	q, err := query.Compile([]string{"timeout"}, lang.ModeQuery, true)
	if err != nil {
		log.Fatal(err)
	}
	var after *query.Cursor
	for page := 1; ; page++ {
		var last query.Cursor
		st, err := s.Search(context.Background(), q, query.Options{Limit: 2, After: after, Text: true, CountAll: true},
			func(h *query.Hit) error {
				fmt.Printf("page %d: %s:%d: %s\n", page, h.File.Path, h.Line, h.Text)
				last = query.Cursor{Path: h.File.Path, Line: h.Line}
				return nil
			})
		if err != nil {
			log.Fatal(err)
		}
		if !st.Truncated {
			break
		}
		after = &last
	}
	// Output:
	// page 1: logs/api.log:2: 10:00:02 ERROR db timeout after 30s
	// page 1: logs/api.log:4: 10:00:04 ERROR upstream timeout
	// page 2: logs/worker.log:1: 10:00:05 WARN retrying job 7 after timeout
}

// ExampleCompile shows the three ways a query text is read.
func ExampleCompile() {
	for _, c := range []struct {
		mode lang.Mode
		text string
	}{
		{lang.ModeQuery, `"db timeout" OR upstream*`},
		{lang.ModeLiteral, "timeout after"},
		{lang.ModeRegex, "ERROR .* timeout$"},
	} {
		q, err := query.Compile([]string{c.text}, c.mode, false)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.mode, q, q.MatchLine([]byte("10:00:02 ERROR db timeout after 30s")))
	}
	// Output:
	// query ("db timeout" OR upstream*) true
	// literal 'timeout after' true
	// regex /ERROR .* timeout$/ false
}
