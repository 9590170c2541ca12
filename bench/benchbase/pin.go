package benchbase

// PinEnv is the environment variable that pins the one-goroutine benchmarks that call
// Start (Run, FloorFair, benchsuite's emulator rows) to a CPU: set to a CPU number, the
// goroutine that runs the benchmark's loop is locked to its thread and the thread to
// that CPU, on Linux. A virtual machine's vCPUs need not run equally fast (bench/HISTORY.md, "Which
// vCPU the writer ran on"), and a writer left free moves between them from run to run;
// pinned, two builds are compared on the same vCPU. Only the writer is pinned: the
// emulator's logger goroutine, and the runtime's other threads, run where the scheduler
// puts them, as they do for the unpinned rows.
const PinEnv = "ETWEMU_BENCH_CPU"
