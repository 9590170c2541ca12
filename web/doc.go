// Package web serves a live picture of the emulated kernel to a browser: `etwemu web`.
//
// The page draws what the scenario language's views print (strdump, logger, bufdump,
// guids, regs, files, guid, reg), from their JSON: GUID entries with their eight
// EnableInfo slots (ETW_GUID_ENTRY), registrations with the eight bits of EnableMask and
// GroupEnableMask (ETW_REG_ENTRY), each logger context (WMI_LOGGER_CONTEXT) with its
// counters, each processor's current buffer as a fill bar, its free and flush lists and
// where its buffers go, and the in-memory log files buffer by buffer. Clicking a
// structure shows it as dt prints it, with its live values.
//
// Two modes:
//
//   - Lessons (Handler): the lessons of the examples folder, and a scenario given on
//     the command line, are stepped forward and back. Each step re-runs the scenario on
//     a fresh deterministic kernel (synchronous, manual clock, in-memory disk) up to that
//     step, so a step draws the same picture every time; what changed since the previous
//     step is highlighted. A command box takes the scenario language against the kernel
//     at the current step. The browser keeps the state (lesson, typed commands, step);
//     the server keeps none, and bounds each replay (Limits) in memory and time.
//   - Live (Live): writer goroutines, as `etwemu demo` runs them, write on a kernel with
//     logger goroutines and real clocks; the page polls the same views several times a
//     second. A poll reads the kernel's counters and buffer headers, which the writers
//     publish atomically, so it never stops the writers.
//
// The assets (HTML, CSS, plain JavaScript, no toolchain) are embedded; the page loads
// nothing from anywhere else. The server listens on DefaultAddr, the loopback interface,
// unless told otherwise, and writes no file: log files are in memory.
package web
