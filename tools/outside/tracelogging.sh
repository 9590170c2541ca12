#!/usr/bin/env bash
# tracelogging.sh PARSERS: writes an ETL file of TraceLogging events through etwemu's
# go-winio-shaped provider (examples/tracelogging: one event with every field kind, then
# one event per kind) and compares every event's name and fields as etl-parser decodes
# them with `etwemu dump -json`, in a Markdown table, one row per event, then a total; it
# exits 1 if an event differs. PARSERS is the folder check.sh takes (etl-parser and
# construct are used; run with etl-parser 76b7c04686, construct 28c6e5779f). Not part of
# `go test`: the parser is outside code, run from its source, never a dependency.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -d "$1/etl-parser" ]; then
	echo "usage: $0 PARSERS (a folder with etl-parser and construct)" >&2
	exit 2
fi
P=$(cd "$1" && pwd)
export PYTHONPATH="$P/etl-parser:$P/construct"
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$root" && go build -o "$out/etwemu" ./cmd/etwemu && go run ./examples/tracelogging -o "$out/tl.etl" >/dev/null)
python3 "$(dirname "$0")/tracelogging.py" "$out/etwemu" "$out/tl.etl"
