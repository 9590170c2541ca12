package logmode

import (
	"regexp"
	"testing"
)

// Every rule cites a public work by author and title, which a reader can look up, and
// never one of the project's own names for its notes.
func TestRulesCitePublicSources(t *testing.T) {
	public := regexp.MustCompile(`^(Geoff Chappell|Microsoft Learn), "[^"]+"$`)
	private := regexp.MustCompile(`(?i)seed|digest|section [0-9]|\.md\b`)
	for i, r := range Rules() {
		if !public.MatchString(r.Source) || private.MatchString(r.Source) {
			t.Errorf("rule %d (%s): source %q is not an author and a title", i, r.String(), r.Source)
		}
	}
}
