package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/examples"
	"github.com/etwemu/etwemu/scenario"
)

// chromium returns the headless browser the test drives, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ETWEMU_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it): the page is not tested in a browser")
	}
	return p
}

// lessonServer returns the browser, a server of the examples' lessons (closed when the
// test ends) and the folder for screenshots: $ETWEMU_SCREENSHOTS, or the test's own.
func lessonServer(t *testing.T) (bin string, srv *httptest.Server, dir string) {
	t.Helper()
	bin = chromium(t)
	lessons, err := LoadLessons(examples.Lessons)
	if err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(NewHandler(lessons, "", nil))
	t.Cleanup(srv.Close)
	dir = os.Getenv("ETWEMU_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	return bin, srv, dir
}

// browse loads url in headless Chromium, with virtual time so that the page's scripts
// and its requests finish before the DOM is taken, and returns the DOM; with shot it
// also saves a screenshot there.
func browse(t *testing.T, bin, url, shot string) string {
	t.Helper()
	return browseAt(t, bin, url, shot, "1500,1000")
}

// browseAt is browse in a window of size ("WIDTH,HEIGHT").
func browseAt(t *testing.T, bin, url, shot, size string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=30000", "--window-size=" + size}
	out, err := exec.CommandContext(ctx, bin, append(args, "--dump-dom", url)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", url, err)
	}
	if shot != "" {
		cmd := exec.CommandContext(ctx, bin, append(args, "--screenshot="+shot, url)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chromium --screenshot: %v\n%s", err, b)
		}
		if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
			t.Fatalf("screenshot %s: %v (%v)", shot, err, st)
		}
		t.Logf("screenshot: %s", shot)
	}
	return string(out)
}

var (
	tagRe  = regexp.MustCompile(`<[a-zA-Z]+((?:\s+[a-zA-Z-]+(?:="[^"]*")?)*)\s*>([^<]*)`)
	attrRe = regexp.MustCompile(`([a-zA-Z-]+)="([^"]*)"`)
)

// drawn returns every keyed value of the DOM (data-k), as the page's highlighting reads
// it: the element's data-v, or its text.
func drawn(dom string) map[string]string {
	out := map[string]string{}
	for _, m := range tagRe.FindAllStringSubmatch(dom, -1) {
		attrs := map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(m[1], -1) {
			attrs[a[1]] = html.UnescapeString(a[2])
		}
		k, ok := attrs["data-k"]
		if !ok {
			continue
		}
		if v, ok := attrs["data-v"]; ok {
			out[k] = v
		} else {
			out[k] = html.UnescapeString(m[2])
		}
	}
	return out
}

// shellViews runs a lesson's first n commands on a scenario machine, as `etwemu run` does,
// and returns the JSON its views print.
func shellViews(t *testing.T, lesson string, n int) (strdump, guids, regs, files []map[string]any, bufdump map[string][]map[string]any) {
	t.Helper()
	var out bytes.Buffer
	m := shellMachine(t, lesson, n, &out)
	get := func(cmd string, v any) {
		out.Reset()
		if err := m.Exec(cmd); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if err := json.Unmarshal(out.Bytes(), v); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out.Bytes())
		}
	}
	get("strdump -json", &strdump)
	get("guids -json", &guids)
	get("regs -json", &regs)
	get("files -json", &files)
	bufdump = map[string][]map[string]any{}
	for _, r := range strdump {
		id := fmt.Sprint(r["loggerId"])
		var rows []map[string]any
		get("bufdump #"+id+" -json", &rows)
		bufdump[id] = rows
	}
	return
}

// shellOutput runs a lesson's first n commands on a scenario machine, as `etwemu run`
// does, and returns what the n-th printed.
func shellOutput(t *testing.T, lesson string, n int) string {
	t.Helper()
	var out bytes.Buffer
	shellMachine(t, lesson, n, &out)
	return out.String()
}

// shellMachine runs a lesson's first n commands on a scenario machine that prints to out,
// which it clears before each command, and returns the machine, closed when the test
// ends: out holds what the n-th command printed.
func shellMachine(t *testing.T, lesson string, n int, out *bytes.Buffer) *scenario.Machine {
	t.Helper()
	l, err := ParseLesson(lesson, mustRead(t, lesson+".scenario"))
	if err != nil {
		t.Fatal(err)
	}
	m := scenario.New(out)
	t.Cleanup(m.Close)
	for _, s := range l.Steps[:n] {
		out.Reset()
		if s.Command != "" {
			if err := m.Exec(s.Command); err != nil {
				t.Fatalf("%s: %v", s.Command, err)
			}
		}
	}
	return m
}

