// Command mutate measures what the fuzz targets find: it plants realistic bugs in a
// copy of the source tree, one at a time, runs each fuzz target on each with a fixed
// budget of executions from an empty fuzz cache (the committed corpus as seeds), and
// prints which bugs each target found, and after how many executions.
//
//	go run ./fuzz/mutate                      every bug, the full budgets
//	go run ./fuzz/mutate -only 'slot|level'   the bugs whose names match
//	go run ./fuzz/mutate -interplay 20000 -concurrent 5000 -decide 20000
//
// A target whose budget is 0 is not run ("-" in the table), nor is FuzzDecide on a bug
// outside package logmode, which it does not exercise.
//
// A bug is found by a seed when the target fails on the committed corpus before it
// generates an input, and by fuzzing when a generated input fails (the output then
// says "Failing input written to"). A target that runs past its time limit is reported
// as a hang. The exit status is 1 when some bug no target found (unless -report), 2 for
// a tool error (a patch that no longer applies, a build that fails).
//
// Each bug is a text patch of one file; when the code it patches changes, the tool says
// so and stops, and the patch must be brought up to date.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// bug is one planted bug: in file, the text old becomes new.
type bug struct {
	name     string
	file     string
	old, new string
}

// bugs are the planted bugs, across the packages the fuzz targets exercise.
var bugs = []bug{
	{"regentry: disable leaves the old EnableMask bits set", "regentry/entry.go",
		"nw := old&^(enableMaskBits<<shift) | uint64(mask)<<shift", "nw := old | uint64(mask)<<shift"},
	{"guidtable: the free-slot search stops at slot 7", "guidtable/entry.go",
		"func (e *Entry) freeSlotLocked() int {\n\tfor i := range e.slots {", "func (e *Entry) freeSlotLocked() int {\n\tfor i := range e.slots[:7] {"},
	{"guidtable: events at the enabled level dropped", "guidtable/enableinfo.go",
		"if level > e.level {", "if level >= e.level {"},
	{"guidtable: MatchAllKeyword ignored", "guidtable/enableinfo.go",
		"return keyword&e.any != 0 && keyword&e.MatchAllKeyword == e.MatchAllKeyword", "return keyword&e.any != 0"},
	{"session: a no-free-buffer loss not counted in EventsLost", "session/reserve.go",
		"if err != nil && err != ErrStopped && err != ErrCancelled {\n\t\tl.eventsLost.Add(1)\n\t}", "_ = err"},
	{"session: a retired buffer both freed and queued", "session/switch.go",
		"\t\tl.pushFree(b)\n\t\treturn\n\t}\n\tl.queueFlush(b)", "\t\tl.pushFree(b)\n\t}\n\tl.queueFlush(b)"},
	{"session: stop drops the processors' current BUFFERING buffers", "session/ring.go",
		"func (l *Logger) ring() []*Buffer {\n\tl.swapStreams()\n\tl.freeMu.Lock()\n\tq := append([]*Buffer(nil), l.flushQ...)\n",
		"func (l *Logger) ring() []*Buffer {\n\tdefer l.swapStreams()\n\tl.freeMu.Lock()\n\tq := append([]*Buffer(nil), l.flushQ...)\n"},
	{"session: a shortage no longer grows the session", "session/flush.go",
		"n = max(n, 0) + len(l.streams)", "n = max(n, 0)"},
	{"session: thread and process ids swapped in the header", "session/header_unsafe.go",
		"uint64(tid) | uint64(pid)<<32", "uint64(pid) | uint64(tid)<<32"},
	{"logmode: INDEPENDENT_SESSION_MODE recognised from 6.2", "logmode/rules.go",
		"{IndependentSession, since(winver.V6_3), since(winver.V6_3)}", "{IndependentSession, since(winver.V6_2), since(winver.V6_3)}"},
	// A disable that does not invalidate the cached route cannot be seen through the
	// API: the route caches one session, so after the disable the registration's mask
	// is zero and EventWrite returns before it looks at the route. An enable can.
	{"emu: enable no longer invalidates EventWrite's cached route", "emu/enable.go",
		"\t\tk.rerouteLocked(c.Regs...)\n\t\tk.queueChangeLocked(c, changeEnable, ep.SourceID)", "\t\tk.queueChangeLocked(c, changeEnable, ep.SourceID)"},
	{"emu: a session enabled for a provider and its group gets the event twice", "emu/write.go",
		"\t\tseen[info.LoggerID>>6] |= 1 << (info.LoggerID & 63)\n\t\terrIdx = deliver(l, info, proc, &ev, tooBig, errIdx, tally)\n",
		"\t\terrIdx = deliver(l, info, proc, &ev, tooBig, errIdx, tally)\n"},
	{"emu: INDEPENDENT_SESSION_MODE ignored after a failure", "emu/write.go",
		"errIdx != 0 && errIdx&denied == 0 && !l.Independent()", "errIdx != 0 && errIdx&denied == 0"},
	{"etl: a full SEQUENTIAL file refuses the buffer that fits exactly", "etl/writer.go",
		"if w.limit == 0 || w.pos+n <= w.limit {", "if w.limit == 0 || w.pos+n < w.limit {"},
	{"guidtable: an EVENT_ID filter keeps the ids it should drop", "guidtable/filter.go",
		"return found == f.EventIDsIn", "return found"},
	{"guidtable: a PID filter reads only its first process id", "guidtable/filter.go",
		"if f.PIDs != nil && !slices.Contains(f.PIDs, pid) {", "if f.PIDs != nil && f.PIDs[0] != pid {"},
	{"guidtable: an EXECUTABLE_NAME filter matches names only in the case it keeps them", "guidtable/filter.go",
		"return strings.EqualFold(n, exe) }) {", "return n == exe }) {"},
	{"emu: EventWrite's cached route skips the enable's filters", "emu/route.go",
		"!l.Secure() && !info.Special {", "!l.Secure() {"},
	{"emu: an event one enablement's filters drop is lost to the session's other enablement", "emu/write.go",
		"\t\tif info.Special || extra.Props != 0 {\n\t\t\tif !k.ready(&ev, &extra, info, &hold) {",
		"\t\tseen[info.LoggerID>>6] |= 1 << (info.LoggerID & 63)\n\t\tif info.Special || extra.Props != 0 {\n\t\t\tif !k.ready(&ev, &extra, info, &hold) {"},
	{"session: an EVENT_KEY item left out of the record's size", "session/reserve.go",
		"\tif have&hasKey != 0 {\n\t\tn += abi.ExtItemSize(8)\n\t}\n", ""},
	{"emu: a session's records take the extended items of the session before it", "emu/write.go",
		"extra.Props = props", "extra.Props |= props"},
	{"emu: a STACK_TRACE item holds one return address too few", "emu/items.go",
		"n := callstack.Callers(pcs[:])", "n := callstack.Callers(pcs[:callstack.Frames-1])"},
	{"emu: the process start key without its boot number", "emu/items.go",
		"x.ProcessStartKey = startKeyBoot | uint64(k.pid)", "x.ProcessStartKey = uint64(k.pid)"},
	{"emu: PROCESS_START_KEY taken before Windows 10", "emu/enable.go",
		"{guidtable.PropertyProcessStartKey, \"PROCESS_START_KEY\", winver.V10_0},", "{guidtable.PropertyProcessStartKey, \"PROCESS_START_KEY\", enableSince},"},
}

