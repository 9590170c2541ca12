package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

const modesAbout = `Usage: etwemu modes check [flags]
       etwemu modes table [flags]

Answers how a Windows version treats a session's LogFileMode at start, from the rule
table of package logmode: for kernel loggers, which flags each version recognises,
which pairs it refuses and which flags imply or override others; for private loggers,
the restrictions Microsoft documents for them.

  check   prints the decision for one session start: accepted or refused, the effective
          LoggerMode, and every rule that fired with its version range. Exit status 0 if
          accepted, 1 if refused.
  table   lists the flags a version recognises and the rules in force for each.

Flags take Windows names (EVENT_TRACE_FILE_MODE_SEQUENTIAL), names without the
EVENT_TRACE_ prefix, short names (SEQUENTIAL, REAL_TIME) or hex (0x101), joined by
commas or '|'.

Example: etwemu modes check --version 6.2 --mode SEQUENTIAL,CIRCULAR --logfile a.etl --max-file-size 10`

// modesCheck holds the flags of modes check.
type modesCheck struct {
	fs                                  *flag.FlagSet
	version                             winver.Version
	mode, logfile, name, guid           *string
	maxSize, flushTimer, flushThreshold *uint64 // ULONGs: uint64s so that the bound is checked on 32-bit systems too
	autologger, json                    *bool
}

func newModesCheck() *modesCheck {
	c := &modesCheck{fs: flag.NewFlagSet("modes check", flag.ContinueOnError), version: winver.Default}
	fs := c.fs
	fs.Var(&c.version, "version", "Windows version: 5.0 ... 10.0, 1511 ... 2004")
	c.mode = fs.String("mode", "", "LogFileMode flags, e.g. SEQUENTIAL,REAL_TIME or 0x101")
	c.logfile = fs.String("logfile", "", "LogFileName (empty: none)")
	c.maxSize = fs.Uint64("max-file-size", 0, "MaximumFileSize (MB, or KB with USE_KBYTES_FOR_SIZE; 0 to 4294967295)")
	c.name = fs.String("name", "etwemu-session", "session name (\"NT Kernel Logger\" and \"Circular Kernel Context Logger\" are special)")
	c.guid = fs.String("guid", "", "session GUID (Wnode.Guid), e.g. SystemTraceControlGuid 9e814aad-3204-11d2-9a82-006008a86939 (with -name \"NT Kernel Logger\")")
	c.autologger = fs.Bool("autologger", false, "start as an AutoLogger session (the 0x2 bit of WMI_LOGGER_INFORMATION.Flags)")
	c.flushTimer = fs.Uint64("flush-timer", 0, "FlushTimer (0 to 4294967295)")
	c.flushThreshold = fs.Uint64("flush-threshold", 0, "FlushThreshold (0 to 4294967295)")
	c.json = fs.Bool("json", false, "print the decision as one JSON object (the exit status is the same)")
	return c
}

// modesTable holds the flags of modes table.
type modesTable struct {
	fs            *flag.FlagSet
	version       winver.Version
	private, json *bool
}

func newModesTable() *modesTable {
	t := &modesTable{fs: flag.NewFlagSet("modes table", flag.ContinueOnError), version: winver.Default}
	t.fs.Var(&t.version, "version", "Windows version: 5.0 ... 10.0, 1511 ... 2004")
	t.private = t.fs.Bool("private", false, "the rules of private loggers (EVENT_TRACE_PRIVATE_LOGGER_MODE) instead of the kernel's")
	t.json = t.fs.Bool("json", false, "print the table as one JSON object")
	return t
}

