package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/examples"
)

func handler(t *testing.T, live *Live) *Handler {
	t.Helper()
	lessons, err := LoadLessons(examples.Lessons)
	if err != nil || len(lessons) < 10 {
		t.Fatalf("lessons: %d, %v", len(lessons), err)
	}
	return NewHandler(lessons, "", live)
}

func post(t *testing.T, h http.Handler, body string) (*httptest.ResponseRecorder, *Frame) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, request("POST", "/api/frame", body))
	if w.Code != http.StatusOK {
		return w, nil
	}
	var f Frame
	if err := json.Unmarshal(w.Body.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	return w, &f
}

// A step draws the same picture every time: the replay is deterministic.
func TestReplayIsDeterministic(t *testing.T) {
	h := handler(t, nil)
	a, _ := post(t, h, `{"lesson":"04-circular","step":5}`)
	b, _ := post(t, h, `{"lesson":"04-circular","step":5}`)
	if a.Code != 200 || !bytes.Equal(a.Body.Bytes(), b.Body.Bytes()) {
		t.Fatalf("two replays of one step differ (%d):\n%s\n%s", a.Code, a.Body, b.Body)
	}
	_, f := post(t, h, `{"lesson":"04-circular","step":5}`)
	if f.Step != 5 || len(f.Ran) != 5 || f.Views.Loggers["2"].Bufdump == nil || !strings.Contains(string(f.Views.Files), "ring.etl") {
		t.Fatalf("frame: step %d, %d ran, views %+v", f.Step, len(f.Ran), f.Views)
	}
}

// Typed commands run after the lesson's steps, failures are recorded and the replay
// goes on; a poke shows as tampering and the GUID entry and registration disagree.
func TestTypedCommands(t *testing.T) {
	h := handler(t, nil)
	_, f := post(t, h, `{"lesson":"01-first-session","typed":["bogus","start t mode=REAL_TIME","register P","enable t P","poke reg P mask=0"],"step":-1}`)
	if f == nil {
		t.Fatal("no frame")
	}
	ran := f.Ran[len(f.Ran)-5:]
	if ran[0].Error == "" || !strings.HasPrefix(ran[4].Output, "TAMPERED") {
		t.Fatalf("typed steps: %+v", ran)
	}
	var regs []struct {
		Provider   string `json:"provider"`
		EnableMask uint8  `json:"enableMask"`
	}
	if err := json.Unmarshal(f.Views.Regs, &regs); err != nil {
		t.Fatal(err)
	}
	if regs[len(regs)-1].Provider != "P" || regs[len(regs)-1].EnableMask != 0 || !strings.Contains(string(f.Views.Guids), `"provider":"P"`) {
		t.Fatalf("regs %+v guids %s", regs, f.Views.Guids)
	}
}

// Requests are bounded and checked.
func TestFrameRequestsAreBounded(t *testing.T) {
	h := handler(t, nil)
	for body, code := range map[string]int{
		`{"lesson":"nope"}`: http.StatusNotFound,
		`not json`:          http.StatusBadRequest,
		`{}{}{`:             http.StatusBadRequest, // one value, not the first of several
		"{} \n":             http.StatusOK,
		`{"typed":["` + strings.Repeat("x", 5000) + `"]}`:            http.StatusBadRequest,
		`{"typed":["a\nb"]}`:                                         http.StatusBadRequest,
		`{"typed":[` + strings.Repeat(`"help",`, MaxSteps) + `"x"]}`: http.StatusBadRequest,
		`{"typed":["` + strings.Repeat("x", maxRequest) + `"]}`:      http.StatusRequestEntityTooLarge,
	} {
		if w, _ := post(t, h, body); w.Code != code {
			t.Errorf("%.60s: %d, want %d", body, w.Code, code)
		}
	}
	// Each refusal names its bound.
	for body, want := range map[string]string{
		`{"typed":[` + strings.Repeat(`"help",`, MaxSteps) + `"x"]}`: "at most 1000 (web.MaxSteps)",
		`{"typed":["` + strings.Repeat("x", maxRequest) + `"]}`:      "over the 1048576 bytes",
	} {
		if w, _ := post(t, h, body); !strings.Contains(w.Body.String(), want) {
			t.Errorf("%.60s: %q, want it to say %q", body, w.Body.String(), want)
		}
	}
	// The API's paths answer another method with 405 and the method they take.
	for _, c := range []struct{ method, path, allow string }{{"GET", "/api/frame", "POST"}, {"DELETE", "/api/lessons", "GET"}, {"PUT", "/api/live", "GET"}} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request(c.method, c.path, ""))
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405, Allow %s", c.method, c.path, w.Code, w.Header().Get("Allow"), c.allow)
		}
	}
	// A replay whose request ends first (the server shutting down on a signal, or the
	// client gone) is 503, not a server error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, request("POST", "/api/frame", `{"typed":["write X 1"]}`).WithContext(ctx))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("a replay of an ended request: %d %s, want 503", w.Code, w.Body.String())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, request("GET", "/api/live", ""))
	if w.Code != http.StatusNotFound {
		t.Errorf("/api/live without live mode: %d", w.Code)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, request("GET", "/", ""))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "app.js") || !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("/: %d %s", w.Code, w.Header())
	}
}

