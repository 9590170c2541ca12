// Package replay holds the test that the fuzz harness's programs, printed as scenarios
// (fuzz.Scenario), replay on the scenario machine with every answer the harness saw.
//
// It is a package of its own so that the fuzz targets' test binary does not link the
// scenario machine: the fuzzing engine copies and compares every coverage counter of
// that binary on each execution, and the scenario language's parser and its
// dependencies added about a fifth to them.
package replay