// modesHelp prints the usage and the flags of both subcommands.
func modesHelp(w io.Writer) {
	fmt.Fprintln(w, modesAbout)
	for _, fs := range []*flag.FlagSet{newModesCheck().fs, newModesTable().fs} {
		fmt.Fprintf(w, "\nFlags of %s:\n", fs.Name())
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

func runModes(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		modesHelp(stderr)
		fmt.Fprintln(stderr, "\netwemu modes: name a subcommand, check or table")
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		modesHelp(stdout)
		return 0
	case "check":
		return runModesCheck(args[1:], stdout, stderr)
	case "table":
		return runModesTable(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "etwemu modes: unknown subcommand %s (want check or table; etwemu help modes lists their flags)\n", quote.Short(args[0]))
	return 2
}

func runModesCheck(args []string, stdout, stderr io.Writer) int {
	c := newModesCheck()
	if code := parseFlags(c.fs, modesAbout, "", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: c.fs}
	b.uint("max-file-size", *c.maxSize, 0, 1<<32-1, "a ULONG of EVENT_TRACE_PROPERTIES")
	b.uint("flush-timer", *c.flushTimer, 0, 1<<32-1, "a ULONG of EVENT_TRACE_PROPERTIES")
	b.uint("flush-threshold", *c.flushThreshold, 0, 1<<32-1, "a ULONG of EVENT_TRACE_PROPERTIES")
	m, err := logmode.Parse(*c.mode)
	if err != nil {
		b.fail("-mode %s: %v", quote.Short(*c.mode), err)
	}
	q := logmode.Request{Version: c.version, Mode: m, Name: *c.name, LogFileName: *c.logfile,
		MaximumFileSize: uint32(*c.maxSize), FlushTimer: uint32(*c.flushTimer), FlushThreshold: uint32(*c.flushThreshold), AutoLogger: *c.autologger}
	if *c.guid != "" {
		if q.GUID, err = guid.Parse(*c.guid); err != nil {
			b.fail("-guid %s: %v", quote.Short(*c.guid), err)
		}
	}
	if code := b.done(stderr); code >= 0 {
		return code
	}
	var d logmode.Decision
	if err := logmode.CheckName(q.Name, q.GUID); err != nil { // what StartTrace checks first
		d = logmode.Decision{Request: q, Kind: q.Kind(), Err: err}
		if !*c.json {
			fmt.Fprintf(stdout, "Windows %s (%s), %v %q\nrequested:  %v (0x%08X)\ndecision:   refused: %v\n",
				q.Version, q.Version.Marketing(), q.Kind(), q.Name, q.Mode, uint32(q.Mode), err)
			return 1
		}
	} else {
		d = logmode.Decide(q)
	}
	if *c.json {
		if code := writeJSON("modes check", stdout, stderr, decisionJSON(&d)); code != 0 {
			return code
		}
	} else {
		printDecision(stdout, &d)
	}
	if !d.Accepted() {
		return 1
	}
	return 0
}

// modeJSON is a LogFileMode in modes check's JSON: the flags' names and the value.
type modeJSON struct {
	Flags string `json:"flags"` // joined by '|'; "" for none
	Value string `json:"value"` // 0x%08X
}

func modeOf(m logmode.Mode) modeJSON {
	s := ""
	if m != 0 {
		s = m.String()
	}
	return modeJSON{s, fmt.Sprintf("0x%08X", uint32(m))}
}

// decisionView is modes check's JSON: what printDecision prints, as fields.
type decisionView struct {
	Version        string    `json:"version"`
	Marketing      string    `json:"marketing"`
	Kind           string    `json:"kind"`
	Name           string    `json:"name"`
	Requested      modeJSON  `json:"requested"`
	Accepted       bool      `json:"accepted"`
	Error          string    `json:"error,omitempty"` // the refusal, with its Windows code
	Code           string    `json:"code,omitempty"`  // the refusal's code name
	Effective      *modeJSON `json:"effective,omitempty"`
	Ignored        *modeJSON `json:"ignored,omitempty"`
	Implied        *modeJSON `json:"implied,omitempty"`
	Overridden     *modeJSON `json:"overridden,omitempty"`
	FlushTimer     *uint32   `json:"flushTimer,omitempty"`     // where the decision changed it
	FlushThreshold *uint32   `json:"flushThreshold,omitempty"` // where the decision changed it
	Fired          []string  `json:"fired"`
}

func decisionJSON(d *logmode.Decision) decisionView {
	q := &d.Request
	v := decisionView{Version: q.Version.String(), Marketing: q.Version.Marketing(), Kind: d.Kind.String(), Name: q.Name,
		Requested: modeOf(q.Mode), Accepted: d.Accepted(), Fired: []string{}}
	if !v.Accepted {
		v.Error = d.Err.Error()
		var e *winerr.Errno
		if errors.As(d.Err, &e) {
			v.Code = e.Name()
		}
	} else {
		eff := modeOf(d.Effective)
		v.Effective = &eff
		for _, c := range []struct {
			dst **modeJSON
			m   logmode.Mode
		}{{&v.Ignored, d.Ignored}, {&v.Implied, d.Implied}, {&v.Overridden, d.Overridden}} {
			if c.m != 0 {
				m := modeOf(c.m)
				*c.dst = &m
			}
		}
		if d.FlushTimer != q.FlushTimer {
			v.FlushTimer = &d.FlushTimer
		}
		if d.FlushThreshold != q.FlushThreshold {
			v.FlushThreshold = &d.FlushThreshold
		}
	}
	for _, f := range d.Fired {
		v.Fired = append(v.Fired, f.String())
	}
	return v
}

func printDecision(w io.Writer, d *logmode.Decision) {
	q := &d.Request
	fmt.Fprintf(w, "Windows %s (%s), %v %q\n", q.Version, q.Version.Marketing(), d.Kind, q.Name)
	fmt.Fprintf(w, "requested:  %v (0x%08X)\n", q.Mode, uint32(q.Mode))
	if d.Accepted() {
		fmt.Fprintln(w, "decision:   accepted")
		fmt.Fprintf(w, "effective:  %v (0x%08X)\n", d.Effective, uint32(d.Effective))
		for _, c := range []struct {
			what string
			m    logmode.Mode
		}{{"ignored", d.Ignored}, {"implied", d.Implied}, {"overridden", d.Overridden}} {
			if c.m != 0 {
				fmt.Fprintf(w, "%-11s %v\n", c.what+":", c.m)
			}
		}
		if d.FlushTimer != q.FlushTimer {
			fmt.Fprintf(w, "FlushTimer: %d (requested %d)\n", d.FlushTimer, q.FlushTimer)
		}
		if d.FlushThreshold != q.FlushThreshold {
			fmt.Fprintf(w, "FlushThreshold: %d (requested %d)\n", d.FlushThreshold, q.FlushThreshold)
		}
	} else {
		fmt.Fprintf(w, "decision:   refused: %v\n", d.Err)
	}
	if len(d.Fired) == 0 {
		fmt.Fprintln(w, "no rule fired")
		return
	}
	fmt.Fprintln(w, "rules that fired:")
	for _, f := range d.Fired {
		fmt.Fprintf(w, "  %v\n", f)
	}
}

func runModesTable(args []string, stdout, stderr io.Writer) int {
	t := newModesTable()
	if code := parseFlags(t.fs, modesAbout, "", args, stdout, stderr); code >= 0 {
		return code
	}
	version, private := t.version, t.private
	kind := logmode.Kernel
	if *private {
		kind = logmode.Private
	}
	rules := logmode.RulesFor(version, kind)
	v := tableView{Version: version.String(), Marketing: version.Marketing(), Kind: kind.String(), Flags: []flagRow{}, EverySession: []string{}, Ignored: []string{}}
	for _, rec := range logmode.Recognitions() {
		r := rec.Kernel
		if kind == logmode.Private {
			r = rec.Private
		}
		if !logmode.Recognises(version, kind, rec.Flag) {
			v.Ignored = append(v.Ignored, logmode.ShortName(rec.Flag))
			continue
		}
		row := flagRow{Value: fmt.Sprintf("0x%08X", uint32(rec.Flag)), Flag: logmode.Name(rec.Flag), Recognised: fmt.Sprint(r), Rules: []string{}}
		for i := range rules {
			if rules[i].Flag == rec.Flag {
				row.Rules = append(row.Rules, rules[i].Describe())
			}
		}
		v.Flags = append(v.Flags, row)
	}
	for i := range rules {
		if rules[i].Flag == 0 && rules[i].Effect == logmode.RequiresOneOf {
			v.EverySession = append(v.EverySession, rules[i].Describe())
		}
	}
	if *t.json {
		return writeJSON("modes table", stdout, stderr, v)
	}
	fmt.Fprintf(stdout, "Windows %s (%s): LogFileMode flags of a %v\n\n", version, version.Marketing(), kind)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VALUE\tFLAG\tRECOGNISED\tRULES")
	for _, row := range v.Flags {
		own := row.Rules
		first := "-"
		if len(own) > 0 {
			first = own[0]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row.Value, row.Flag, row.Recognised, first)
		for _, o := range own[min(1, len(own)):] {
			fmt.Fprintf(tw, "\t\t\t%s\n", o)
		}
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nEvery session:")
	for _, r := range v.EverySession {
		fmt.Fprintf(stdout, "  %s\n", r)
	}
	if len(v.Ignored) > 0 {
		fmt.Fprintf(stdout, "\nNot recognised (ignored) by %s: %v\n", version, v.Ignored)
	}
	return 0
}

// tableView is modes table's table, for its text and its JSON.
type tableView struct {
	Version      string    `json:"version"`
	Marketing    string    `json:"marketing"`
	Kind         string    `json:"kind"`
	Flags        []flagRow `json:"flags"`        // the flags the version recognises
	EverySession []string  `json:"everySession"` // the rules of every session
	Ignored      []string  `json:"ignored"`      // the flags it does not recognise
}

// flagRow is one recognised flag and the rules in force for it.
type flagRow struct {
	Value      string   `json:"value"`
	Flag       string   `json:"flag"`
	Recognised string   `json:"recognised"` // since which version, as the text's RECOGNISED column
	Rules      []string `json:"rules"`
}
