// Package runmain runs an example command's main in a process of its own, from the
// command's tests: the test binary starts itself again with an environment variable that
// makes its TestMain call main instead of the tests, and the test reads what main wrote.
package runmain

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// env is the variable that makes TestMain call main.
const env = "ETWEMU_EXAMPLE_RUN_MAIN"

// limit bounds one run: far beyond the examples' own five-second window, so that only a
// hung run fails on it, however busy the machine.
const limit = 2 * time.Minute

// Main calls main and exits when the process was started by Run; otherwise it runs the
// tests. Call it from TestMain.
func Main(m *testing.M, main func()) {
	if os.Getenv(env) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Run starts the test binary again so that it runs main with stdin as its input, and
// returns what main wrote to stdout. A failed run fails the test with its stderr.
func Run(t *testing.T, stdin string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), env+"=1")
	cmd.Stdin = bytes.NewBufferString(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("main: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}
