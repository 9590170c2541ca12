package main

import (
	"fmt"
	"io"
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/bench/benchsuite"
)

// The Go loggers people reach for instead of a tracer, each writing the equivalent of one
// event to io.Discard: a timestamp, the level, the provider, the event id and keyword,
// and the payload bytes (hex for zerolog, base64 for zap: each logger's own binary
// encoding). Both are set up for speed as their documentation advises
// (zerolog's Logger with a timestamp hook; zap's production JSON encoder on a core,
// without sampling or caller lookups).

const providerName = "etwemu.bench"

func zerologCase(payload int, parallel bool) benchsuite.Case {
	return peerCase("zerolog", "zerolog's Logger with a timestamp, writing the event as a JSON line (payload in hex) to io.Discard", payload, parallel, func() func() {
		log := zerolog.New(io.Discard).With().Timestamp().Str("provider", providerName).Logger()
		data := make([]byte, payload)
		return func() {
			log.Info().Uint16("id", 1).Uint64("keyword", 1).Hex("payload", data).Send()
		}
	})
}

func zapCase(payload int, parallel bool) benchsuite.Case {
	return peerCase("zap", "zap's production JSON encoder on a core, writing the event as a JSON line (payload in base64) to io.Discard", payload, parallel, func() func() {
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = zapcore.EpochNanosTimeEncoder
		core := zapcore.NewCore(zapcore.NewJSONEncoder(cfg), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
		log := zap.New(core).With(zap.String("provider", providerName))
		data := make([]byte, payload)
		return func() {
			log.Info("", zap.Uint16("id", 1), zap.Uint64("keyword", 1), zap.Binary("payload", data))
		}
	})
}

func peerCase(name, about string, payload int, parallel bool, setup func() func()) benchsuite.Case {
	n := fmt.Sprintf("payload=%d/%s", payload, name)
	if parallel {
		n += "/parallel"
	}
	return benchsuite.Case{Name: n, Payload: payload, Parallel: parallel, Baseline: name, About: about, Run: func(b *testing.B) {
		one := setup()
		benchbase.Run(b, payload, parallel, one)
	}}
}

// suite is the emulator's full suite with the peers inserted after each payload's
// baselines.
func suite(short bool) []benchsuite.Case {
	base := benchsuite.Full()
	if short {
		base = benchsuite.Short()
	}
	var out []benchsuite.Case
	for _, c := range base {
		out = append(out, c)
		if c.Floor { // after a floor come its mutex and channel; peers go after those
			continue
		}
		if isChan(c) {
			out = append(out, zerologCase(c.Payload, c.Parallel), zapCase(c.Payload, c.Parallel))
		}
	}
	return out
}

func isChan(c benchsuite.Case) bool {
	suffix := "/chan"
	if c.Parallel {
		suffix += "/parallel"
	}
	return len(c.Name) >= len(suffix) && c.Name[len(c.Name)-len(suffix):] == suffix
}
