package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/scenario"
)

func writeScenario(t *testing.T, src string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "s.scenario")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestRunAndShell(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "../../examples/02-ninth-session.scenario"}, &out, &errb); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "as expected, enable failed: ERROR_NO_SYSTEM_RESOURCES") || !strings.HasSuffix(errb.String(), " commands ran\n") {
		t.Errorf("run printed:\n%s\nstderr %q", out.String(), errb.String())
	}

	bad := writeScenario(t, "start s file=a.etl\nstart s file=a.etl\n")
	out.Reset()
	errb.Reset()
	if code := run([]string{"run", bad}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "line 2: start: ERROR_ALREADY_EXISTS") || !strings.Contains(errb.String(), "(1 command ran before it)") {
		t.Errorf("failing scenario: exit %d, stderr %q", code, errb.String())
	}

	// The shell goes on after an error and reads to the end of a pipe, without prompts,
	// and its exit status tells the script that a command failed; at a terminal, whose
	// user saw it, it is 0.
	out.Reset()
	errb.Reset()
	in := strings.NewReader("start s file=a.etl\nstart s file=a.etl\nstrdump\nquit\nstrdump\n")
	if code := shell(context.Background(), scenario.New(&out), in, &out, &errb, false); code != 1 {
		t.Fatalf("shell: exit %d, want 1", code)
	}
	var tty bytes.Buffer
	if code := shell(context.Background(), scenario.New(&tty), strings.NewReader("bogus\n"), &tty, &tty, true); code != 0 {
		t.Errorf("shell at a terminal: exit %d after a failed command, want 0", code)
	}
	if code := shell(context.Background(), scenario.New(&tty), strings.NewReader("bogus\necho fine\n"), &tty, &tty, false); code != 1 {
		t.Errorf("shell from a pipe: exit %d after a failed command, want 1", code)
	}
	if !strings.Contains(errb.String(), "error: line 2: start: ERROR_ALREADY_EXISTS") || strings.Count(out.String(), " running (Windows ") != 1 || strings.Contains(out.String(), "etwemu>") {
		t.Errorf("shell: stdout %q, stderr %q", out.String(), errb.String())
	}

	out.Reset()
	if code := run([]string{"help", "run"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "logdump NAME") || !strings.Contains(out.String(), "-disk") {
		t.Errorf("help run: exit %d\n%s", code, out.String())
	}
}

// An empty scenario says it ran nothing; comments are not commands.
func TestRunEmpty(t *testing.T) {
	for src, want := range map[string]string{"": "0 commands ran", "# nothing\n\n": "0 commands ran", "echo hi\n": "1 command ran"} {
		var out, errb bytes.Buffer
		name := writeScenario(t, src)
		if code := run([]string{"run", name}, &out, &errb); code != 0 || errb.String() != "etwemu run: "+name+": "+want+"\n" {
			t.Errorf("%q: exit %d, stderr %q, want %q", src, code, errb.String(), want)
		}
	}
}

