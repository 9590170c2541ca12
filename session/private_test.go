package session

import (
	"testing"

	"github.com/etwemu/etwemu/logmode"
)

// The private loggers' id space holds the most that the version rules let one process
// run: the two say the same number, from the rule table.
func TestMaxPrivateLoggersCoversTheRules(t *testing.T) {
	most := 0
	for _, r := range logmode.PrivateStarts() {
		most = max(most, r.PerProcess)
	}
	if most != MaxPrivateLoggers {
		t.Errorf("the rules let a process run %d private loggers; MaxPrivateLoggers is %d", most, MaxPrivateLoggers)
	}
}
