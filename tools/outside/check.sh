#!/usr/bin/env bash
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
# The parsers' known faults are listed once, each with its reason, in compare.py's
# KNOWN_FAULTS (etl-parser has no XPRESS decompressor, raises on a buffer without a record;
# dissect.etl trusts BuffersWritten; ...). From etwemu's reading of each file the script
# predicts what a parser reads when its faults act: a row where a parser reads just that is
# marked with the fault as known, and the reasons of the faults met are printed below the
# table. It exits 1 only where the readers disagree otherwise (etwemu's own error, or a
# count or an exception no listed fault explains), 2 on a usage error.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -d "$1/dissect.etl" ]; then
	echo "usage: $0 PARSERS [REAL...] (PARSERS: a folder with dissect.etl, dissect.cstruct, dissect.util, etl-parser, construct, defusedxml; REAL: folders of real .etl files)" >&2
	exit 2
fi
for d in "${@:2}"; do
	if [ ! -d "$d" ]; then
		echo "$0: REAL $d is not a folder (folders of real .etl files)" >&2
		exit 2
	fi
done
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
files=("$out"/*.etl)
shift
for d in "$P/etl-parser/tests/example" "$@"; do
	n=${#files[@]}
	for f in "$d"/*.etl; do
		if [ -f "$f" ]; then
			files+=("$f")
		fi
	done
	if [ "${#files[@]}" -eq "$n" ]; then
		echo "  $d holds no .etl file" >&2
	fi
done
python3 "$(dirname "$0")/compare.py" "$e" "${files[@]}"
