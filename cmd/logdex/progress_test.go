package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/logdex/logdex/indexer"
)

// openPTY returns a pseudo-terminal's master and its terminal end.
func openPTY(t *testing.T) (master, term *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	master = os.NewFile(uintptr(fd), "ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() { term.Close(); master.Close() })
	return master, term
}

// TestProgressCleared: on a terminal, the progress line is cleared before
// a log line and when the run ends, also when it fails (it was left on
// screen, with the error written at its end).
func TestProgressCleared(t *testing.T) {
	master, term := openPTY(t)
	e := &env{stdout: &strings.Builder{}, stderr: term, update: func(_ context.Context, opt indexer.Options) (*indexer.Result, error) {
		opt.Progress(50e6, 100e6)
		opt.Logger.Warn().Msg("compressed file damaged")
		opt.Progress(60e6, 100e6)
		return nil, errors.New("interrupted")
	}}
	if _, err := e.updateIndex(context.Background(), t.TempDir(), []string{"."}, 1<<20, true, zerolog.InfoLevel); err == nil {
		t.Fatal("want the run's error")
	}
	term.Close()
	buf := make([]byte, 64<<10)
	var got []byte
	master.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		n, err := master.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil || strings.HasSuffix(string(got), "\r\033[K") {
			break
		}
	}
	s := string(got)
	drawn, warn := strings.Index(s, "indexing 50.0 MB"), strings.Index(s, "compressed file damaged")
	if drawn < 0 || warn < drawn || !strings.Contains(s[drawn:warn], "\r\033[K") {
		t.Errorf("the log line does not start on a cleared line:\n%q", s)
	}
	if !strings.HasSuffix(s, "\r\033[K") {
		t.Errorf("the progress line is left after the failed run:\n%q", s)
	}
}
