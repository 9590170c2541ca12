package web

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/etwemu/etwemu/scenario"
)

// Step is one command of a scenario, with the printed comments (## lines) that come
// before it. A trailing comment with no command after it is a Step with no Command.
type Step struct {
	Comment []string `json:"comment,omitempty"`
	Command string   `json:"command"`
}

// Lesson is a scenario split into steps.
type Lesson struct {
	Name  string `json:"name"`  // the file's name without .scenario
	Title string `json:"title"` // its first ## line
	Steps []Step `json:"-"`
}

// MaxSteps bounds a lesson's steps, and a lesson's steps with the commands typed after
// them: a replay runs at most this many commands.
const MaxSteps = 1000

// ParseLesson splits a scenario's text into steps. Lines starting with a single # and
// blank lines are dropped, as the language skips them; a line longer than
// scenario.MaxLine or more than MaxSteps commands is an error.
func ParseLesson(name, text string) (Lesson, error) {
	l := Lesson{Name: name}
	var pending []string
	sc := scenario.NewLineReader(strings.NewReader(text))
	for {
		line, n, err := sc.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return l, fmt.Errorf("%s: line %d: %w", name, n, err)
		}
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "##"):
			c := strings.TrimSpace(strings.TrimPrefix(t, "##"))
			pending = append(pending, c)
		case t == "" || t[0] == '#':
		default:
			if len(l.Steps) == MaxSteps {
				return l, fmt.Errorf("%s: more than %d commands", name, MaxSteps)
			}
			l.Steps = append(l.Steps, Step{Comment: pending, Command: t})
			pending = nil
		}
	}
	if len(pending) > 0 {
		l.Steps = append(l.Steps, Step{Comment: pending})
	}
	if len(l.Steps) > 0 {
		l.Title = firstSentence(l.Steps[0].Comment)
	}
	if l.Title == "" {
		l.Title = name
	}
	return l, nil
}

// firstSentence is the first sentence of the comment lines, which may run over several
// lines, or all of them if none ends; a lesson's title.
func firstSentence(lines []string) string {
	text := strings.Join(lines, " ")
	for i := 0; i < len(text); i++ {
		if text[i] == '.' && (i+1 == len(text) || text[i+1] == ' ') {
			return text[:i+1]
		}
	}
	return text
}

// LoadLessons reads every NAME.scenario at the top of fsys, sorted by name.
func LoadLessons(fsys fs.FS) ([]Lesson, error) {
	names, err := fs.Glob(fsys, "*.scenario")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Lesson
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		l, err := ParseLesson(strings.TrimSuffix(path.Base(n), ".scenario"), string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}
