package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// DefaultAddr is where `etwemu web` listens unless told: the loopback interface only.
const DefaultAddr = "127.0.0.1:8077"

//go:embed assets
var assets embed.FS

// MaxCommandBytes bounds a command the page sends: a typed line is one command.
const MaxCommandBytes = 4096

// ReplayTimeout bounds one replay (a step, a typed command).
const ReplayTimeout = 10 * time.Second

// maxRequest bounds a request body: the typed commands and their lesson's name.
const maxRequest = 1 << 20

// Handler serves the page, the lessons and their frames, and with live set the live
// picture. first names the lesson the page opens with ("" for the first).
type Handler struct {
	lessons []Lesson // immutable
	first   string   // immutable
	live    *Live    // nil without live mode; immutable
	mux     *http.ServeMux
	// replays holds a token for each replay running (a buffered channel used as a
	// semaphore, sent to and received from by the handlers): a machine a replay builds
	// holds up to Limits.BufferMemory, and so at most maxReplays run at once.
	replays chan struct{}
	// answers holds a token for each frame request from its start until its answer is
	// written (a semaphore, as replays): an answer waits in memory for a client that may
	// read slowly, and so at most maxAnswers are held, however many clients stall.
	answers chan struct{}
}

// maxReplays is how many replays may run at once, and maxAnswers how many frame answers
// may be held, replayed or being written; a request past either gets 503. Clients that
// do not read hold answers, never replays, and each only until WriteTimeout.
const (
	maxReplays = 2
	maxAnswers = 4
)