// A replay that runs past its context stops with the context's error.
func TestReplayStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Replay(ctx, Lesson{}, []Step{{Command: "write X 1"}}, 1); err == nil {
		t.Fatal("a cancelled replay succeeded")
	}
}

// The live picture reads the same views while the writers run, and Stop stops them.
func TestLiveFrame(t *testing.T) {
	l, err := StartLive(LiveConfig{Processors: 2, Payload: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	h := handler(t, l)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, request("GET", "/api/live", ""))
	var f LiveFrame
	if err := json.Unmarshal(w.Body.Bytes(), &f); err != nil || !f.Live {
		t.Fatalf("%d %v %s", w.Code, err, w.Body)
	}
	if len(f.Views.Loggers) != 2 || !strings.Contains(string(f.Views.Strdump), `"real time"`) || !strings.Contains(string(f.Views.Regs), "Demo.Storage") {
		t.Fatalf("live views: %+v", f.Views)
	}
	n, _ := l.Stop()
	if m, _ := l.Written(); m != n {
		t.Fatalf("writers went on after Stop: %d then %d", n, m)
	}
	if _, err := StartLive(LiveConfig{Processors: 0}); err == nil {
		t.Error("0 processors accepted")
	}
}

// request is a request as the page sends it: to the server's loopback address, a POST's
// body declared JSON.
func request(method, path, body string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Host = DefaultAddr
	if method == "POST" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// A request another site's page may have sent is refused before it runs anything: a
// host name rebound to this address, another origin, a POST not declared JSON.
func TestRefusesOtherSites(t *testing.T) {
	h := handler(t, nil)
	body := `{"lesson":"01-first-session","step":-1}`
	for _, c := range []struct {
		name string
		edit func(r *http.Request)
	}{
		{"rebound host", func(r *http.Request) { r.Host = "attacker.example:8077" }},
		{"other origin", func(r *http.Request) { r.Header.Set("Origin", "http://attacker.example") }},
		{"text/plain", func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }},
	} {
		r := request("POST", "/api/frame", body)
		c.edit(r)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", c.name, w.Code)
		}
	}
	for _, host := range []string{DefaultAddr, "localhost:8077", "[::1]:8077"} {
		r := request("POST", "/api/frame", body)
		r.Host = host
		r.Header.Set("Origin", "http://"+host)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Errorf("host %s: %d, want 200: %s", host, w.Code, w.Body.String())
		}
	}
}

// At most maxReplays replays run at once; one more is told to try again.
func TestReplaysAreBounded(t *testing.T) {
	h := handler(t, nil)
	for range maxReplays {
		h.replays <- struct{}{} // replays in flight
	}
	if w, _ := post(t, h, `{"lesson":"01-first-session","step":1}`); w.Code != http.StatusServiceUnavailable {
		t.Errorf("a replay past the bound: %d, want 503", w.Code)
	}
	<-h.replays
	if w, _ := post(t, h, `{"lesson":"01-first-session","step":1}`); w.Code != http.StatusOK {
		t.Errorf("a replay within the bound: %d, want 200", w.Code)
	}
}

// A lesson's title, in the page's menu, is the first sentence of its opening comment,
// whole, though it runs over two lines.
func TestLessonTitles(t *testing.T) {
	l, err := ParseLesson("x", "## Lesson 2: one provider,\n## nine sessions. An entry has\n## eight slots.\nkernel\n")
	if err != nil || l.Title != "Lesson 2: one provider, nine sessions." {
		t.Errorf("title %q (%v), want the first sentence across the lines", l.Title, err)
	}
	lessons, err := LoadLessons(examples.Lessons)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lessons {
		if !strings.HasSuffix(l.Title, ".") || strings.Contains(strings.TrimSuffix(l.Title, "."), ". ") {
			t.Errorf("%s: title %q is not one whole sentence", l.Name, l.Title)
		}
	}
}

// A frame's command output is bounded: a step that prints more than MaxStepOutput shows
// its first bytes and says how many it left out, and the steps together stop at
// MaxFrameOutput.
func TestFrameOutputIsBounded(t *testing.T) {
	steps := []Step{{Command: "start s mode=BUFFERING buffer=64 min=64"}, {Command: "register P"},
		{Command: "enable s P"}, {Command: "write P 40000 size=100"}}
	for range 12 {
		steps = append(steps, Step{Command: "bufdump s bytes=65536"}) // 2 MiB of hex each
	}
	f, err := Replay(context.Background(), Lesson{}, steps, len(steps))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, r := range f.Ran {
		if r.Error != "" {
			t.Fatalf("step %d: %s", i, r.Error)
		}
		total += len(r.Output)
		if len(r.Output) > MaxStepOutput+200 {
			t.Errorf("step %d printed %d bytes, more than a step's %d", i, len(r.Output), MaxStepOutput)
		}
		if i >= 4 && !strings.Contains(r.Output, "bytes of output left out") {
			t.Errorf("step %d does not say it left output out", i)
		}
	}
	if total > MaxFrameOutput+len(f.Ran)*200 {
		t.Errorf("the frame carries %d bytes of output, more than %d", total, MaxFrameOutput)
	}
}

