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
	var ascii, wide []string
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
			ascii, wide = append(ascii, e), append(wide, e)
		case *lang.Not:
			if n == q.root {
				return walk(n.Kid) // grep -ov: the parts its other lines match
			}
			return errors.New("-o prints the parts of lines that -F, -E or -G patterns match, not the query language's")
		case *lang.Regex:
			if n.Syntax != lang.SyntaxRE2 && (strings.Contains(n.Expr, `\<`) || strings.Contains(n.Expr, `\>`)) {
				// Their translation may take a character next to the
				// match into it: the lines are right, the parts not.
				return errors.New(`unsupported: \< or \> with -o`)
			}
			w := n.WideGo
			if w == "" {
				w = n.Go // an ASCII pattern matching ASCII only: the same on widened lines
			}
			ascii, wide = append(ascii, n.Go), append(wide, w)
		default:
			return errors.New("-o prints the parts of lines that -F, -E or -G patterns match, not the query language's")
		}
		return nil
	}
	if err := walk(q.root); err != nil {
		return nil, err
	}
	compile := func(exprs []string) (*regexp.Regexp, error) {
		re, err := regexp.Compile("(?:" + strings.Join(exprs, ")|(?:") + ")")
		if err != nil {
			return nil, err
		}
		re.Longest() // POSIX's leftmost-longest, as grep
		return re, nil
	}
	reASCII, err := compile(ascii)
	if err != nil {
		return nil, err
	}
	reWide, err := compile(wide)
	if err != nil {
		return nil, err
	}
	re2 := q.mode == lang.ModeRE2 // (Go's own syntax reads UTF-8)
	return func(dst [][2]int, line []byte) [][2]int {
		if re2 || scan.IsASCII(line) {
			for _, m := range reASCII.FindAllIndex(line, -1) {
				if m[1] > m[0] {
					dst = append(dst, [2]int{m[0], m[1]})
				}
			}
			return dst
		}
		widened, at := scan.WidenMap(line)
		for _, m := range reWide.FindAllIndex(widened, -1) {
			if m[1] > m[0] {
				dst = append(dst, [2]int{at[m[0]], at[m[1]]})
			}
		}
		return dst
	}, nil
}
