package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/server"
)

const statusUsage = `Usage: logdex status [--addr ADDR] [--json]

Shows the state of a running 'logdex serve': the index served, re-indexing,
searches. Exit status: 0 if the server is ready, 1 if it runs without an
index yet, 2 if it cannot be reached.

Flags:
`

func (e *env) status(args []string) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	addr := fs.String("addr", "127.0.0.1:7070", "server address (host:port or URL)")
	token := fs.String("auth-token", "", "bearer token (default $LOGDEX_TOKEN)")
	asJSON := fs.Bool("json", false, "print the server's JSON as is")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, statusUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if err == nil {
			fs.Usage()
		}
		return 2
	}
	if *token == "" {
		*token = os.Getenv("LOGDEX_TOKEN")
	}
	base := *addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(base, "/")+"/api/status", nil)
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex: no server:", err)
		return 2
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	if resp.StatusCode != http.StatusOK {
		var ae struct{ Error string }
		json.Unmarshal(body, &ae)
		fmt.Fprintf(e.stderr, "logdex: %s: %s\n", resp.Status, ae.Error)
		return 2
	}
	var st server.Status
	if err := json.Unmarshal(body, &st); err != nil {
		fmt.Fprintln(e.stderr, "logdex: unexpected answer:", err)
		return 2
	}
	if *asJSON {
		e.stdout.Write(body)
	} else {
		printStatus(e.stdout, base, &st)
	}
	if !st.Ready {
		return 1
	}
	return 0
}

func printStatus(w io.Writer, base string, st *server.Status) {
	state := "ready"
	if !st.Ready {
		state = "starting (no index open yet)"
	}
	fmt.Fprintf(w, "logdex at %s: %s, up %s\n", base, state, (time.Duration(st.UptimeS) * time.Second).String())
	if st.Build.Version != "" { // (a server older than the build field says none)
		fmt.Fprintf(w, "build:    %s\n", st.Build.Summary())
	}
	if ix := st.Index; ix != nil {
		pct := 0.0
		if ix.IndexBytes > 0 {
			pct = 100 * float64(ix.ResidentBytes) / float64(ix.IndexBytes)
		}
		fmt.Fprintf(w, "index:    generation %d: %d files, %d lines, %s of logs; %d segments, %s (%.0f%% resident)\n",
			ix.Generation, ix.Files, ix.Lines, mb(ix.Bytes), ix.Segments, mb(ix.IndexBytes), pct)
		fmt.Fprintf(w, "roots:    %s\n", strings.Join(ix.Roots, " "))
		for _, d := range ix.Damaged {
			fmt.Fprintf(w, "damaged:  %s\n", d)
		}
	}
	ri := st.Reindex
	every := "on SIGHUP only"
	if ri.IntervalS > 0 {
		every = "every " + (time.Duration(ri.IntervalS * float64(time.Second))).String()
	}
	fmt.Fprintf(w, "reindex:  %s; %d runs, %d failed", every, ri.Runs, ri.Failures)
	if ri.Running {
		fmt.Fprint(w, "; running now")
	}
	fmt.Fprintln(w)
	if l := ri.Last; l != nil {
		fmt.Fprintf(w, "          last %s ago: %s in %.0f ms", time.Since(l.Start).Round(time.Second), l.Result, l.Duration)
		if l.Error != "" {
			fmt.Fprintf(w, ": %s", l.Error)
		}
		fmt.Fprintln(w)
		if l.Summary != "" {
			fmt.Fprintf(w, "          %s\n", l.Summary)
		}
	}
	fmt.Fprintf(w, "searches: %d running, at most %d (+%d queued)\n", st.Searches.Active, st.Searches.Max, st.Searches.Queue)
	fmt.Fprintf(w, "streams: %d sending, at most %d (%d per client)\n", st.Streams.Active, st.Streams.Max, st.Streams.PerClient)
	if st.Watch.Active {
		fmt.Fprintln(w, "watch:    inotify on the log directories; unchanged files cost searches nothing")
	} else if st.Watch.Error != "" {
		fmt.Fprintf(w, "watch:    none (%s); every search checks every file\n", st.Watch.Error)
	}
	if wu := st.Warmup; wu != nil {
		pct := 0.0
		if wu.Mapped > 0 {
			pct = 100 * float64(wu.Resident) / float64(wu.Mapped)
		}
		fmt.Fprintf(w, "warmup:   %s, %s", wu.Mode, wu.State)
		if wu.Stage != "" && wu.State == mmapstore.StateRunning {
			fmt.Fprintf(w, " (%s)", wu.Stage)
		}
		fmt.Fprintf(w, "; %s of %s resident (%.0f%%), %s warmed of %s planned, %s read at %.0f MB/s in %s; %d mappings (max %d)\n",
			mb(wu.Resident), mb(wu.Mapped), pct, mb(wu.Warmed), mb(wu.Planned), mb(wu.Read), wu.RateMBps,
			(time.Duration(wu.ElapsedMs) * time.Millisecond).String(), wu.Mappings, wu.MaxMapCount)
		if wu.Error != "" {
			fmt.Fprintf(w, "          error: %s\n", wu.Error)
		}
		for _, f := range wu.Files {
			fp := 0.0
			if f.Mapped > 0 {
				fp = 100 * float64(f.Resident) / float64(f.Mapped)
			}
			fmt.Fprintf(w, "          %-28s %10s %4.0f%% resident  %s\n", f.Name, mb(f.Mapped), fp, f.State)
		}
	}
}
