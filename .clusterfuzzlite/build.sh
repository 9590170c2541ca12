#!/bin/bash -eu
# ClusterFuzzLite's build step: every fuzz target of etwemu, with its seed corpus, into
# $OUT. The base-builder-go image provides compile_native_go_fuzzer, $SRC and $OUT.
# .ci/clusterfuzzlite runs this outside Docker against a stand-in compile_native_go_fuzzer.
"$SRC/etwemu/fuzz/ossfuzz.sh"