// num formats a JSON number as the page draws it.
func num(v any) string { return fmt.Sprint(int64(v.(float64))) }

// checkDrawn compares the drawn values with the views' JSON: the sessions and their
// counters, each processor's current buffer and its offset, the GUID entries' slots,
// the registrations' EnableMask bits, the files. It returns how many values it compared.
func checkDrawn(t *testing.T, got map[string]string, lesson string, n int) int {
	t.Helper()
	strdump, guids, regs, files, bufdump := shellViews(t, lesson, n)
	checked := 0
	want := func(k, v string) {
		t.Helper()
		checked++
		if g, ok := got[k]; !ok {
			t.Errorf("the page draws no %s (want %q)", k, v)
		} else if g != v {
			t.Errorf("the page draws %s = %q, the view's JSON says %q", k, g, v)
		}
	}
	for _, r := range strdump {
		id := num(r["loggerId"])
		k := "logger." + id
		want(k+".name", r["name"].(string))
		want(k+".mode", r["loggerMode"].(string))
		for _, f := range []string{"eventsLost", "buffersWritten", "logBuffersLost", "realTimeBuffersLost", "numberOfBuffers", "freeBuffers", "peakBuffers"} {
			want(k+"."+f, num(r[f]))
		}
		free, flush := 0, 0
		for _, b := range bufdump[id] {
			bid := num(b["id"])
			want("buf."+id+"."+bid+".state", b["stateName"].(string))
			if b["current"].(bool) {
				want("cur."+id+"."+num(b["stream"]), bid)
				want("buf."+id+"."+bid+".offset", fmt.Sprintf("0x%x", int64(b["currentOffset"].(float64))))
			}
			switch b["stateName"] {
			case "Free":
				free++
			case "Flush":
				flush++
			}
		}
		want(k+".freelist", fmt.Sprint(free))
		want(k+".flushlist", fmt.Sprint(flush))
	}
	for _, g := range guids {
		id := g["guid"].(string)
		want("guid."+id+".refCount", num(g["refCount"]))
		used := map[string]bool{}
		for _, s := range g["slots"].([]any) {
			s := s.(map[string]any)
			i := num(s["slot"])
			used[i] = true
			want("guid."+id+".slot."+i, "L"+num(s["loggerId"]))
			want("guid."+id+".slot."+i+".logger", num(s["loggerId"]))
			want("guid."+id+".slot."+i+".level", num(s["level"]))
			want("guid."+id+".slot."+i+".any", s["matchAnyKeyword"].(string)) // exact: a hex string, not a float
		}
		for i := range 8 {
			if !used[fmt.Sprint(i)] {
				want(fmt.Sprintf("guid.%s.slot.%d", id, i), "free")
			}
		}
	}
	for _, r := range regs {
		if !r["registered"].(bool) {
			continue
		}
		p := r["provider"].(string)
		mask := int64(r["enableMask"].(float64))
		want("reg."+p+".enableMask", fmt.Sprintf("0b%08b", mask))
		want("reg."+p+".groupEnableMask", fmt.Sprintf("0b%08b", int64(r["groupEnableMask"].(float64))))
		for i := range 8 {
			want(fmt.Sprintf("reg.%s.bit.%d", p, i), fmt.Sprint(mask>>i&1))
		}
	}
	for _, f := range files {
		name := f["name"].(string)
		want("file."+name+".size", num(f["size"]))
		bufs := f["buffers"].([]any)
		want("file."+name+".buffers", fmt.Sprint(len(bufs)))
		for i, b := range bufs {
			want(fmt.Sprintf("file.%s.buf.%d", name, i), num(b.(map[string]any)["sequenceNumber"]))
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "logger.") && strings.HasSuffix(k, ".name") {
			found := false
			for _, r := range strdump {
				found = found || k == "logger."+num(r["loggerId"])+".name"
			}
			if !found {
				t.Errorf("the page draws %s, which strdump does not list", k)
			}
		}
	}
	return checked
}

