package goid

import "testing"

// Two goroutines have two ids, and one goroutine the same id every time.
func TestID(t *testing.T) {
	a, b := ID(), ID()
	ch := make(chan uint64)
	go func() { ch <- ID() }()
	other := <-ch
	if a == 0 || a != b || other == 0 || other == a {
		t.Fatalf("ids %d, %d in one goroutine, %d in another", a, b, other)
	}
}
