// Package examples holds etwemu's lessons: each NAME.scenario is a scenario (see package
// scenario) and NAME.golden the text it prints, which scenario's tests compare. Lessons
// embeds them, so that a program (etwemu web) can offer them without the source tree.
package examples

import "embed"

// Lessons holds every lesson's .scenario and .golden file.
//
//go:embed *.scenario *.golden
var Lessons embed.FS