// TestBrowserLesson01 drives headless Chromium through lesson 01 as a reader does, one
// Step at a time, and checks that the page draws what the shell's views print: at the
// step before the session stops (the session, its counters, each processor's current
// buffer, the provider's slot and its EnableMask bit), and at the end (the log file's
// buffers, no logger). The screenshots go to $ETWEMU_SCREENSHOTS, or the test's
// temporary folder.
func TestBrowserLesson01(t *testing.T) {
	bin, srv, dir := lessonServer(t)
	const lesson = "01-first-session"
	l, _ := ParseLesson(lesson, mustRead(t, lesson+".scenario"))
	last := len(l.Steps)
	for _, c := range []struct {
		name string
		hash string
		step int
	}{
		{"before-stop", fmt.Sprintf("#lesson=%s&play=%d&select=reg:Demo", lesson, last-1), last - 1},
		{"end", fmt.Sprintf("#lesson=%s&play=end", lesson), last},
	} {
		t.Run(c.name, func(t *testing.T) {
			dom := browse(t, bin, srv.URL+"/"+c.hash, filepath.Join(dir, "lesson01-"+c.name+".png"))
			if !strings.Contains(dom, `data-state="ready"`) || !strings.Contains(dom, fmt.Sprintf(`data-step="%d"`, c.step)) {
				t.Fatalf("the page did not reach step %d:\n%.2000s", c.step, dom)
			}
			got := drawn(dom)
			n := checkDrawn(t, got, lesson, c.step)
			if c.step == last-1 && (got["logger.2.name"] != "lesson" || got["reg.Demo.bit.0"] != "1") {
				t.Errorf("before the stop the page must draw the session and the mask bit: %v", got)
			}
			t.Logf("%d drawn values agree with the views' JSON", n)
		})
	}
}

// A command's output that holds a table keeps the table's columns: bufdump's line about
// the buffers stays text that wraps, and its table is a block of its own (span.table,
// drawn unwrapped with a scroll bar of its own) that holds exactly the table's lines. In
// the steps panel the table, wider than the panel, wrapped into a column of fragments.
// The screenshot shows the table as the page draws it.
func TestBrowserTablesKeepTheirColumns(t *testing.T) {
	bin, srv, dir := lessonServer(t)
	const lesson = "01-first-session"
	l, err := ParseLesson(lesson, mustRead(t, lesson+".scenario"))
	if err != nil {
		t.Fatal(err)
	}
	step := slices.IndexFunc(l.Steps, func(s Step) bool { return s.Command == "bufdump lesson" }) + 1
	if step == 0 {
		t.Fatal("lesson 01 has no step bufdump lesson")
	}
	dom := browse(t, bin, fmt.Sprintf("%s/#lesson=%s&play=%d", srv.URL, lesson, step), filepath.Join(dir, "lesson01-bufdump.png"))
	if !strings.Contains(dom, fmt.Sprintf(`data-step="%d"`, step)) {
		t.Fatalf("the page did not reach step %d:\n%.2000s", step, dom)
	}
	// What bufdump prints at that step: its first line, then the table.
	views := shellOutput(t, lesson, step)
	head, table, ok := strings.Cut(strings.TrimSuffix(views, "\n"), "\n")
	if !ok || !strings.HasPrefix(table, "Buffer  Processor") {
		t.Fatalf("bufdump's output is not a line and a table:\n%s", views)
	}
	text := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace // as the DOM's text is serialised
	want := `<pre class="out">` + text(head) + `<span class="table">` + text(table) + `</span></pre>`
	if !strings.Contains(dom, want) {
		t.Fatalf("the output is not drawn as its line and a table block %q:\n%.4000s", want, dom)
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := examples.Lessons.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The page stays whole on odd input: a lesson of no commands, and a selection in the
// address naming nothing, even a key every JavaScript object inherits.
func TestBrowserOddInput(t *testing.T) {
	bin := chromium(t)
	lessons, err := LoadLessons(examples.Lessons)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := ParseLesson("empty", "# only a comment\n")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(append(lessons, empty), "", nil))
	defer srv.Close()
	dir := os.Getenv("ETWEMU_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, c := range []struct{ name, hash, want string }{
		{"empty-lesson", "#lesson=empty&step=0", `data-step="0"`},
		{"inherited-key", "#lesson=01-first-session&play=2&select=reg:toString", "is gone at this step"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dom := browse(t, bin, srv.URL+"/"+c.hash, filepath.Join(dir, "odd-"+c.name+".png"))
			if !strings.Contains(dom, `data-state="ready"`) || !strings.Contains(dom, c.want) || strings.Contains(dom, `class="out err"`) {
				t.Fatalf("the page broke or lacks %q:\n%.3000s", c.want, dom)
			}
		})
	}
}

