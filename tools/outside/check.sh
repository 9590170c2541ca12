#!/bin/sh
# check.sh PARSERS [REAL...]: writes ETL files in every file mode etwemu's CLI offers and reads each
# with etwemu's reader and two outside parsers, printing one Markdown table: records (and
# how many in the header buffer), the log-file header's BuffersWritten, and whether the
# three agree. It also reads the real Windows files in etl-parser's test data, and the
# .etl files in each REAL folder (realfiles.sh names the public ones it was run with). Not part
# of `go test`: the parsers are outside code, run from their sources, never dependencies.
#
# PARSERS is a folder holding the sources (a checkout or an unpacked archive each):
#   dissect.etl      github.com/fox-it/dissect.etl       run with f59d1d9e18
#   dissect.cstruct  github.com/fox-it/dissect.cstruct   tag 4.7 (dissect.etl wants < 5)
#   dissect.util     github.com/fox-it/dissect.util      run with 4d86c1b4b7
#   etl-parser       github.com/airbus-cert/etl-parser   run with 76b7c04686
#   construct        github.com/construct/construct      run with 28c6e5779f (etl-parser's one need)
#   defusedxml       github.com/tiran/defusedxml         run with c7445887f5 (dissect.etl's)
#
# Known faults of the parsers, not of the files:
#   - dissect.etl prints GUIDs byte-swapped (it reads them big-endian); counts are unaffected.
#   - dissect.etl believes BuffersWritten: it stops after that many buffers, so a file
#     whose header counts otherwise (circular files count buffers written over the
#     session) is read past its end, and
#     the file of a session that had not stopped (BuffersWritten 0) is read as empty.
#   - etl-parser has no decompressor: it cannot read EVENT_TRACE_COMPRESSED_MODE files.
#   - etl-parser's etl2xml crashes on EVENT_HEADER events that are not TraceLogging
#     (event.py reads provider_id.data1, not provider_id.inner.data1); this script counts
#     records through its observer instead.
#   - etl-parser raises on a buffer without a record (the empty flush-marker buffer).
#   - etl-parser leaves the header buffer out: it agrees when it counts the records after it.
set -eu
if [ $# -lt 1 ] || [ ! -d "$1/dissect.etl" ]; then
	echo "usage: $0 PARSERS [REAL...] (PARSERS: a folder with dissect.etl, dissect.cstruct, dissect.util, etl-parser, construct, defusedxml; REAL: folders of real .etl files)" >&2
	exit 2
fi
P=$(cd "$1" && pwd)
export PYTHONPATH="$P/dissect.etl:$P/dissect.cstruct:$P/dissect.util:$P/etl-parser:$P/construct:$P/defusedxml"
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$root" && go build -o "$out/etwemu" ./cmd/etwemu)
e="$out/etwemu"
demo() { # demo NAME FLAGS...: a file of the demo's three providers, 20000 events
	name=$1
	shift
	"$e" demo -logfile "$out/$name" -events 20000 -progress 0 "$@" >/dev/null
	echo "  $name: demo $*" >&2
}
echo "writing files into $out:" >&2
demo sequential.etl -mode SEQUENTIAL
for v in 6.0 6.1 6.2 6.3 10.0 1709 1903; do
	demo "sequential-$v.etl" -mode SEQUENTIAL -version "$v"
done
demo system-logger.etl -mode SEQUENTIAL,SYSTEM_LOGGER
demo circular.etl -mode CIRCULAR -max-file-size 1
demo kbytes.etl -mode SEQUENTIAL,USE_KBYTES_FOR_SIZE -max-file-size 2048
demo preallocate.etl -mode SEQUENTIAL,PREALLOCATE -max-file-size 8
demo newfile-%d.etl -mode NEWFILE -max-file-size 1
demo append.etl -mode SEQUENTIAL
demo append.etl -mode SEQUENTIAL,APPEND
demo buffers-1kb.etl -mode SEQUENTIAL -buffer-kb 1 -version 6.1
demo buffers-1mb.etl -mode SEQUENTIAL -buffer-kb 1024
demo payload-0.etl -mode SEQUENTIAL -payload 0
demo payload-65000.etl -mode SEQUENTIAL -payload 65000 -buffer-kb 128 -events 200
demo processors-64.etl -mode SEQUENTIAL -processors 64
demo pmc.etl -mode SEQUENTIAL -pmc TotalCycles -pmc-source synthetic
demo compressed.etl -compress
demo compressed-6.2.etl -compress -version 6.2
"$e" logsave -events 5000 -buffers 4 -o "$out/logsave.etl" >/dev/null
echo "  logsave.etl: logsave -events 5000 -buffers 4" >&2
files=$(ls "$out"/*.etl)
shift
for f in "$P"/etl-parser/tests/example/*.etl; do
	[ -f "$f" ] && files="$files $f"
done
for d in "$@"; do
	for f in "$d"/*.etl; do
		[ -f "$f" ] && files="$files $f"
	done
done
# shellcheck disable=SC2086 # the file names hold no spaces
python3 "$(dirname "$0")/compare.py" "$e" $files
