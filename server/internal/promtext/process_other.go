//go:build !linux

package promtext

// ProcessMetrics reports nothing where there is no /proc.
func ProcessMetrics() []Family { return nil }
