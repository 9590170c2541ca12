// Package pmc models ETW_PMC_SUPPORT, the structure a logger gets when processor
// performance counters (PMCs) are configured for it, and supplies the counters.
//
// A logger nominates profile sources (KPROFILE_SOURCE values) with
// EventTraceProfileCounterListInformation or TracePmcCounterListInfo, then up to four
// hook ids (the events that carry counters) with EventTraceProfileEventListInformation or
// TracePmcEventListInfo. From then on every selected event written to the logger carries
// the counters of the processor that wrote it: after a SYSTEM_TRACE_HEADER, or in an
// EVENT_HEADER_EXT_TYPE_PMC_COUNTERS item.
//
// The layout of ETW_PMC_SUPPORT changes with the Windows version (Geoff Chappell,
// "ETW_PMC_SUPPORT"): the sources are an array of 4 (6.2 to 1607), of 8 (1703 to 1809) or a
// pointer (1903 and later). Layouts and limits are rule tables keyed by winver.Version.
//
// Counters come from a Source, the emulator's stand-in for the HAL: Linux perf events
// read with RDPMC or read(2) where the machine has a PMU, the time-stamp counter where it
// has none, or a deterministic synthetic source for tests and fuzzing. Detect explains
// which one this machine can use and why the better ones were passed over.
package pmc
