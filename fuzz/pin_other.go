//go:build !linux

package fuzz

// onProcessor reports that the processor cannot be pinned down here: the harness then
// writes with EventWriteEx on a processor it names (see pin_linux.go).
func onProcessor(current func() int, fn func()) (proc int, ok bool) { return 0, false }