// NewHandler returns a handler for lessons; first is the lesson the page opens, live the
// live kernel (nil for none).
func NewHandler(lessons []Lesson, first string, live *Live) *Handler {
	h := &Handler{lessons: lessons, first: first, live: live, mux: http.NewServeMux(),
		replays: make(chan struct{}, maxReplays), answers: make(chan struct{}, maxAnswers)}
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, fmt.Sprintf("the page's files take GET, not %s", r.Method), http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})
	h.mux.HandleFunc("GET /api/lessons", h.serveLessons)
	h.mux.HandleFunc("POST /api/frame", h.serveFrame)
	h.mux.HandleFunc("GET /api/live", h.serveLive)
	// The API's other methods: 405 naming the one it takes, not the file server's 404.
	for path, method := range map[string]string{"/api/lessons": http.MethodGet, "/api/frame": http.MethodPost, "/api/live": http.MethodGet} {
		h.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", method)
			http.Error(w, fmt.Sprintf("%s takes %s, not %s", path, method, r.Method), http.StatusMethodNotAllowed)
		})
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
	if err := sameSite(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// sameSite refuses a request that another site's page may have sent: a Host that is a
// name other than localhost (a DNS name rebound to this address), an Origin that is not
// this server, or a POST whose body is not declared JSON (which a cross-site page can
// send only after a CORS preflight that this server never answers).
func sameSite(r *http.Request) error {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	host = strings.Trim(host, "[]")
	if _, err := netip.ParseAddr(host); err != nil && !strings.EqualFold(host, "localhost") {
		return fmt.Errorf("host %q: this server answers to an address or localhost only", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		return fmt.Errorf("origin %q is not this server's", o)
	}
	if r.Method == http.MethodPost {
		if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
			return fmt.Errorf("a POST takes application/json, not %q", r.Header.Get("Content-Type"))
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

func (h *Handler) serveLessons(w http.ResponseWriter, r *http.Request) {
	first := h.first
	if first == "" && len(h.lessons) > 0 {
		first = h.lessons[0].Name
	}
	writeJSON(w, struct {
		Lessons []Lesson `json:"lessons"`
		First   string   `json:"first"`
		Live    bool     `json:"live"`
	}{h.lessons, first, h.live != nil})
}

// FrameRequest asks for the picture after Step steps of a lesson followed by the typed
// commands.
type FrameRequest struct {
	Lesson string   `json:"lesson"`
	Typed  []string `json:"typed"`
	Step   int      `json:"step"` // -1: the last
}

func (h *Handler) lesson(name string) (Lesson, bool) {
	for _, l := range h.lessons {
		if l.Name == name {
			return l, true
		}
	}
	return Lesson{}, false
}

func (h *Handler) serveFrame(w http.ResponseWriter, r *http.Request) {
	var req FrameRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest))
	err := dec.Decode(&req)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		if mb := (*http.MaxBytesError)(nil); errors.As(err, &mb) {
			http.Error(w, fmt.Sprintf("the request is over the %d bytes a frame request may take", maxRequest), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "the request is not a frame request: "+err.Error(), http.StatusBadRequest)
		return
	}
	l, ok := h.lesson(req.Lesson)
	if !ok && req.Lesson != "" {
		http.Error(w, "no lesson named "+req.Lesson, http.StatusNotFound)
		return
	}
	steps := make([]Step, 0, len(l.Steps)+len(req.Typed)) // a lesson of no steps has [] (not null) in the frame
	steps = append(steps, l.Steps...)
	for _, t := range req.Typed {
		if len(t) > MaxCommandBytes || strings.ContainsAny(t, "\r\n") {
			http.Error(w, fmt.Sprintf("a typed command is one line of at most %d bytes", MaxCommandBytes), http.StatusBadRequest)
			return
		}
		steps = append(steps, Step{Command: strings.TrimSpace(t)})
	}
	if len(steps) > MaxSteps {
		http.Error(w, fmt.Sprintf("%d steps: a frame replays at most %d (web.MaxSteps)", len(steps), MaxSteps), http.StatusBadRequest)
		return
	}
	if req.Step < 0 || req.Step > len(steps) {
		req.Step = len(steps)
	}
	select {
	case h.answers <- struct{}{}:
		defer func() { <-h.answers }()
	default:
		http.Error(w, "busy: answers to other clients are still being written; try again", http.StatusServiceUnavailable)
		return
	}
	body, err := h.replay(r.Context(), l, steps, req.Step)
	if err != nil {
		code := http.StatusInternalServerError
		switch {
		case errors.Is(err, errBusy):
			code = http.StatusServiceUnavailable
		case r.Context().Err() != nil && !errors.Is(err, context.DeadlineExceeded):
			// The server is shutting down (a signal), or the client went away.
			code = http.StatusServiceUnavailable
		case errors.Is(err, context.DeadlineExceeded):
			// The server's bound, not a slow client (408): the steps ask for more work
			// than a replay may take.
			code = http.StatusUnprocessableEntity
			err = fmt.Errorf("the replay ran past its %v limit (web.ReplayTimeout): %w", ReplayTimeout, err)
		}
		http.Error(w, err.Error(), code)
		return
	}
	// The replay's slot is free again: a client that does not read its answer holds only
	// its own connection, until the write deadline.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(WriteTimeout))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// WriteTimeout bounds how long a frame's answer may take to reach its client.
const WriteTimeout = 30 * time.Second

// errBusy is replay's answer when maxReplays replays are running.
var errBusy = errors.New("busy: other replays are running; try again")

// replay runs a frame's replay in one of the maxReplays slots and returns it encoded,
// freeing the slot before the caller writes it.
func (h *Handler) replay(ctx context.Context, l Lesson, steps []Step, n int) ([]byte, error) {
	select {
	case h.replays <- struct{}{}:
		defer func() { <-h.replays }()
	default:
		return nil, errBusy
	}
	ctx, cancel := context.WithTimeout(ctx, ReplayTimeout)
	defer cancel()
	f, err := Replay(ctx, l, steps, n)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(f)
	return append(b, '\n'), err
}

func (h *Handler) serveLive(w http.ResponseWriter, r *http.Request) {
	if h.live == nil {
		http.Error(w, "not in live mode (etwemu web -live)", http.StatusNotFound)
		return
	}
	f, err := h.live.Frame(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, f)
}

// Listen listens on addr, DefaultAddr when empty.
func Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	return net.Listen("tcp", addr)
}
