package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/web"
)

// Without -addr, etwemu web listens on the loopback interface only.
func TestWebListensOnLoopbackByDefault(t *testing.T) {
	if h, _, err := net.SplitHostPort(web.DefaultAddr); err != nil || !net.ParseIP(h).IsLoopback() {
		t.Fatalf("web.DefaultAddr %q is not a loopback address", web.DefaultAddr)
	}
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got net.Addr
	webStop, webListening = stop, func(_ context.Context, a net.Addr) { got = a; cancel() }
	defer func() { webStop, webListening = nil, nil }()
	var out, errb bytes.Buffer
	code := runWeb(nil, &out, &errb)
	if code != 0 {
		if strings.Contains(errb.String(), syscall.EADDRINUSE.Error()) {
			t.Skipf("the default port is taken on this machine: %s", errb.String())
		}
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	tcp, ok := got.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		t.Fatalf("listened on %v, want a loopback address", got)
	}
}

// Bad flags and arguments are refused with a message, not a panic.
func TestWebBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-processors", "9"}, {"-live", "-processors", "0"}, {"-live", "-payload", "99999"}, {"a", "b"}, {"/no/such/file.scenario"}, {"-addr", "256.0.0.1:1"}} {
		var out, errb bytes.Buffer
		if code := runWeb(args, &out, &errb); code == 0 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
	// An address that is not HOST:PORT, or a port past 65535, is a usage error.
	for _, addr := range []string{":99999", "garbage", "127.0.0.1:-1"} {
		var out, errb bytes.Buffer
		if code := runWeb([]string{"-addr", addr}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-addr "+addr+": ") {
			t.Errorf("-addr %s: exit %d, stderr %q, want 2 and the flag named", addr, code, errb.String())
		}
	}
	var errb bytes.Buffer
	if code := runWeb([]string{"x.scenario", "-live"}, &errb, &errb); code != 2 || !strings.Contains(errb.String(), `flags come before the SCENARIO: "-live" after it`) {
		t.Errorf("web x.scenario -live: exit %d, %q", code, errb.String())
	}
	var out bytes.Buffer
	if code := runWeb([]string{"-h"}, &out, &out); code != 0 || !strings.Contains(out.String(), "-addr") {
		t.Errorf("-h: exit %d:\n%s", code, out.String())
	}
}

// A port another program holds is refused with what to do about it.
func TestWebPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	var out, errb bytes.Buffer
	if code := runWeb([]string{"-addr", ln.Addr().String()}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "give another port, as in -addr") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
