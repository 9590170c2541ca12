#!/bin/bash -eu
# ClusterFuzzLite's build step: every fuzz target of etwemu, with its seed corpus, into
# $OUT. The base-builder-go image provides compile_native_go_fuzzer, $SRC and $OUT.
# .ci/clusterfuzzlite runs this outside Docker against a stand-in compile_native_go_fuzzer.
"$SRC/etwemu/fuzz/ossfuzz.sh"
# The scenario language (what etwemu run and shell read), with the lessons in examples/
# as its seed corpus.
compile_native_go_fuzzer github.com/etwemu/etwemu/scenario FuzzScenario fuzz_scenario
(cd "$SRC/etwemu/examples" && zip -q -j "$OUT/fuzz_scenario_seed_corpus.zip" ./*.scenario)
# Reader edges: dump's every output mode on reader input, and the bounded XPRESS decoder
# against klauspost/compress/xpress.
compile_native_go_fuzzer github.com/etwemu/etwemu/cmd/etwemu FuzzDump fuzz_dump
compile_native_go_fuzzer github.com/etwemu/etwemu/etl FuzzXpressBounded fuzz_xpress_bounded
