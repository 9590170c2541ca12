//go:build ignore

// burn keeps N goroutines spinning on the processors, so that a test run beside it sees a
// busy machine. It stops by itself after -for, or when killed. Used by .ci/run:
//
//	go run .ci/burn.go -n 3 -for 30m &
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

func main() {
	n := flag.Int("n", 3, "spinning goroutines (1 to 64)")
	limit := flag.Duration("for", 10*time.Minute, "stop after this long (1s to 2h)")
	flag.Parse()
	if *n < 1 || *n > 64 || *limit < time.Second || *limit > 2*time.Hour {
		fmt.Fprintln(os.Stderr, "burn: -n must be 1..64 and -for 1s..2h")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*n)
	for i := 0; i < *n; i++ {
		go func() {
			x := uint64(i)
			for {
				x = x*6364136223846793005 + 1442695040888963407
				if x == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	time.Sleep(*limit)
}