// -disk bounds the in-memory disk: a SEQUENTIAL file without MaximumFileSize fills it,
// the session loses the buffers that do not fit and goes on.
func TestRunDisk(t *testing.T) {
	name := writeScenario(t, "start s file=s.etl mode=SEQUENTIAL\nregister P\nenable s P\nwrite P 2000 size=60000\nfiles\nstop s\n")
	var out, errb bytes.Buffer
	if code := run([]string{"run", "-disk", "1", name}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"s.etl  1048576 bytes", "BuffersWritten 16, LogBuffersLost 198"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	for _, disk := range []string{"0", "65537", "x"} {
		errb.Reset()
		if code := run([]string{"run", "-disk", disk, name}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-disk") {
			t.Errorf("-disk %s: exit %d, stderr %q", disk, code, errb.String())
		}
	}
	errb.Reset()
	if code := run([]string{"shell", "-disk", "0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-disk 0: must be 1 to ") {
		t.Errorf("shell -disk 0: exit %d, stderr %q", code, errb.String())
	}
}

// -disk asks for at most half of the machine's memory, where the files of the in-memory
// disk live: more, and a scenario filling it had the process killed for memory rather
// than the ERROR_DISK_FULL the flag promises. The default is allowed on any machine.
func TestDiskBoundByMemory(t *testing.T) {
	defer func(f func() uint64) { machineMemory = f }(machineMemory)
	name := writeScenario(t, "echo ok\n")
	for _, c := range []struct {
		memMB  uint64
		disk   string
		code   int
		stderr string
	}{
		{4096, "2049", 2, "-disk 2049: must be 1 to 2048 (the disk's files are held in memory: at most half of this machine's 4096 MB)"},
		{4096, "2048", 0, ""},
		{256, "256", 0, ""}, // the default, on a machine smaller than twice it
		{256, "257", 2, "-disk 257: must be 1 to 256"},
		{0, "65536", 0, ""}, // memory unknown: the fixed bound
		{1 << 30, "65537", 2, "-disk 65537: must be 1 to 65536"},
	} {
		machineMemory = func() uint64 { return c.memMB << 20 }
		var out, errb bytes.Buffer
		code := run([]string{"run", "-disk", c.disk, name}, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.stderr) || (c.code == 0 && out.String() != "ok\n") {
			t.Errorf("%d MB of memory, -disk %s: exit %d, stdout %q, stderr %q; want exit %d and %q", c.memMB, c.disk, code, out.String(), errb.String(), c.code, c.stderr)
		}
	}
}

// A line longer than the language allows is an error naming its line: run stops there,
// the shell goes on to the next line.
func TestLongLines(t *testing.T) {
	long := "echo " + strings.Repeat("x", 10<<20) + "\n"
	name := writeScenario(t, "echo one\n"+long+"echo two\n")
	var out, errb bytes.Buffer
	if code := run([]string{"run", name}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "line 2: longer than 65536 bytes") || strings.Contains(errb.String(), "skipped") || out.String() != "one\n" {
		t.Errorf("run: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	in := strings.NewReader("echo one\n" + long + "echo two\n")
	if code := shell(context.Background(), scenario.New(&out), in, &out, &errb, false); code != 1 || out.String() != "one\ntwo\n" || !strings.Contains(errb.String(), "error: line 2: longer than 65536 bytes, the longest line a scenario may have: the line is skipped") {
		t.Errorf("shell: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// stopAt has machines created by run and shell hold their first write at events done
// until the signal has cancelled the command's context; started closes when it is
// there.
func stopAt(t *testing.T, done uint64) (started chan struct{}) {
	t.Helper()
	started = make(chan struct{})
	var once sync.Once
	machineHook = func(ctx context.Context, m *scenario.Machine) {
		m.SetProgress(func(cmd string, n uint64) {
			if cmd == "write" && n == done {
				once.Do(func() {
					close(started)
					<-ctx.Done()
				})
			}
		})
	}
	t.Cleanup(func() { machineHook = nil })
	return started
}

// The first SIGINT stops run in the middle of a long write: the session is stopped with
// its counters printed, and the status is 130.
func TestRunInterrupted(t *testing.T) {
	send, _ := fakeSignals(t)
	started := stopAt(t, 2048)
	name := writeScenario(t, "start s file=s.etl\nregister P\nenable s P\nwrite P 10000000 size=100\nstrdump\n")
	go func() {
		<-started
		send(os.Interrupt)
	}()
	var out bytes.Buffer
	var errb syncBuffer
	code := run([]string{"run", name}, &out, &errb)
	if code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	for _, want := range []string{"wrote P x2048 of 10000000 (100 bytes, processor 0): logger 2: 2048 written\n", "stopped s: NumberOfBuffers"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), " running (Windows ") {
		t.Error("the command after the interrupted one ran")
	}
	for _, want := range []string{"SIGINT: stopping the scenario", "line 4: write: stopped after 2048 of 10000000 events: interrupted by SIGINT (3 commands ran before it); every session was stopped"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

// notifyOn is a writer that closes ch once what it received contains want.
type notifyOn struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	ch   chan struct{}
}

func (n *notifyOn) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	had := strings.Contains(n.b.String(), n.want)
	n.b.Write(p)
	if !had && strings.Contains(n.b.String(), n.want) {
		close(n.ch)
	}
	return len(p), nil
}

func (n *notifyOn) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b.String()
}

// SIGTERM reaches the shell while it waits for input, and while a write runs: either
// way every session is stopped and the status is 143.
func TestShellInterrupted(t *testing.T) {
	t.Run("waiting for input", func(t *testing.T) {
		send, _ := fakeSignals(t)
		var errb syncBuffer
		ctx, stop := interruptible(context.Background(), &errb, "the shell")
		defer stop()
		out := &notifyOn{want: "started s:", ch: make(chan struct{})}
		pr, pw := io.Pipe()
		defer pw.Close()
		go func() {
			io.WriteString(pw, "start s file=s.etl\n")
			<-out.ch
			send(syscall.SIGTERM)
		}()
		if code := shell(ctx, scenario.New(out), pr, out, &errb, false); code != 143 {
			t.Errorf("exit %d, want 143", code)
		}
		if !strings.Contains(out.String(), "stopped s: NumberOfBuffers") || !strings.Contains(errb.String(), "etwemu shell: interrupted by SIGTERM (1 command succeeded); every session was stopped") {
			t.Errorf("stdout %q\nstderr %q", out.String(), errb.String())
		}
	})
	t.Run("in a write", func(t *testing.T) {
		send, _ := fakeSignals(t)
		started := stopAt(t, 1024)
		var errb syncBuffer
		ctx, stop := interruptible(context.Background(), &errb, "the shell")
		defer stop()
		var out bytes.Buffer
		m := scenario.New(&out)
		machineHook(ctx, m)
		go func() {
			<-started
			send(syscall.SIGTERM)
		}()
		in := strings.NewReader("start s mode=REAL_TIME\nregister P\nenable s P\nwrite P 10000000\nstrdump\n")
		if code := shell(ctx, m, in, &out, &errb, false); code != 143 {
			t.Errorf("exit %d, want 143", code)
		}
		if !strings.Contains(out.String(), "wrote P x1024 of 10000000") || !strings.Contains(out.String(), "stopped s:") || strings.Contains(out.String(), " running (Windows ") {
			t.Errorf("stdout %q", out.String())
		}
		if !strings.Contains(errb.String(), "etwemu shell: line 4: write: stopped after 1024 of 10000000 events: interrupted by SIGTERM (3 commands ran before it)") {
			t.Errorf("stderr %q", errb.String())
		}
	})
}

// On a terminal the shell says how to use it before its first prompt, and input that
// ends at a prompt leaves the terminal on a line of its own.
func TestShellPromptOnTerminal(t *testing.T) {
	var out, errb bytes.Buffer
	if code := shell(context.Background(), scenario.New(&out), strings.NewReader("kernel\n"), &out, &errb, true); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	if !strings.HasPrefix(s, "etwemu shell: type scenario commands") || !strings.Contains(s, "help lists them") {
		t.Errorf("no word on how to use the shell first:\n%s", s)
	}
	if !strings.HasSuffix(s, "etwemu> \n") {
		t.Errorf("the last prompt is not ended by a newline:\n%q", s)
	}
}

// quit and exit leave the shell in any case, as the commands are taken in any case.
func TestShellQuitInAnyCase(t *testing.T) {
	for _, word := range []string{"quit", "QUIT", "Exit"} {
		var out, errb bytes.Buffer
		in := strings.NewReader("echo before\n" + word + "\necho after\n")
		if code := shell(context.Background(), scenario.New(&out), in, &out, &errb, false); code != 0 {
			t.Errorf("%s: exit %d, stderr %q", word, code, errb.String())
		}
		if !strings.Contains(out.String(), "before") || strings.Contains(out.String(), "after") {
			t.Errorf("%s: stdout %q", word, out.String())
		}
	}
}

// run and shell bound the process's heap near what a scenario may hold (its sessions'
// buffers and its disk, and room for the rest), so that the garbage of views and failed
// saves does not double it: 60 failed saves of a 1 GB ring peaked at 2.3 GB, 1.4 now.
// A GOMEMLIMIT the user set is left alone.
func TestRunBoundsTheHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: run leaves it")
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	name := filepath.Join(t.TempDir(), "s.scenario")
	if err := os.WriteFile(name, []byte("register A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	if code := run([]string{"run", "-disk", "64", name}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got, want := debug.SetMemoryLimit(-1), int64(scenario.DefaultBufferMemory+64<<20+256<<20); got != want {
		t.Errorf("memory limit %d, want %d", got, want)
	}
}
