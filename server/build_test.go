package server

import (
	"runtime"
	"testing"
)

func TestBuildString(t *testing.T) {
	const rev = "ddd936ed349ebc402e570cef8cb4f67fe5ab469a"
	for _, tc := range []struct {
		name string
		b    Build
		want string
	}{
		{"a release", Build{Version: "v1.2.0", Go: "go1.26.8", Platform: "linux/amd64"}, "logdex v1.2.0, go1.26.8 linux/amd64"},
		{"a pseudo-version names its commit already",
			Build{Version: "v0.0.0-20261204142507-ddd936ed349e+dirty", Revision: rev, Modified: true, Go: "go1.26.8", Platform: "linux/arm64"},
			"logdex v0.0.0-20261204142507-ddd936ed349e+dirty, go1.26.8 linux/arm64"},
		{"(devel) with a commit", Build{Version: "(devel)", Revision: rev, Go: "go1.26.8", Platform: "linux/amd64"},
			"logdex (devel) commit ddd936ed349e, go1.26.8 linux/amd64"},
		{"(devel) with changes", Build{Version: "(devel)", Revision: rev, Modified: true, Go: "go1.26.8", Platform: "linux/amd64"},
			"logdex (devel) commit ddd936ed349e+dirty, go1.26.8 linux/amd64"},
		{"a short revision", Build{Version: "(devel)", Revision: "abc", Go: "go1.26.8", Platform: "linux/amd64"},
			"logdex (devel) commit abc, go1.26.8 linux/amd64"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReadBuild(t *testing.T) {
	b := ReadBuild()
	if b.Version == "" || b.Go != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("ReadBuild() = %+v", b)
	}
}