// target is one fuzz target and its budget.
type target struct {
	pkg, name string
	budget    *int
	only      string // if set, the target runs only for bugs in files under this directory
}

func main() {
	var (
		interplay  = flag.Int("interplay", 150000, "FuzzInterplay's budget in executions beyond its corpus (0: do not run it)")
		concurrent = flag.Int("concurrent", 30000, "FuzzConcurrent's budget in executions (0: do not run it)")
		decide     = flag.Int("decide", 150000, "FuzzDecide's budget in executions, run for the logmode bugs only (0: do not run it)")
		only       = flag.String("only", "", "plant only the bugs whose names match this regular expression")
		limit      = flag.Duration("limit", 10*time.Minute, "time limit of one target's run on one bug; past it the run counts as a hang")
		report     = flag.Bool("report", false, "exit 0 even when some bug was not found")
		list       = flag.Bool("list", false, "list the bugs and exit")
		keep       = flag.Bool("keep", false, "keep the temporary copy of the tree and print where it is")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./fuzz/mutate [flags]\n\nPlants each bug in a copy of the tree and runs every fuzz target on it.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *list {
		w := 0
		for _, b := range bugs {
			w = max(w, len(b.name))
		}
		for _, b := range bugs {
			fmt.Printf("%-*s  %s\n", w, b.name, b.file)
		}
		return
	}
	var re *regexp.Regexp
	if *only != "" {
		var err error
		if re, err = regexp.Compile(*only); err != nil {
			fatal(fmt.Errorf("-only: %w", err))
		}
	}
	for _, v := range []*int{interplay, concurrent, decide} {
		if *v < 0 {
			fatal(errors.New("a budget must be 0 or more executions"))
		}
	}
	targets := []target{
		{"./fuzz", "FuzzInterplay", interplay, ""},
		{"./fuzz", "FuzzConcurrent", concurrent, ""},
		{"./logmode", "FuzzDecide", decide, "logmode/"},
	}
	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "etwemu-mutate-")
	if err != nil {
		fatal(err)
	}
	if *keep {
		fmt.Println("copy of the tree:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	tree := filepath.Join(tmp, "tree")
	if err := copyTree(root, tree); err != nil {
		fatal(err)
	}

	var rows [][]string
	missed := 0
	for _, b := range bugs {
		if re != nil && !re.MatchString(b.name) {
			continue
		}
		path := filepath.Join(tree, b.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			fatal(err)
		}
		if n := bytes.Count(orig, []byte(b.old)); n != 1 {
			fatal(fmt.Errorf("bug %q: %s holds the text to replace %d times, not once; bring the patch up to date", b.name, b.file, n))
		}
		if err := os.WriteFile(path, bytes.Replace(orig, []byte(b.old), []byte(b.new), 1), 0o644); err != nil {
			fatal(err)
		}
		row := []string{b.name}
		found := false
		for _, t := range targets {
			if *t.budget == 0 || t.only != "" && !strings.HasPrefix(b.file, t.only) {
				row = append(row, "-")
				continue
			}
			v := run(tree, filepath.Join(tmp, "cache"), t, *limit)
			found = found || v.found
			row = append(row, v.String())
			fmt.Fprintf(os.Stderr, "%s / %s: %v %s\n", b.name, t.name, v, v.why)
		}
		if !found {
			missed++
		}
		rows = append(rows, row)
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			fatal(err)
		}
	}
	header := []string{"planted bug"}
	for _, t := range targets {
		header = append(header, fmt.Sprintf("%s (%d execs)", t.name, *t.budget))
	}
	printTable(os.Stdout, header, rows)
	fmt.Printf("\n%d of %d planted bugs found by some target.\n", len(rows)-missed, len(rows))
	if missed > 0 && !*report {
		os.Exit(1)
	}
}

// verdict is what one target's run on one bug showed.
type verdict struct {
	found, seed, hang bool
	execs             int64 // the last count the fuzzer reported before it stopped
	took              time.Duration
	budget            int
	why               string // the first line of the failure
}

func (v verdict) String() string {
	switch {
	case v.hang:
		return fmt.Sprintf("hang (no verdict in %v)", v.took.Round(time.Second))
	case v.seed:
		return "seed (0 execs)"
	case v.found:
		return fmt.Sprintf("≤%s execs (%v)", group(v.execs), v.took.Round(time.Second))
	}
	return fmt.Sprintf("not found (%s)", group(int64(v.budget)))
}

var progress = regexp.MustCompile(`fuzz: elapsed: \S+, execs: (\d+)`)

// run builds t's package in the tree and runs the target with its budget from an empty
// fuzz cache.
func run(tree, cacheRoot string, t target, limit time.Duration) verdict {
	v := verdict{budget: *t.budget}
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		fatal(err)
	}
	cache, err := os.MkdirTemp(cacheRoot, "")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(cache)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", t.pkg, "-run", "^$", "-fuzz", "^"+t.name+"$",
		"-fuzztime", strconv.Itoa(*t.budget)+"x", "-fuzzminimizetime", "2s", "-args", "-test.fuzzcachedir="+cache)
	cmd.Dir = tree
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	v.took = time.Since(start)
	text := out.String()
	for _, m := range progress.FindAllStringSubmatch(text, -1) {
		v.execs, _ = strconv.ParseInt(m[1], 10, 64)
	}
	switch {
	case ctx.Err() != nil:
		v.hang = true
	case err == nil:
	case strings.Contains(text, "[build failed]") || strings.Contains(text, "setup failed"):
		fatal(fmt.Errorf("%s does not build with the bug planted:\n%s", t.pkg, text))
	case strings.Contains(text, "Failing input written to"):
		v.found = true
	default:
		v.found, v.seed = true, true
	}
	if v.found {
		for _, line := range strings.Split(text, "\n") {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "fuzz_test.go:") || strings.HasPrefix(l, "panic:") {
				v.why = l
				break
			}
		}
	}
	return v
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not in a Go module: run from the etwemu tree")
	}
	return filepath.Dir(mod), nil
}

// copyTree copies the module's files (not .git, not testdata/fuzz caches of other
// runs) into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if d.Name() == ".git" || (rel != "." && strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

func printTable(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(w, strings.Repeat("|---", len(header))+"|")
	for _, r := range rows {
		fmt.Fprintln(w, "| "+strings.Join(r, " | ")+" |")
	}
}

func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}
