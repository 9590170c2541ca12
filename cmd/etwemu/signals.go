package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// notifySignals delivers SIGINT and SIGTERM to c until the returned function is called.
// Tests replace it to send signals of their own without signalling the test binary.
var notifySignals = func(c chan<- os.Signal) (stop func()) {
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	return func() { signal.Stop(c) }
}

// exitNow ends the process at once; tests replace it.
var exitNow = os.Exit

// signalEcho is how soon after the first signal a second one of the same kind is taken
// for the same request, not a second Ctrl-C: coreutils' timeout, for one, sends its
// signal to the command and to the command's process group, so the command receives it
// twice within microseconds. A person pressing Ctrl-C again takes far longer. Tests set
// it to 0.
var signalEcho = 100 * time.Millisecond

// interruptError is the cause of a context cancelled by a signal.
type interruptError struct{ sig os.Signal }

func (e interruptError) Error() string { return "interrupted by " + signalName(e.sig) }

// signalName is the name a shell prints for sig.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// signalCode is the exit status a shell reports for a process ended by sig: 128 plus
// the signal's number.
func signalCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// interruptible returns a context that the first SIGINT or SIGTERM cancels, so that a
// command can stop its sessions cleanly (flush their buffers, finalize their files'
// headers, print its report) and then exit with interruptedCode. A second signal ends
// the process at once with that signal's status, as a user pressing Ctrl-C twice
// expects. what names the work being stopped in the message printed on stderr at the
// first signal. stop releases the signals; call it when the work is done.
func interruptible(parent context.Context, stderr io.Writer, what string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	release := notifySignals(sigs)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		first := true
		var firstSig os.Signal
		var firstAt time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if !first && sig == firstSig && time.Since(firstAt) < signalEcho {
					continue // the first signal again, as timeout sends it: not a second request
				}
				if !first {
					fmt.Fprintf(stderr, "etwemu: %s again: exiting at once\n", signalName(sig))
					exitNow(signalCode(sig))
					return
				}
				first, firstSig, firstAt = false, sig, time.Now()
				fmt.Fprintf(stderr, "etwemu: %s: stopping %s (send it again to exit at once)\n", signalName(sig), what)
				cancel(interruptError{sig})
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			release()
			close(done)
			wg.Wait()
			cancel(nil)
		})
	}
}

// interruptedCode is the exit status of a command whose context a signal cancelled (128
// plus the signal's number), or 0 if none did.
func interruptedCode(ctx context.Context) int {
	if e, ok := context.Cause(ctx).(interruptError); ok {
		return signalCode(e.sig)
	}
	return 0
}
