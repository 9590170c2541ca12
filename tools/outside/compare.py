"""Reads ETL files with etwemu's reader and the two outside parsers and prints a table.

Run by check.sh: compare.py ETWEMU FILE..., with PYTHONPATH naming the parsers' sources.
For each file it counts records, in the header buffer and in all, and reads the log-file
header's BuffersWritten; an exception is reported as the parser's error, with the
records it read before it. etl-parser leaves the header buffer out of what it reports,
so it agrees when it counts etwemu's records after the header buffer.
"""
import json
import os
import subprocess
import sys


def dissect_etl(path):
    from dissect.etl.etl import ETL

    out = {"records": 0, "header_records": 0}
    try:
        with open(path, "rb") as fh:
            e = ETL(fh)
            out["buffers_written"] = e.logfile_header.buffers_written
            for i, buf in enumerate(e.buffers()):
                for _ in buf:
                    out["records"] += 1
                    if i == 0:
                        out["header_records"] += 1
    except Exception as exc:  # a parser fault is a result here
        out["error"] = f"{type(exc).__name__}: {exc}"[:160]
    return out


def etl_parser(path):
    from etl.etl import IEtlFileObserver, build_from_stream

    class Count(IEtlFileObserver):
        n = 0

        def on_event_record(self, event):
            Count.n += 1

        def on_trace_record(self, event):
            Count.n += 1

        def on_perfinfo_trace(self, obj):
            Count.n += 1

        def on_system_trace(self, obj):
            Count.n += 1

        def on_win_trace(self, obj):
            Count.n += 1

    out = {}
    try:
        with open(path, "rb") as fh:
            build_from_stream(fh.read()).parse(Count())
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"[:160]
    out["records"] = Count.n
    return out


def etwemu(tool, path):
    p = subprocess.run([tool, "dump", "-json", "-payload", "0", path], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip()[:160], "records": 0, "header_records": 0}
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    recs = lines[1:]
    return {"records": len(recs), "header_records": sum(1 for r in recs if r["buffer"] == 0),
            "buffers_written": lines[0]["buffers_written"], "buffer_size": lines[0]["buffer_size"]}


def cell(r, header=True):
    if "error" in r:
        return f"{r['records']}, then {r['error']}".replace("\n", " ").replace("|", "/")
    if header:
        return f"{r['records']} ({r['header_records']})"
    return str(r["records"])


def main():
    tool, files = sys.argv[1], sys.argv[2:]
    print("| file | bytes | etwemu records (header buffer) | BuffersWritten | dissect.etl records (header buffer) | etl-parser records | agree |")
    print("|---|---:|---:|---:|---:|---:|---|")
    bad = 0
    for f in files:
        o, d, e = etwemu(tool, f), dissect_etl(f), etl_parser(f)
        counts = (o["records"] == d["records"] and o["header_records"] == d["header_records"]
                  and e["records"] == o["records"] - o["header_records"])
        errs = [n for n, r in (("etwemu", o), ("dissect.etl", d), ("etl-parser", e)) if "error" in r]
        if counts and not errs:
            verdict = "yes"
        elif counts and "etwemu" not in errs:
            verdict = "every record, then " + " and ".join(errs) + " raised"
        else:
            verdict = "**no**"
            bad += 1
        print(f"| {os.path.basename(f)} | {os.path.getsize(f)} | {cell(o)} | {o.get('buffers_written', '')} | {cell(d)} | {cell(e, False)} | {verdict} |")
    print(f"\n{len(files) - bad} of {len(files)} files: every reader read every record ({bad} not).")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