// stalledWriter is a client that never reads its answer: Write blocks until released.
type stalledWriter struct {
	header  http.Header
	writing chan struct{} // closed when Write is entered
	release chan struct{}
}

func (s *stalledWriter) Header() http.Header { return s.header }
func (s *stalledWriter) WriteHeader(int)     {}
func (s *stalledWriter) Write(p []byte) (int, error) {
	close(s.writing)
	<-s.release
	return len(p), nil
}

// stall sends n frame requests to h from clients that never read, and returns once each
// request is stuck writing its answer; unstall(i) lets client i read, and returns once
// its request has ended.
func stall(h http.Handler, n int, body string) (unstall func(i int)) {
	var stuck []*stalledWriter
	done := make(chan struct{})
	for range n {
		s := &stalledWriter{header: http.Header{}, writing: make(chan struct{}), release: make(chan struct{})}
		stuck = append(stuck, s)
		go func() {
			h.ServeHTTP(s, request("POST", "/api/frame", body))
			done <- struct{}{}
		}()
		<-s.writing
	}
	return func(i int) {
		close(stuck[i].release)
		<-done
	}
}

// Clients that do not read their frames do not hold the replay slots: with maxReplays
// of them stuck writing, another client's frame is still answered.
func TestStalledClientsFreeTheirReplays(t *testing.T) {
	h := handler(t, nil)
	unstall := stall(h, maxReplays, `{"lesson":"01-first-session","step":3}`)
	if w, _ := post(t, h, `{"lesson":"01-first-session","step":1}`); w.Code != http.StatusOK {
		t.Errorf("with %d clients not reading: %d, want 200: %s", maxReplays, w.Code, w.Body.String())
	}
	for i := range maxReplays {
		unstall(i)
	}
}

// A lesson of no commands has a frame of no steps: [] for the page, not null.
func TestLessonOfNoSteps(t *testing.T) {
	l, err := ParseLesson("empty", "# only a comment\n")
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler([]Lesson{l}, "", nil)
	w, f := post(t, h, `{"lesson":"empty","step":0}`)
	if f == nil {
		t.Fatalf("%d: %s", w.Code, w.Body.String())
	}
	if f.Steps == nil || !strings.Contains(w.Body.String(), `"steps":[]`) {
		t.Errorf("the frame's steps are %s, want []", w.Body.String())
	}
}

// Answers held for clients that do not read are bounded too: with maxAnswers of them
// stuck, another frame request gets 503 at once, and is answered once one is read.
func TestStalledAnswersAreBounded(t *testing.T) {
	h := handler(t, nil)
	unstall := stall(h, maxAnswers, `{"lesson":"01-first-session","step":1}`)
	if w, _ := post(t, h, `{"lesson":"01-first-session","step":1}`); w.Code != http.StatusServiceUnavailable {
		t.Errorf("with %d answers held: %d, want 503", maxAnswers, w.Code)
	}
	unstall(0)
	if w, _ := post(t, h, `{"lesson":"01-first-session","step":1}`); w.Code != http.StatusOK {
		t.Errorf("once an answer was read: %d, want 200", w.Code)
	}
	for i := 1; i < maxAnswers; i++ {
		unstall(i)
	}
}

// The page's own reading of the kernel is not the learner's: once the learner's commands
// have printed past the output quota, their next command is refused with
// ERROR_NOT_ENOUGH_QUOTA, and the frame is still drawn (its views ran out of the quota
// too, and the whole frame failed with 500).
func TestViewsOutsideTheOutputQuota(t *testing.T) {
	saved := Limits
	t.Cleanup(func() { Limits = saved })
	Limits.Output = 64 << 10
	steps := []Step{{Command: "start s mode=BUFFERING buffer=64 min=8"}, {Command: "register P"},
		{Command: "enable s P"}, {Command: "write P 2000 size=16"}}
	for range 3 {
		steps = append(steps, Step{Command: "logdump s t=2000"}) // about 150 KB each
	}
	f, err := Replay(context.Background(), Lesson{}, steps, len(steps))
	if err != nil {
		t.Fatalf("the frame failed: %v", err)
	}
	if last := f.Ran[len(f.Ran)-1]; !strings.Contains(last.Error, "ERROR_NOT_ENOUGH_QUOTA") {
		t.Errorf("the last logdump: %q, want the quota's refusal", last.Error)
	}
	if f.Views == nil || !strings.Contains(string(f.Views.Strdump), `"name": "s"`) {
		t.Errorf("the frame's views: %+v", f.Views)
	}
}
