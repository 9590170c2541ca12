module github.com/etwemu/etwemu/bench/peers

go 1.25.0

require (
	github.com/etwemu/etwemu v0.0.0
	github.com/rs/zerolog v1.35.1
	go.uber.org/zap v1.28.0
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
)

replace github.com/etwemu/etwemu => ../..
