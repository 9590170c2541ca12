package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/etwemu/etwemu/examples"
	"github.com/etwemu/etwemu/web"
	"github.com/etwemu/etwemu/winerr"
)

const webAbout = `Usage: etwemu web [-addr HOST:PORT] [-live [-duration D] [-payload N] [-processors N]] [SCENARIO]

Serves one page that draws the emulated kernel: GUID entries with their eight
EnableInfo slots, registrations with the bits of EnableMask, each logger context with
its counters, each processor's current buffer, the free and flush lists and where its
buffers go, and the in-memory log files buffer by buffer; clicking a structure shows it
as dt does. The lessons of examples/ are in a menu (and SCENARIO, a scenario file, opens
first); Step and Back re-run the scenario on a fresh deterministic kernel to that step,
so each step draws the same picture every time, and what changed is highlighted. The
command box takes the scenario language (etwemu help run lists it), including poke, which
tampers with the modelled fields and says so.

With -live the menu also offers a live kernel: one writer goroutine per processor
writes as etwemu demo does, to a real-time session and a circular file in memory, and
the page redraws four times a second. With -duration the live writers stop after that
long and the rate they wrote at is printed.

The page and its scripts are in the binary; it loads nothing from elsewhere, and the
server writes no file (log files are in memory). It listens on 127.0.0.1 unless -addr
names another interface. SIGINT or SIGTERM stops it.

  etwemu web examples/01-first-session.scenario     # then open http://127.0.0.1:8077/`

// webListening, when set, is called with the address the server listens on, and the
// context the first signal cancels, before it serves. Tests set it.
var webListening func(ctx context.Context, addr net.Addr)

// webStop, when set, replaces the signal context's parent, so that a test can stop the
// server. Tests set it.
var webStop context.Context

