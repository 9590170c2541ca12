#!/usr/bin/env bash
# realfiles.sh FILE_OR_FOLDER...: reads real Windows ETL files with etwemu's dump and prints
# one Markdown row per file: build, LogFileMode, BuffersWritten against the buffers the
# file holds, the header buffer's records, and how each data buffer was closed as its
# CurrentOffset shows it. It is the evidence behind what etwemu's writer does there
# (session.Logger.seal, etl.headerBufferRules); it exits 1 if a data buffer fits neither
# way of closing or a file cannot be read (dump's message names it, in one line on stderr,
# and the other files are read on). Not part of `go test`: the files are other people's logs, read from
# their public repositories, never copied into this one.
#
# Files it was run with:
#   github.com/airbus-cert/etl-parser at 76b7c04686, tests/example: AMSITrace.etl,
#     ShutdownPerfDiagLogger.etl (build 18362), lxcore_kernel.etl (19041)
#   github.com/jtmoon79/super-speedy-syslog-searcher at 494a21d7 (HEAD) and ce8518ead7,
#     logs/: Windows11Pro/Logs/SIH/SIH.20230422.034724.362.1.etl (22621),
#     programs/Event_Trace_Log/WindowsUpdate.20251008.140245.443.8.etl and
#     waasmedic.20251005_113019_195.etl (22631), and the three gzip-compressed
#     programs/OneDrive/.../CldFlt{0,1,2}-2025-12-21-121418.etlgz (26100; gunzip them first)
#   github.com/microsoft/perfview (HEAD of its default branch), src/TraceEvent/TraceEvent.Tests/
#     inputs: net.4.5.2.x86.etl.zip and net.4.5.2.x64.etl.zip (9200, compressed on
#     relogging), Regression/SelfDescribingSingleEvent.etl (22000, compressed),
#     primitive-types.etl.zip (19043), gcevents.etl.zip (19045, circular) and
#     gcrundownevents.etl.zip (19045); unzip the zips first
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: $0 FILE_OR_FOLDER... (real .etl files, or folders holding them)" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$root" && go build -o "$out/etwemu" ./cmd/etwemu)
files=()
for a in "$@"; do
	if [ -d "$a" ]; then
		n=${#files[@]}
		for f in "$a"/*.etl; do
			if [ -f "$f" ]; then
				files+=("$f")
			fi
		done
		if [ "${#files[@]}" -eq "$n" ]; then
			echo "realfiles: $a holds no .etl file" >&2
		fi
	else
		files+=("$a") # dump says why if it is not a readable ETL file
	fi
done
python3 "$(dirname "$0")/realfiles.py" "$out/etwemu" "${files[@]}"
