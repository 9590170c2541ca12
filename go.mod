module github.com/etwemu/etwemu

go 1.25.0