func runWeb(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	addr := fs.String("addr", web.DefaultAddr, "the `HOST:PORT` to listen on; the default is the loopback interface only, and another host makes the page reachable from the network")
	live := fs.Bool("live", false, "also run writers on a live kernel (logger goroutines, real clocks) and offer its picture in the menu")
	procs := fs.Int("processors", min(runtime.NumCPU(), 4), "with -live: emulated processors, one writer goroutine each (1 to 64)")
	payload := fs.Int("payload", 64, "with -live: payload bytes per event (0 to 4096)")
	duration := fs.Duration("duration", 0, "with -live: stop the writers and the server after this long and print their write rate (0: run until a signal; at most 24h)")
	fs.SetOutput(io.Discard) // the error is printed below, named by the command
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, webAbout, stdout)
			return 0
		}
		fmt.Fprintf(stderr, "etwemu web: %v%s\nRun 'etwemu help web' for its flags.\n", err, valueHint(fs, err))
		return 2
	}
	fs.SetOutput(stderr)
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "etwemu web: name at most one SCENARIO (got %d arguments%s)\n", fs.NArg(), flagAfter(fs, "SCENARIO"))
		return 2
	}
	b := bounds{fs: fs}
	b.int("processors", int64(*procs), 1, 64, "")
	b.int("payload", int64(*payload), 0, 4096, "")
	b.duration("duration", *duration, 0, 24*time.Hour, "")
	b.needs("processors", "live", *live)
	b.needs("payload", "live", *live)
	b.needs("duration", "live", *live)
	if code := b.done(stderr); code >= 0 {
		return code
	}
	if err := checkAddr(*addr); err != nil {
		fmt.Fprintf(stderr, "etwemu web: -addr %s: %v\nRun 'etwemu help web' for its flags.\n", *addr, err)
		return 2
	}
	lessons, err := web.LoadLessons(examples.Lessons)
	if err != nil {
		fmt.Fprintf(stderr, "etwemu web: the embedded lessons: %v\n", err)
		return 1
	}
	first := ""
	if fs.NArg() == 1 {
		name := fs.Arg(0)
		text, err := readScenario(name)
		if err != nil {
			fmt.Fprintf(stderr, "etwemu web: %v\n", err)
			return 1
		}
		l, err := web.ParseLesson(strings.TrimSuffix(filepath.Base(name), ".scenario"), text)
		if err != nil {
			fmt.Fprintf(stderr, "etwemu web: %v\n", err)
			return 1
		}
		lessons = addLesson(lessons, l)
		first = l.Name
	}
	var lv *web.Live
	if *live {
		if lv, err = web.StartLive(web.LiveConfig{Processors: *procs, Payload: *payload}); err != nil {
			fmt.Fprintf(stderr, "etwemu web: %v\n", err)
			return 1
		}
		defer lv.Stop()
	}
	ln, err := web.Listen(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "etwemu web: %v\n", err)
		if errors.Is(err, syscall.EADDRINUSE) {
			fmt.Fprintf(stderr, "another program (perhaps another etwemu web) listens on %s: stop it, or give another port, as in -addr 127.0.0.1:8078\n", *addr)
		}
		return 1
	}
	parent := context.Background()
	if webStop != nil {
		parent = webStop
	}
	ctx, stop := interruptible(parent, stderr, "the web server")
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	// Requests run under ctx, so that a signal ends a replay in flight too and the
	// shutdown below does not wait out ReplayTimeout.
	// A frame's answer sets its own write deadline once its replay is done; WriteTimeout
	// bounds every other answer, and a frame's too should that fail. ReadTimeout bounds a
	// whole request, its body included: a client trickling a body holds its connection
	// that long at most.
	srv := &http.Server{Handler: web.NewHandler(lessons, first, lv), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: requestReadTimeout, WriteTimeout: web.ReplayTimeout + web.WriteTimeout,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	fmt.Fprintf(stdout, "etwemu web: serving http://%s/ (%d lessons%s)\n", ln.Addr(), len(lessons), map[bool]string{true: ", live kernel", false: ""}[lv != nil])
	if webListening != nil {
		webListening(ctx, ln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err = srv.Shutdown(shut); errors.Is(err, context.DeadlineExceeded) {
			err = srv.Close() // a handler that would not end: close its connection
		}
		cancel()
	}
	if lv != nil {
		n, d := lv.Stop()
		fmt.Fprintf(stdout, "live: %d events accepted in %.2f s: %.0f events/s\n", n, d.Seconds(), float64(n)/d.Seconds())
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "etwemu web: %v\n", err)
		return 1
	}
	return interruptedCode(ctx)
}

// maxScenarioFile bounds the scenario file web reads: 8 MiB, far more than a lesson takes.
const maxScenarioFile = 8 << 20

// readScenario reads a scenario file of at most maxScenarioFile bytes.
func readScenario(name string) (string, error) {
	f, err := openInput(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScenarioFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxScenarioFile {
		return "", winerr.New(winerr.ErrInvalidParameter, "%s: larger than %d bytes, the most web reads of a scenario", name, maxScenarioFile)
	}
	return string(b), nil
}

// addLesson puts l among lessons, replacing the lesson of the same name.
func addLesson(lessons []web.Lesson, l web.Lesson) []web.Lesson {
	for i := range lessons {
		if lessons[i].Name == l.Name {
			lessons[i] = l
			return lessons
		}
	}
	return append([]web.Lesson{l}, lessons...)
}

// checkAddr says what is wrong with a listen address, HOST:PORT with a port from 0 to
// 65535 or a service name, or none for any free port (an empty address is web's
// default): a usage error, not a failure to listen.
func checkAddr(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("not HOST:PORT, as in 127.0.0.1:8077")
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("port %q is not a number from 0 to 65535 or a service name", port)
	}
	return nil
}

// requestReadTimeout bounds the reading of one request to the web view, its body
// included: a frame request is at most a megabyte.
const requestReadTimeout = 30 * time.Second
