package main

import (
	"testing"

	"github.com/etwemu/etwemu/examples/internal/runmain"
)

func TestMain(m *testing.M) { runmain.Main(m, main) }

// The example, run as its own process with nothing changed but its import line, prints
// the provider's events as golang-etw's JSON within its five-second window.
func TestPrintsEvents(t *testing.T) {
	runmain.CheckKernelFileEvents(t, runmain.Run(t, ""))
}
