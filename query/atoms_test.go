package query

import (
	"fmt"
	"testing"
)

func TestLiteralAtoms(t *testing.T) {
	tests := []struct {
		lit  string
		fold bool
		want string
	}{
		{"rhost=150.183.", false, "[suffix:rhost exact:150 exact:183]"},
		{"rhost=150.183.2", false, "[suffix:rhost exact:150 exact:183 prefix:2 prefix:150.183.2]"},
		{"acketRespond", false, "[infix:acketrespond]"},
		{"dfs.DataNode$Pack", false, "[suffix:dfs exact:datanode prefix:pack]"},
		{`HTTP/1.1" 503`, false, "[suffix:http exact:1 exact:1 prefix:503]"},
		{"] [error] ", false, "[exact:error]"},
		{"10.213.7.42", false, "[suffix:10 exact:213 exact:7 prefix:42 infix:10.213.7.42]"},
		{"ip=10.213.7.42 ", false, "[suffix:ip exact:10 exact:213 exact:7 exact:42 exact:10.213.7.42]"},
		{"1.2..3.4.5", false, "[suffix:1 exact:2 exact:3 exact:4 prefix:5 infix:3.4.5]"},
		{"\xa9t foo", false, "[suffix:t prefix:foo]"},
		{"caf\xc3", false, "[infix:caf]"},
		{"ια", true, "[infix:α]"},
		{"...", false, "[]"},
	}
	for _, tc := range tests {
		var parts []string
		for _, a := range literalAtoms([]byte(tc.lit), tc.fold) {
			parts = append(parts, a.kind.String()+":"+string(a.text))
		}
		if got := fmt.Sprint(parts); got != tc.want {
			t.Errorf("literalAtoms(%q) = %s, want %s", tc.lit, got, tc.want)
		}
	}
}
