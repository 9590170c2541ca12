package main

import (
	"os"
	"testing"
)

// /dev/null is a character device and no terminal: a shell reading it prints no
// prompts (it printed its banner and prompts into the output file).
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("/dev/null taken for a terminal")
	}
}
