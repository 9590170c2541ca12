"""Reads ETL files with etwemu's reader and the two outside parsers and prints a table.

Run by check.sh: compare.py ETWEMU FILE..., with PYTHONPATH naming the parsers' sources.
For each file it counts records, in the header buffer and in all, and reads the log-file
header's BuffersWritten; an exception is reported as the parser's error, with the
records it read before it.

The parsers' known faults are listed once, in KNOWN_FAULTS below, each with its reason.
From etwemu's reading of a file (every buffer's records, in file order, and
BuffersWritten) the script predicts what each parser reads when its faults act. A parser
that reads every record agrees; one that reads exactly what its faults predict is marked
with the fault, as known, and is not counted against etwemu; anything else (etwemu's own
error, a count or an exception no listed fault explains) is a disagreement, marked
**no**, and makes the exit status 1.
"""
import json
import os
import subprocess
import sys
from collections import namedtuple

# A known fault of an outside parser: the parser, the label the table gives it (None: it
# never changes what this table counts) and why it happens.
Fault = namedtuple("Fault", "parser label reason")

KNOWN_FAULTS = {
    "no-decompressor": Fault(
        "etl-parser", "etl-parser has no decompressor",
        "it cannot read EVENT_TRACE_COMPRESSED_MODE buffers: it frames a buffer as SavedOffset "
        "bytes and BufferSize - SavedOffset of padding, and a compressed buffer's BufferSize "
        "(the bytes it takes in the file) is less than its SavedOffset, so its GreedyRange stops "
        "there without an error and it reads no record from that buffer on"),
    "empty-buffer": Fault(
        "etl-parser", "etl-parser raises on a buffer without a record",
        "its RepeatUntil wants one record at least, so the empty flush-marker buffer a flush at "
        "stop writes (as Windows does) raises SelectError, and it reads no record from there on"),
    "trusts-buffers-written": Fault(
        "dissect.etl", "dissect.etl trusts BuffersWritten",
        "it reads as many buffers as the header's BuffersWritten says: a file holding fewer "
        "(a circular file's header counts every buffer the session wrote) is read past its end "
        "(EOFError), one holding more (the file of a session that had not stopped, BuffersWritten 0 in Windows' "
        "files) is read short"),
    "no-header-buffer": Fault(
        "etl-parser", None,
        "it leaves the header buffer out of what it reports: it agrees when it counts etwemu's "
        "records after the header buffer"),
    "guid-byte-order": Fault(
        "dissect.etl", None,
        "it prints GUIDs byte-swapped (it reads them big-endian); counts are unaffected"),
    "etl2xml-event-header": Fault(
        "etl-parser", None,
        "its etl2xml crashes on EVENT_HEADER events that are not TraceLogging (event.py reads "
        "provider_id.data1, not provider_id.inner.data1): records are counted through its "
        "observer instead"),
}


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


def dump_json(tool, *args):
    """The JSON lines of `etwemu dump ARGS...`, or an error: dump's message (the reason)."""
    p = subprocess.run([tool, "dump", *args], capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip() or f"dump exited {p.returncode}").replace("\n", " ")
    try:
        return [json.loads(x) for x in p.stdout.splitlines() if x], None
    except ValueError as exc:
        return None, f"dump printed what is not JSON: {exc}"


def etwemu(tool, path):
    lines, err = dump_json(tool, "-json", "-payload", "0", path)
    if err is None:
        bufs, err = dump_json(tool, "-buffers", "-json", path)
    if err is not None:
        return {"error": err[:160], "records": 0, "header_records": 0}
    recs = lines[1:]
    return {"records": len(recs), "header_records": sum(1 for r in recs if r["buffer"] == 0),
            "buffers_written": lines[0]["buffersWritten"], "buffers": bufs[1:]}


def expect_dissect_etl(o):
    """What dissect.etl reads of a file etwemu read as o when its faults act, and those faults."""
    bufs, bw = o["buffers"], o["buffers_written"]
    read = bufs[:bw]
    want = {"records": sum(b["records"] for b in read),
            "header_records": read[0]["records"] if read else 0,
            "raises": bw > len(bufs)}
    return want, (["trusts-buffers-written"] if bw != len(bufs) else [])


