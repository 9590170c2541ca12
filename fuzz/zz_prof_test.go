package fuzz

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkRunProf(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	inputs := make([][]byte, 500)
	for i := range inputs {
		inputs[i] = randomInput(rng, 200)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Run(inputs[i%len(inputs)])
	}
}

func BenchmarkConcProf(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	inputs := make([][]byte, 500)
	for i := range inputs {
		inputs[i] = randomInput(rng, 200)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		RunConcurrent(inputs[i%len(inputs)])
	}
}