// A reader's mistakes leave the page working: a typed command the server refuses (longer
// than MaxCommandBytes) is taken back, the page staying at its step with the command in
// the box, and Step still works after it (the page kept sending it, and every button
// failed); the arrow keys on the focused lesson menu are the menu's, not the page's
// (they changed the step and the lesson at once), while elsewhere they step; and a
// phone-wide window lays the page out within its width.
func TestBrowserReaderMistakes(t *testing.T) {
	bin, srv, dir := lessonServer(t)
	long := strings.Repeat("A", MaxCommandBytes+1)
	for _, c := range []struct {
		name, hash, size string
		want             []string
	}{
		{"long-command", "#lesson=01-first-session&play=end&run=" + long + "&after=0", "1500,1000",
			[]string{`data-typed="0"`, `data-step="15"`, "at most 4096 bytes", fmt.Sprintf(`data-input="%d"`, len(long))}},
		{"long-command-then-back", "#lesson=01-first-session&step=5&run=" + long + "&after=1", "1500,1000",
			[]string{`data-typed="0"`, `data-step="6"`}},
		{"arrow-in-menu", "#lesson=01-first-session&step=3&key=lesson:ArrowRight", "1500,1000", []string{`data-step="3"`}},
		{"arrow-on-page", "#lesson=01-first-session&step=3&key=picture:ArrowRight", "1500,1000", []string{`data-step="4"`}},
		// Quick presses add up (ten presses went one step: those made while a request ran
		// were dropped).
		{"arrows-quick", "#lesson=01-first-session&step=3" + strings.Repeat("&key=picture:ArrowRight", 6) + "&key=picture:ArrowLeft", "1500,1000", []string{`data-step="8"`}},
		{"phone", "#lesson=13-blinded-provider&step=16", "390,844", []string{`data-step="16"`}},
		// A lesson's ## lines wrap its sentences: they show as one paragraph, the title
		// as one of its own (each line was a paragraph, breaking sentences in two).
		// An address edited in the bar goes where it says (the page ignored it).
		{"address", "#lesson=01-first-session&step=3&goto=lesson%3D04-circular%26step%3D2", "1500,1000",
			[]string{`data-step="2"`, `start ring mode=CIRCULAR`}},
		{"prose", "#lesson=01-first-session&step=1", "1500,1000",
			[]string{`<p class="comment">Lesson 1: a session, a provider, events on two processors, and the kernel's views.</p>`, "AutoLogger sessions itself, from their registry settings"}},
		// A name that reorders the line or holds an escape is shown escaped, in the step
		// list and on its card, as the text output shows it; a long one is cut.
		{"odd-names", "#lesson=01-first-session&play=end&run=register%20%E2%80%AEevil%1B%5B31m&run=register%20" + strings.Repeat("P", 3000), "1500,1000",
			[]string{`data-typed="2"`, `register \u202eevil\x1b[31m`, `\u202eevil\x1b[31m<small>`, "… (3000 characters)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dom := browseAt(t, bin, srv.URL+"/"+c.hash, filepath.Join(dir, "mistake-"+c.name+".png"), c.size)
			if !strings.Contains(dom, `data-state="ready"`) {
				t.Fatalf("the page did not get ready:\n%.2000s", dom)
			}
			for _, w := range c.want {
				if !strings.Contains(dom, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			// Headless Chromium's window is at least 500 pixels wide: the page must lay out
			// within it, not wider (it was 1,104 pixels, its columns side by side).
			width := regexp.MustCompile(`data-width="(\d+)"`).FindStringSubmatch(dom)
			client := regexp.MustCompile(`data-client-width="(\d+)"`).FindStringSubmatch(dom)
			if text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(dom, ""); strings.ContainsAny(text, "\u202e\x1b") {
				t.Errorf("the page shows a raw U+202E or ESC")
			}
			if (c.name == "phone" || c.name == "odd-names") && (width == nil || client == nil || atoi(width[1]) > atoi(client[1]) || c.name == "phone" && atoi(client[1]) > 520) {
				t.Errorf("a narrow window: the page lays out %v pixels wide in a window of %v", width, client)
			}
		})
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}
