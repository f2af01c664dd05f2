package logtime

import "os"

// longRun reports whether the opt-in long property and fuzz runs are on.
func longRun() bool { return os.Getenv("LOGDEX_LONG") != "" }
