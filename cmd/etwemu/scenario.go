package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/etwemu/etwemu/scenario"
)

const runAbout = `Usage: etwemu run FILE

Runs a scenario: one command per line on an emulated kernel that is synchronous, with a
manual clock and in-memory files, so a scenario prints the same text every time. It
stops at the first command that fails unless the line expects that failure
(expect ERROR_... COMMAND). "-" reads the scenario from standard input. The lessons in
examples/ are scenarios; the commands are:
`

const shellAbout = `Usage: etwemu shell

Reads scenario commands one line at a time from standard input, from a terminal or a
pipe, and runs each at once; a failing command prints its error and the shell goes on.
"help" lists the commands, "help COMMAND" explains one, "quit" or end of input leaves.`

func runScenario(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var about strings.Builder
	about.WriteString(runAbout)
	scenario.Help(&about)
	if code := parseFlags(fs, about.String(), "FILE", args, stdout, stderr); code >= 0 {
		return code
	}
	var in io.Reader = os.Stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "etwemu run: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	m := scenario.New(stdout)
	defer m.Close()
	if err := m.Run(in); err != nil {
		fmt.Fprintf(stderr, "etwemu run: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	return 0
}

func runShell(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	if code := parseFlags(fs, shellAbout, "", args, stdout, stderr); code >= 0 {
		return code
	}
	return shell(os.Stdin, stdout, stderr, isTerminal(os.Stdin))
}

// shell runs commands from in until it ends or says quit; prompt is for terminals.
func shell(in io.Reader, stdout, stderr io.Writer, prompt bool) int {
	m := scenario.New(stdout)
	defer m.Close()
	sc := bufio.NewScanner(in)
	for {
		if prompt {
			fmt.Fprint(stdout, "etwemu> ")
		}
		if !sc.Scan() {
			break
		}
		line := sc.Text()
		if line == "quit" || line == "exit" {
			break
		}
		if err := m.Exec(line); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "etwemu shell: %v\n", err)
		return 1
	}
	return 0
}
