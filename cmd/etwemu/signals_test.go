package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeSignals replaces notifySignals and exitNow for one test: it returns the channel
// the command listens on and a function that reports the status exitNow was called with
// (-1 if it was not).
func fakeSignals(t *testing.T) (send func(os.Signal), exited func() int) {
	t.Helper()
	var mu sync.Mutex
	var ch chan<- os.Signal
	code := -1
	exitedCh := make(chan struct{}, 1)
	oldNotify, oldExit, oldEcho := notifySignals, exitNow, signalEcho
	signalEcho = 0 // every second signal is a second request, unless a test says otherwise
	notifySignals = func(c chan<- os.Signal) func() {
		mu.Lock()
		ch = c
		mu.Unlock()
		return func() {}
	}
	exitNow = func(c int) {
		mu.Lock()
		code = c
		mu.Unlock()
		exitedCh <- struct{}{}
	}
	t.Cleanup(func() { notifySignals, exitNow, signalEcho = oldNotify, oldExit, oldEcho })
	send = func(s os.Signal) {
		mu.Lock()
		c := ch
		mu.Unlock()
		c <- s
	}
	exited = func() int {
		<-exitedCh
		mu.Lock()
		defer mu.Unlock()
		return code
	}
	return send, exited
}

func TestInterruptibleFirstSignalCancels(t *testing.T) {
	send, _ := fakeSignals(t)
	var stderr syncBuffer
	ctx, stop := interruptible(context.Background(), &stderr, "the session")
	defer stop()
	send(syscall.SIGTERM)
	<-ctx.Done()
	if got := interruptedCode(ctx); got != 128+15 {
		t.Errorf("interruptedCode = %d, want 143", got)
	}
	stop()
	if !strings.Contains(stderr.String(), "SIGTERM: stopping the session") {
		t.Errorf("stderr = %q, want it to say what is being stopped", stderr.String())
	}
}

func TestInterruptibleSecondSignalExits(t *testing.T) {
	send, exited := fakeSignals(t)
	var stderr syncBuffer
	ctx, stop := interruptible(context.Background(), &stderr, "the session")
	defer stop()
	send(os.Interrupt)
	<-ctx.Done()
	send(os.Interrupt)
	if got := exited(); got != 130 {
		t.Errorf("second signal exited with %d, want 130", got)
	}
	if got := interruptedCode(ctx); got != 130 {
		t.Errorf("interruptedCode = %d, want 130", got)
	}
}

func TestInterruptibleStopWithoutSignal(t *testing.T) {
	fakeSignals(t)
	ctx, stop := interruptible(context.Background(), &syncBuffer{}, "x")
	stop()
	stop() // twice is fine
	if ctx.Err() == nil {
		t.Fatal("stop left the context live")
	}
	if got := interruptedCode(ctx); got != 0 {
		t.Errorf("interruptedCode = %d without a signal, want 0", got)
	}
}

// syncBuffer is a bytes.Buffer safe for the signal goroutine and the test together.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The first signal delivered twice at once (as coreutils' timeout sends it, to the
// command and to its process group) is one request: the command stops cleanly. Another
// signal after it still exits at once.
func TestInterruptibleSignalEcho(t *testing.T) {
	send, exited := fakeSignals(t)
	signalEcho = time.Hour // every repeat of the first signal falls within it
	var stderr syncBuffer
	ctx, stop := interruptible(context.Background(), &stderr, "the session")
	defer stop()
	send(os.Interrupt)
	send(os.Interrupt) // the echo
	<-ctx.Done()
	send(syscall.SIGTERM) // handled after the echo: the channel is read in order
	if got := exited(); got != 143 {
		t.Errorf("exited with %d, want 143 from the SIGTERM: the echoed SIGINT was taken for a second request", got)
	}
	if n := strings.Count(stderr.String(), "SIGINT again"); n != 0 {
		t.Errorf("the echo was taken for a second Ctrl-C:\n%s", stderr.String())
	}
}
