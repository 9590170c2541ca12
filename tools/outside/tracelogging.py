"""Reads a file of TraceLogging events with airbus-cert's etl-parser and with
`etwemu dump -json`, and compares every event's name and every field's name and value.

Run by tracelogging.sh: tracelogging.py ETWEMU FILE, with PYTHONPATH naming etl-parser's
sources and construct's. Prints a Markdown table, one row per event (agreed, or
etl-parser's error or the first difference), and a total: events and fields compared, events etl-parser could not
decode. etl-parser's decoder has no STRUCT, FILETIME or HEXINT64 (a typo tests HEXINT32
twice), decodes strings as ASCII only, and stops the event at the first field it cannot
read: such events are reported as etl-parser's, not compared.
"""
import json
import subprocess
import sys


def ours(tool, path):
    p = subprocess.run([tool, "dump", "-json", "-payload", "0", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(" ".join(p.stderr.split()) or f"dump exited {p.returncode}")
    events = []
    for line in p.stdout.splitlines()[1:]:
        r = json.loads(line)
        if r.get("event"):
            events.append((r["event"], r.get("fields", [])))
    return events


def theirs(path):
    from etl.etl import IEtlFileObserver, build_from_stream

    events = []

    class Obs(IEtlFileObserver):
        def on_event_record(self, event):
            try:
                tl = event.parse_tracelogging()
                events.append((tl.get_name(), dict(tl), None))
            except Exception as exc:  # a decoder fault is a result here
                events.append((None, None, f"{type(exc).__name__}: {exc}"[:120]))

        def on_trace_record(self, event):
            pass

        def on_perfinfo_trace(self, obj):
            pass

        def on_system_trace(self, obj):
            pass

        def on_win_trace(self, obj):
            pass

    with open(path, "rb") as fh:
        build_from_stream(fh.read()).parse(Obs())
    return events


def same(a, b):
    """a: etl-parser's value; b: dump -json's."""
    if isinstance(b, list):
        if isinstance(a, (bytes, bytearray)):
            a = list(a)
        return isinstance(a, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(b, bool):
        return a == b or a == int(b)
    if isinstance(b, str) and b.startswith("0x"):
        if isinstance(a, list):  # BINARY, read as a UINT8 array
            return bytes(a).hex().upper() == b[2:]
        return isinstance(a, int) and a == int(b, 16)
    if isinstance(b, (int, float)) and isinstance(a, (int, float)):
        return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))
    if isinstance(b, str) and hasattr(a, "inner"):  # a GUID, as etl-parser's Container
        g = a.inner
        d4 = bytes(g.data4).hex()
        return f"{g.data1:08x}-{g.data2:04x}-{g.data3:04x}-{d4[:4]}-{d4[4:]}" == b.lower()
    return a == b


def cell(text):
    return str(text).replace("\n", " ").replace("|", "/")


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def main():
    tool, path = sys.argv[1], sys.argv[2]
    try:
        mine = ours(tool, path)
    except (RuntimeError, ValueError, KeyError) as exc:
        print(f"tracelogging: etwemu's dump did not read {path}: {exc}", file=sys.stderr)
        return 1
    try:
        other = theirs(path)
    except Exception as exc:  # the parser's fault, reported, not a traceback
        print(f"tracelogging: etl-parser did not read {path}: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
        return 1
    if len(mine) != len(other):
        print(f"events: etwemu {len(mine)}, etl-parser {len(other)}")
        return 1
    print("| event | etl-parser against etwemu's dump |")
    print("|---|---|")
    agreed = fields = failed = differ = 0
    for (name, fs), (oname, ofs, err) in zip(mine, other):
        if err is not None:
            failed += 1
            print(f"| {cell(name)} | etl-parser cannot decode it: {cell(err)} |")
            continue
        diff = None
        if oname != name:
            diff = f"name {oname!r}"
        elif [f["name"] for f in fs] != list(ofs.keys()):
            diff = f"field names {list(ofs.keys())}"
        else:
            for f in fs:
                if not same(ofs[f["name"]], f["value"]):
                    diff = f"{f['name']}: etl-parser {ofs[f['name']]!r}, etwemu {f['value']!r}"
                    break
        if diff:
            differ += 1
            print(f"| {cell(name)} | differs: {cell(diff)} |")
        else:
            agreed += 1
            fields += len(fs)
            print(f"| {cell(name)} | agreed, {plural(len(fs), 'field')} |")
    print(f"\n{plural(len(mine), 'event')}: {agreed} agreed ({plural(fields, 'field')} compared), "
          f"{failed} etl-parser could not decode, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
