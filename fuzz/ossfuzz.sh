#!/bin/bash -eu
# Builds etwemu's fuzz targets the way OSS-Fuzz's native Go support expects, so the
# fuzzing can move there when one machine is not enough. OSS-Fuzz's build.sh for the
# project runs this from the repository root in the base-builder-go image, which
# provides compile_native_go_fuzzer and $OUT.
#
#   fuzz/ossfuzz.sh              build every fuzz target into $OUT: fuzz_interplay and
#                                fuzz_concurrent with seed corpora, fuzz_decide
#                                (logmode), fuzz_reader and fuzz_xpress (etl),
#                                fuzz_tracelogging (tracelogging)
#   fuzz/ossfuzz.sh -corpus DIR  only write the raw seed corpus into DIR (runs anywhere)
#
# OSS-Fuzz feeds a []byte fuzz target the raw input, and ignores testing.F.Add and the
# "go test fuzz v1" files, so the seeds are written again as raw bytes.

cd "$(dirname "$0")/.."

write_corpus() {
	mkdir -p "$1"
	go test ./fuzz -run '^TestCorpusMatchesSeeds$' -count=1 -args -raw-corpus "$(cd "$1" && pwd)" >/dev/null
	echo "wrote $(ls "$1" | wc -l) seeds to $1"
}

if [ "${1:-}" = "-corpus" ]; then
	write_corpus "${2:?usage: fuzz/ossfuzz.sh -corpus DIR}"
	exit 0
fi

if ! command -v compile_native_go_fuzzer >/dev/null; then
	echo "fuzz/ossfuzz.sh: compile_native_go_fuzzer not found; run this inside OSS-Fuzz's base-builder-go image" >&2
	echo "(or use -corpus DIR to write only the seed corpus)" >&2
	exit 1
fi

compile_native_go_fuzzer github.com/etwemu/etwemu/fuzz FuzzInterplay fuzz_interplay
compile_native_go_fuzzer github.com/etwemu/etwemu/fuzz FuzzConcurrent fuzz_concurrent
compile_native_go_fuzzer github.com/etwemu/etwemu/logmode FuzzDecide fuzz_decide
compile_native_go_fuzzer github.com/etwemu/etwemu/etl FuzzReader fuzz_reader
compile_native_go_fuzzer github.com/etwemu/etwemu/etl FuzzXpress fuzz_xpress
compile_native_go_fuzzer github.com/etwemu/etwemu/tracelogging FuzzDecode fuzz_tracelogging
# The scenario language (what etwemu run and shell read), with the lessons in examples/
# as its seed corpus.
compile_native_go_fuzzer github.com/etwemu/etwemu/scenario FuzzScenario fuzz_scenario
(cd "$(dirname "$0")/../examples" && zip -q -j "$OUT/fuzz_scenario_seed_corpus.zip" ./*.scenario)
# Reader edges: dump's every output mode on reader input, and the bounded XPRESS decoder
# against klauspost/compress/xpress.
compile_native_go_fuzzer github.com/etwemu/etwemu/cmd/etwemu FuzzDump fuzz_dump
compile_native_go_fuzzer github.com/etwemu/etwemu/etl FuzzXpressBounded fuzz_xpress_bounded

seeds="${WORK:-/tmp}/etwemu_seeds"
write_corpus "$seeds"
for target in fuzz_interplay fuzz_concurrent; do
	(cd "$seeds" && zip -q -j "$OUT/${target}_seed_corpus.zip" ./*)
done
