// Package logmode is the version-by-version table of how Windows interprets LogFileMode
// when a session starts (for the kernel, Geoff Chappell, "LogFileMode", geoffchappell.com,
// Kernel-Mode Windows; for user-mode private loggers, the restrictions Microsoft documents
// in "Logging Mode Constants"): which flags each version recognises, which combinations it
// refuses with STATUS_INVALID_PARAMETER, which flags imply or override others, what
// properties they require, and what allows EVENT_TRACE_NONSTOPPABLE_MODE.
//
// Decide answers "would version V start this session, and with what effective LoggerMode
// and properties?" and says which rules fired. It is a leaf: session, emu and the command
// line use it, and it imports only the version, GUID and error-code packages.
package logmode
