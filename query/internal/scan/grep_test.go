package scan

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// grepCount runs LC_ALL=C grep -c with args on file.
func grepCount(t *testing.T, grep, file string, args ...string) int {
	t.Helper()
	cmd := exec.Command(grep, append(append([]string{"-c"}, args...), "--", file)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("grep %v: %v", args, err)
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("grep %v: output %q", args, out)
	}
	return n
}

// genERE builds patterns in the common subset of RE2 and POSIX ERE: with
// ASCII input and LC_ALL=C both define the same set of matching lines.
func genERE(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "e", "r", "o", "0", "1", "9", " ", ":", `\.`, "-", "/", "_", "E", "R", "O",
		".", "[a-z]", "[0-9]", "[A-Z]", "[a-f0-9]", "[^a-z]", "[^ ]", "error", "ERROR", "timeout", "[.:]"}
	var alts []string
	for range 1 + r.IntN(2) {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			a := atoms[r.IntN(len(atoms))]
			if depth < 2 && r.IntN(8) == 0 {
				a = "(" + genERE(r, depth+1) + ")"
			}
			switch r.IntN(10) {
			case 0:
				a += "*"
			case 1:
				a += "+"
			case 2:
				a += "?"
			case 3:
				lo := r.IntN(3)
				a += "{" + strconv.Itoa(lo) + "," + strconv.Itoa(lo+1+r.IntN(2)) + "}"
			}
			b.WriteString(a)
		}
		s := b.String()
		if depth == 0 && r.IntN(5) == 0 {
			s = "^" + s
		}
		if depth == 0 && r.IntN(5) == 0 {
			s += "$"
		}
		alts = append(alts, s)
	}
	return strings.Join(alts, "|")
}

func asciiLogLines(r *rand.Rand, n int) []byte {
	words := []string{"a", "b", "e", "r", "o", "0", "1", "9", " ", " ", ":", ".", "-", "/", "_", "E", "R", "O", "x",
		"ERROR", "error", "timeout", "INFO", "10.0.0.1", "[error]", "2024-01-01", "\r"}
	var b bytes.Buffer
	for range n {
		for range r.IntN(12) {
			b.WriteString(words[r.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestAgainstGrep(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Skip("grep not found")
	}
	r := rand.New(rand.NewPCG(5, 6))
	buf := asciiLogLines(r, 400)
	file := filepath.Join(t.TempDir(), "lines.log")
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	iters := 200
	if testing.Short() {
		iters = 50
	}
	for range iters {
		p := genERE(r, 0)
		m, err := NewRegexp(p, false)
		if err != nil {
			t.Fatalf("NewRegexp(%q): %v", p, err)
		}
		if got, want := m.CountLines(buf), grepCount(t, grep, file, "-E", "-e", p); got != want {
			t.Errorf("pattern %q: CountLines = %d, grep -cE = %d", p, got, want)
		}
	}
	for range iters {
		var pat string
		switch lines := splitLines(buf); r.IntN(3) {
		case 0:
			pat = string(asciiLogLines(r, 1))
			pat = pat[:len(pat)-1]
		default:
			l := lines[r.IntN(len(lines))]
			a := l[0] + r.IntN(l[1]-l[0]+1)
			pat = string(buf[a : a+r.IntN(l[1]-a+1)])
		}
		if r.IntN(2) == 0 {
			pat = strings.ToUpper(pat)
		}
		if got, want := NewLiteral([]byte(pat), false).CountLines(buf), grepCount(t, grep, file, "-F", "-e", pat); got != want {
			t.Errorf("literal %q: CountLines = %d, grep -cF = %d", pat, got, want)
		}
		if got, want := NewLiteral([]byte(pat), true).CountLines(buf), grepCount(t, grep, file, "-iF", "-e", pat); got != want {
			t.Errorf("literal %q: CountLines(fold) = %d, grep -ciF = %d", pat, got, want)
		}
	}
}
