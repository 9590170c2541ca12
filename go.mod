module github.com/etwemu/etwemu

go 1.25.0

require (
	github.com/klauspost/compress v1.20.3
	golang.org/x/sys v0.42.0
)
