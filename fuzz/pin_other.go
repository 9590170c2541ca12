//go:build !linux

package fuzz

// pinner cannot pin a goroutine to a processor here: the harness then writes with
// EventWriteEx on a processor it names (see pin_linux.go).
type pinner struct{}

func newPinner() *pinner { return &pinner{} }

func (*pinner) on(current func() int, fn func()) (proc int, ok bool) { return 0, false }

func (*pinner) done() {}
