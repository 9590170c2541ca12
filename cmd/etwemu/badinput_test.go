package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command refuses bad input with a non-zero exit and a first line on stderr that
// names the flag (or argument) and what is wrong: no panic, no silent success. Run with
// -v for the table of inputs, exit codes and messages.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	etlFile := filepath.Join(dir, "ring.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"logsave", "-events", "2000", "-o", etlFile}, &out, &errb); code != 0 {
		t.Fatalf("logsave for the test file: exit %d: %s", code, errb.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "not7.etl"), []byte("not an ETL file"), 0o644); err != nil {
		t.Fatal(err)
	}
	notETL := filepath.Join(dir, "not.etl")
	if err := os.WriteFile(notETL, bytes.Repeat([]byte("not an ETL file "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.etl")
	demoFile := filepath.Join(dir, "demo.etl")
	cases := []struct {
		args []string
		code int
		want string // in the first line of stderr
	}{
		{[]string{"demo", "-payload", "-5"}, 2, "-payload -5: must be 0 to 65455"},
		{[]string{"run", missing}, 1, "ERROR_FILE_NOT_FOUND (2): " + missing + ": no such file"},
		{[]string{"run", dir}, 1, "ERROR_ACCESS_DENIED (5): " + dir + " is a folder"},
		{[]string{"web", missing}, 1, "ERROR_FILE_NOT_FOUND (2)"},
		{[]string{"demo", "-pmc", "TotalCycles", "-pmc-source", "nope"}, 2, `-pmc-source "nope": not a counter source`},
		{[]string{"pmc", "-source", "nope"}, 2, `-source "nope": not a counter source`},
		{[]string{"demo", "-payload", "70000"}, 2, "-payload 70000"},
		{[]string{"demo", "-processors", "0"}, 2, "-processors 0: must be 1 to 2048"},
		{[]string{"demo", "-processors", "5000"}, 2, "-processors 5000"},
		{[]string{"demo", "-duration", "0"}, 2, "-duration 0s"},
		{[]string{"demo", "-duration", "-1s"}, 2, "-duration -1s"},
		{[]string{"demo", "-slow-sink", "-2ms"}, 2, "-slow-sink -2ms"},
		{[]string{"demo", "-slow-sink", "5s"}, 2, "-slow-sink 5s"},
		{[]string{"demo", "-max-file-size", "5"}, 2, "-max-file-size needs -logfile"},
		{[]string{"demo", "-compress"}, 2, "-compress needs -logfile"},
		{[]string{"demo", "-pmc-source", "tsc"}, 2, "-pmc-source needs -pmc"},
		{[]string{"demo", "-version", "5.0"}, 2, "-version 5.0: the providers register with EventRegister"},
		{[]string{"demo", "-version", "5.1"}, 2, "-version 5.1"},
		{[]string{"demo", "-version", "7"}, 2, "-version"},
		{[]string{"demo", "-buffer-kb", "99999"}, 2, "-buffer-kb 99999: must be 0 to 16384"},
		{[]string{"demo", "-buffer-kb", "-1"}, 2, "-buffer-kb"},
		{[]string{"demo", "-min-buffers", "10", "-max-buffers", "5"}, 2, "-min-buffers 10 is more than -max-buffers 5"},
		{[]string{"demo", "-min-buffers", "99999999"}, 2, "-min-buffers 99999999"},
		{[]string{"demo", "-mode", "BOGUS"}, 2, `-mode "BOGUS"`},
		{[]string{"demo", "-progress", "-1s"}, 2, "-progress -1s"},
		{[]string{"demo", "-progress", "1ns"}, 2, "-progress 1ns: must be 10ms to 1h0m0s (or 0 for no progress lines)"},
		{[]string{"demo", "-events", "-1"}, 2, "-events"},
		{[]string{"demo", "-events", "-5"}, 2, "-events -5: must be 0 to 1099511627776"},
		{[]string{"demo", "-pmc", "NoSuchCounter"}, 2, `-pmc "NoSuchCounter"`},
		{[]string{"demo", "-pmc", "CacheMisses", "-pmc-source", "tsc", "-duration", "10ms"}, 1, "-pmc-source synthetic counts every profile source"},
		{[]string{"demo", "-force"}, 2, "-force needs -logfile"},
		{[]string{"demo", "-logfile", notETL}, 1, "exists and is not an ETL file"},
		// NEWFILE would write over not7.etl once the session reached its seventh file.
		{[]string{"demo", "-logfile", filepath.Join(dir, "not%d.etl"), "-mode", "NEWFILE", "-max-file-size", "1"}, 1, "not7.etl exists and is not an ETL file"},
		{[]string{"logsave", "-o", notETL}, 1, "ERROR_ALREADY_EXISTS (183): -o " + notETL + " exists and is not an ETL file"},
		{[]string{"demo", "-logfile", demoFile, "-max-file-size", "5000000000"}, 2, "-max-file-size 5000000000"},
		{[]string{"demo", "-payload", "5000", "-buffer-kb", "4"}, 1, "does not fit a 4 KB buffer"},
		{[]string{"demo", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"dump", "-payload", "-5", "-limit", "2", etlFile}, 2, "-payload -5: must be 0 to 65535"},
		{[]string{"dump", "-limit", "-1", etlFile}, 2, "-limit -1"},
		{[]string{"dump", "-payload", "70000", etlFile}, 2, "-payload 70000"},
		{[]string{"dump", "-summary", "-payload", "8", etlFile}, 2, "-payload has no effect with -summary"},
		{[]string{"dump", "-summary", "-sort", "time", etlFile}, 2, "-sort has no effect with -summary"},
		{[]string{"dump"}, 2, "name one FILE.etl"},
		{[]string{"dump", etlFile, etlFile}, 2, "name one FILE.etl (got 2 arguments)"},
		{[]string{"dump", missing}, 1, "missing.etl"},
		{[]string{"dump", notETL}, 1, "etwemu dump:"},
		{[]string{"logsave", "-payload", "5000", "-o", filepath.Join(dir, "x.etl")}, 1, "does not fit a 4 KB buffer"},
		{[]string{"logsave", "-events", "0"}, 2, "-events 0: must be 1 to"},
		{[]string{"logsave", "-events", "-3"}, 2, "-events -3"},
		{[]string{"logsave", "-buffer-kb", "0"}, 2, "-buffer-kb 0: must be 1 to 16384"},
		{[]string{"logsave", "-payload", "70000"}, 2, "-payload 70000"},
		{[]string{"logsave", "-o", ""}, 2, "-o: name the file"},
		{[]string{"logsave", "-version", "5.2"}, 2, "-version 5.2"},
		{[]string{"logsave", "-buffers", "200000"}, 2, "-buffers 200000"},
		{[]string{"pmc", "-counters", "0"}, 2, "-counters 0: must be 1 to"},
		{[]string{"pmc", "-counters", "-1"}, 2, "-counters -1"},
		{[]string{"pmc", "-counters", "1000"}, 2, "-counters 1000"},
		{[]string{"pmc", "-reads", "0"}, 2, "-reads 0"},
		{[]string{"pmc", "-source", "nonsense"}, 2, `-source "nonsense": not a counter source`},
		{[]string{"bench", "-benchtime", "0s"}, 2, "-benchtime 0s"},
		{[]string{"bench", "-benchtime", "-1s"}, 2, "-benchtime -1s"},
		{[]string{"bench", "-benchtime", "1h"}, 2, "-benchtime 1h0m0s"},
		{[]string{"bench", "-json"}, 2, "-json needs -sweep"},
		{[]string{"bench", "-sweep", "-max-writers", "0"}, 2, "-max-writers 0: must be 1 to 256"},
		{[]string{"bench", "-sweep", "-max-writers", "-1"}, 2, "-max-writers -1: must be 1 to 256"},
		{[]string{"bench", "-sweep", "-max-writers", "1000000000"}, 2, "-max-writers 1000000000: must be 1 to 256"},
		{[]string{"bench", "-sweep", "-full"}, 2, "-full and -sweep: choose one"},
		{[]string{"bench", "-sweep", "-writers", "1,x"}, 2, `-writers 1,x: "x" is not a number of writers`},
		{[]string{"bench", "-sweep", "-writers", "0,4"}, 2, "-writers 0,4: 0: each count must be 1 to 256"},
		{[]string{"bench", "-sweep", "-writers", "4,2"}, 2, "-writers 4,2: 2 after 4: list the counts once each, in increasing order"},
		{[]string{"bench", "-sweep", "-writers", "2", "-max-writers", "4"}, 2, "-writers and -max-writers: choose one"},
		{[]string{"bench", "-writers", "2"}, 2, "-writers needs -sweep"},
		{[]string{"run", "-disk", "0", "no-such-file.scenario"}, 2, "-disk 0: must be 1 to"},
		{[]string{"modes", "check", "-mode", "NOPE"}, 2, `-mode "NOPE"`},
		{[]string{"modes", "check", "-max-file-size", "5000000000"}, 2, "-max-file-size 5000000000"},
		{[]string{"modes", "check", "-flush-timer", "5000000000"}, 2, "-flush-timer 5000000000"},
		{[]string{"modes", "check", "-guid", "xyz"}, 2, `-guid "xyz"`},
		{[]string{"modes", "table", "-version", "99"}, 2, "-version"},
		{[]string{"modes", "bogus"}, 2, `unknown subcommand "bogus"`},
		{[]string{"modes"}, 2, "Usage: etwemu modes check"},
		{[]string{"version", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"help", "nonsense"}, 2, `unknown command "nonsense"`},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
	}
	t.Logf("| command | exit | first line of stderr |")
	t.Logf("|---|---|---|")
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		first, _, _ := strings.Cut(errb.String(), "\n")
		shown := strings.ReplaceAll(strings.Join(c.args, " "), dir+string(filepath.Separator), "")
		t.Logf("| `etwemu %s` | %d | %s |", shown, code, strings.ReplaceAll(first, dir+string(filepath.Separator), ""))
		if code != c.code || !strings.Contains(first, c.want) {
			t.Errorf("etwemu %s: exit %d, first line %q; want exit %d and %q", shown, code, first, c.code, c.want)
		}
	}
	// modes with no subcommand prints its usage and then says what is missing.
	var modesOut, modesErr bytes.Buffer
	if code := run([]string{"modes"}, &modesOut, &modesErr); code != 2 || !strings.HasSuffix(modesErr.String(), "\netwemu modes: name a subcommand, check or table\n") {
		t.Errorf("etwemu modes: exit %d, stderr ends %q", code, modesErr.String()[max(0, modesErr.Len()-80):])
	}
	// Refused before anything is created: no log file is left behind.
	if code := run([]string{"demo", "-version", "5.1", "-logfile", demoFile}, &out, &errb); code != 2 {
		t.Fatalf("demo -version 5.1 -logfile: exit %d", code)
	}
	if _, err := os.Stat(demoFile); !os.IsNotExist(err) {
		t.Fatalf("demo -version 5.1 left %s behind (%v)", demoFile, err)
	}
	if len(cases) < 40 {
		t.Fatalf("%d cases; the table should cover at least 40 bad inputs", len(cases))
	}
}

// A flag the flag package refuses is named with the command, and a duration or number
// flag says what it takes: go test's "1x" is no duration, -1 no count, and a duration
// past the largest says so.
func TestFlagParseErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "-benchtime", "1x"}, "etwemu bench: invalid value \"1x\" for flag -benchtime: parse error (a duration such as 300ms, 2s or 1m)"},
		{[]string{"web", "-duration", "5q"}, "etwemu web: invalid value \"5q\" for flag -duration: parse error (a duration"},
		{[]string{"dt", "-bogus"}, "etwemu dt: flag provided but not defined: -bogus"},
		{[]string{"dump", "-limit", "abc", "x.etl"}, "etwemu dump: invalid value \"abc\" for flag -limit: parse error (a whole number)\n"},
		{[]string{"demo", "-buffer-kb", "-1"}, "etwemu demo: invalid value \"-1\" for flag -buffer-kb: parse error (a whole number, 0 or more)\n"},
		{[]string{"demo", "-duration", "9999999h"}, "parse error (a duration such as 300ms, 2s or 1m; that one passes the largest, about 2562047h)\n"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// A boolean flag given as false asks for nothing: a script may pass -compress=false or
// -force=false without the file they would need.
func TestFalseFlagsNeedNothing(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "-compress=false", "-duration", "10ms", "-progress", "0"},
		{"demo", "-force=false", "-duration", "10ms", "-progress", "0"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// An argument a command does not know is echoed cut short, as the scenario language cuts
// names: a 100 KB structure name made a 100 KB error line.
func TestLongArgumentsEchoedShort(t *testing.T) {
	long := strings.Repeat("X", 100<<10)
	for _, args := range [][]string{
		{"dt", long}, {"dt", "ETW_REG_ENTRY", long}, {"modes", long}, {"modes", "check", "-guid", long},
		{long}, {"version", long}, {"dump", "-sort", long, "f.etl"}, {"demo", "-mode", long},
	} {
		var out, errb strings.Builder
		code := run(args, &out, &errb)
		if code == 0 || errb.Len() > 4096 || !strings.Contains(errb.String(), "XXXX") {
			t.Errorf("%s ...: exit %d, %d bytes on stderr", args[0][:min(len(args[0]), 8)], code, errb.Len())
		}
	}
}
