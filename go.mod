module github.com/etwemu/etwemu

go 1.25.0

require golang.org/x/sys v0.42.0 // indirect
