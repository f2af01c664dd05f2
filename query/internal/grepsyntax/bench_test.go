package grepsyntax

import (
	"regexp/syntax"
	"testing"
)

// Patterns valid in both grep -E and Go's syntax, so syntax.Parse of the
// same text is the baseline for Translate's cost.
var benchPatterns = []string{
	`error|warn(ing)?`,
	`^[0-9]{4}-[0-9]{2}-[0-9]{2} [A-Z]+`,
	`(foo|bar)+baz[[:alpha:]_]*`,
	`\bdisk [a-z]+ full\b`,
}

func BenchmarkParseBaseline(b *testing.B) {
	for b.Loop() {
		for _, p := range benchPatterns {
			if _, err := syntax.Parse(p, syntax.Perl); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkTranslate(b *testing.B) {
	for b.Loop() {
		for _, p := range benchPatterns {
			if _, _, err := Translate(p, ERE, false); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkTranslateWordEdges(b *testing.B) {
	for b.Loop() {
		if _, _, err := Translate(`\<(get|post|put)\> +/api/\<[a-z]+\>`, ERE, true); err != nil {
			b.Fatal(err)
		}
	}
}