def expect_etl_parser(o):
    """What etl-parser reads of a file etwemu read as o when its faults act, and those faults.
    "raises" None: either way (it reads compressed bytes as records)."""
    n, faults, raises = 0, [], False
    for b in o["buffers"][1:]:  # no-header-buffer
        if b.get("compressed"):
            faults.append("no-decompressor")
            if b["buffer_size"] >= b["saved_offset"]:
                raises = None  # it frames the buffer and reads its compressed bytes as records
            break
        if b["records"] == 0:
            faults.append("empty-buffer")
            raises = True
            break
        n += b["records"]
    return {"records": n, "raises": raises}, faults


def matches(r, want):
    if r["records"] != want["records"]:
        return False
    if "header_records" in want and r["header_records"] != want["header_records"]:
        return False
    return want["raises"] is None or ("error" in r) == want["raises"]


def judge(r, ideal, expected, faults):
    """[] where the parser read every record, the known faults that explain what it read, or
    None where nothing listed explains it."""
    if matches(r, ideal):
        return []
    if faults and matches(r, expected):
        return faults
    return None


def verdict(o, d, e):
    """The agree cell, the known faults it names, and whether the file disagrees."""
    if "error" in o:
        return "**no**: etwemu could not read it", [], True
    ideal_d = {"records": o["records"], "header_records": o["header_records"], "raises": False}
    ideal_e = {"records": o["records"] - o["header_records"], "raises": False}
    judged = (("dissect.etl", d, judge(d, ideal_d, *expect_dissect_etl(o))),
              ("etl-parser", e, judge(e, ideal_e, *expect_etl_parser(o))))
    unexplained = [name for name, _, faults in judged if faults is None]
    if unexplained:
        return "**no**: " + " and ".join(unexplained) + " read otherwise than any known fault explains", [], True
    seen, short, raised = [], False, []
    for name, r, faults in judged:
        if faults:
            seen += faults
            if r["records"] == (o["records"] if name == "dissect.etl" else o["records"] - o["header_records"]):
                raised.append(name)  # faults explain only a difference, so it raised after every record
            else:
                short = True
    if not seen:
        return "yes", seen, False
    why = "; ".join(f"{KNOWN_FAULTS[f].label}: known" for f in seen)
    if short:
        return f"no ({why})", seen, False
    return f"every record, then {' and '.join(raised)} raised ({why})", seen, False


def cell(r, header=True):
    if "error" in r:
        return f"{r['records']}, then {r['error']}".replace("\n", " ").replace("|", "/")
    if header:
        return f"{r['records']} ({r['header_records']})"
    return str(r["records"])


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def main():
    tool, files = sys.argv[1], sys.argv[2:]
    print("| file | bytes | etwemu records (header buffer) | BuffersWritten | dissect.etl records (header buffer) | etl-parser records | agree |")
    print("|---|---:|---:|---:|---:|---:|---|")
    bad = known = 0
    seen = {}
    for f in files:
        o, d, e = etwemu(tool, f), dissect_etl(f), etl_parser(f)
        v, faults, disagrees = verdict(o, d, e)
        if disagrees:
            bad += 1
        elif faults:
            known += 1
        for k in faults:
            seen[k] = seen.get(k, 0) + 1
        size = os.path.getsize(f) if os.path.isfile(f) else ""
        print(f"| {os.path.basename(f)} | {size} | {cell(o)} | {o.get('buffers_written', '')} | {cell(d)} | {cell(e, False)} | {v} |")
    whole = len(files) - bad - known
    print(f"\n{whole} of {len(files)} files: every reader read every record; in {known} more a parser's "
          f"known fault explains what it read; in {bad} the readers disagree.")
    if seen:
        print("\nKnown faults of the outside parsers met here (not etwemu's):\n")
        for k, n in seen.items():
            fault = KNOWN_FAULTS[k]
            print(f"- {fault.label} ({plural(n, 'file')}): {fault.reason}.")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
