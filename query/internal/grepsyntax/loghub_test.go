package grepsyntax

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/logdex/logdex/fixtures/loghub"
)

// Patterns of the kind people type at logs, in both syntaxes.
var logPatterns = []struct {
	syn Syntax
	pat string
}{
	{ERE, `error|warn(ing)?`},
	{ERE, `^[0-9]{4}-[0-9]{2}-[0-9]{2}`},
	{ERE, `\<(INFO|WARN|ERROR)\>`},
	{ERE, `[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+`},
	{ERE, `(fail|denied|refused)[a-z]*`},
	{ERE, `user=[[:alnum:]_]+`},
	{ERE, `\bblk_-?[0-9]+\b`},
	{ERE, `[[:space:]]{2,}`},
	{ERE, `\(|\)$`},
	{ERE, `session (opened|closed) for user \w+`},
	{BRE, `Failed password for \(invalid user \)\?[a-z]*`},
	{BRE, `^[A-Z][a-z]\{2\} \+[0-9]\+`},
	{BRE, `\<[0-9]\{3,\}\>`},
	{BRE, `kernel:.*[Ee]rror`},
	{BRE, `[^ ]*\.java:[0-9]*`},
	{BRE, `\(ERROR\|FATAL\)`},
}

// TestLoghubAgainstGrep holds realistic patterns to grep on real logs.
func TestLoghubAgainstGrep(t *testing.T) {
	needGrep(t)
	dir := loghub.DirOrSkip(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(files) == 0 {
		t.Skip("no loghub samples")
	}
	for n, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		if !long() {
			// The default run: the first lines of one sample (matching
			// under -race is slow).
			if n > 0 {
				break
			}
			lines = lines[:min(len(lines), 400)]
			file = filepath.Join(t.TempDir(), filepath.Base(file))
			if err := os.WriteFile(file, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range logPatterns {
			for _, fold := range []bool{false, true} {
				expr, _, err := Translate(c.pat, c.syn, fold)
				if err != nil {
					t.Fatalf("%s %q: %v", c.syn, c.pat, err)
				}
				g := runGrep(t, c.pat, c.syn, fold, file)
				if g.slow || g.crashed || g.rejected {
					t.Fatalf("%s %q on %s: grep %+v", c.syn, c.pat, file, g)
				}
				re := regexp.MustCompile(expr)
				var got []int
				for i, l := range lines {
					if re.Match(l) {
						got = append(got, i+1)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(g.lines) {
					t.Errorf("%s -i=%v %q on %s: %d lines, grep %d (first differing: %v)", c.syn, fold, c.pat,
						filepath.Base(file), len(got), len(g.lines), symmetricDiff(got, g.lines)[:1])
				}
			}
		}
	}
}
