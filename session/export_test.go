package session

import "time"

func waitABit() { time.Sleep(time.Millisecond) }
