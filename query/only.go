package query

import (
	"errors"
	"regexp"
	"strings"

	"github.com/logdex/logdex/query/internal/scan"
	"github.com/logdex/logdex/query/lang"
)

// OnlyMatching returns what grep -o prints of a matching line: the
// non-empty, non-overlapping, leftmost-longest matches of the query's
// patterns (over all of them at once), as [start, end) byte ranges
// appended to dst. Lines holding a byte >= 0x80 are matched byte-wise,
// widened, as grep in the C locale reads them. Only -F, -E, -G and
// --re2 patterns have such matches.
func (q *Query) OnlyMatching() (func(dst [][2]int, line []byte) [][2]int, error) {
	var exprs []string
	var walk func(n lang.Node) error
	walk = func(n lang.Node) error {
		switch n := n.(type) {
		case *lang.Or:
			for _, k := range n.Kids {
				if err := walk(k); err != nil {
					return err
				}
			}
		case *lang.Literal:
			e, _ := n.GoExpr()
			exprs = append(exprs, e)
		case *lang.Not:
			if n == q.root {
				return walk(n.Kid) // grep -ov: the parts its other lines match
			}
			return errOnlyQuery
		case *lang.Regex:
			if n.WordEdges() {
				return errors.New(`unsupported: \< or \> with -o`)
			}
			exprs = append(exprs, n.Go)
		default:
			return errOnlyQuery
		}
		return nil
	}
	if err := walk(q.root); err != nil {
		return nil, err
	}
	re, err := regexp.Compile("(?:" + strings.Join(exprs, ")|(?:") + ")")
	if err != nil {
		return nil, err
	}
	re.Longest() // POSIX's leftmost-longest, as grep
	// A line holding a byte >= 0x80 is matched widened (an ASCII pattern
	// that cannot match such a byte matches the same there); not in
	// --re2, Go's own syntax, which reads UTF-8.
	re2 := q.mode == lang.ModeRE2
	return func(dst [][2]int, line []byte) [][2]int {
		text, at := line, []int(nil)
		if !re2 && !scan.IsASCII(line) {
			text, at = scan.WidenMap(line)
		}
		for _, m := range re.FindAllIndex(text, -1) {
			if m[1] > m[0] {
				if at != nil {
					m[0], m[1] = at[m[0]], at[m[1]]
				}
				dst = append(dst, [2]int{m[0], m[1]})
			}
		}
		return dst
	}, nil
}

var errOnlyQuery = errors.New("-o prints the parts of lines that -F, -E or -G patterns match, not the query language's")
