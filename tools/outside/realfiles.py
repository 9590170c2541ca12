"""realfiles.py ETWEMU FILE...: what real Windows ETL files hold where etwemu's writer makes
choices, read with etwemu's own dump (-buffers -json for the buffer headers, -json for the
header buffer's records). One Markdown row per file; a file dump cannot read is named on
stderr, in one line with dump's message, and the others are read on. Exits 1 if a file
could not be read or a data buffer fits neither way of closing. See realfiles.sh."""
import json
import os
import subprocess
import sys


class DumpError(Exception):
    """etwemu dump failed on a file: its message."""


def lines(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if p.returncode != 0:
        raise DumpError(" ".join(p.stderr.split()) or f"dump exited {p.returncode}")
    try:
        return [json.loads(l) for l in p.stdout.splitlines() if l]
    except ValueError as exc:
        raise DumpError(f"dump printed what is not JSON: {exc}") from exc


def records(n):
    return "1 record" if n == 1 else f"{n} records"


def main():
    etwemu, files = sys.argv[1], sys.argv[2:]
    print("| file | build | mode | BuffersWritten | buffers held | buffer 0 records | closed full | closed by flush | other | empty | last buffer |")
    print("|---|---:|---|---:|---:|---|---:|---:|---:|---:|---|")
    others = 0
    failed = []
    for f in files:
        try:
            rows = lines(etwemu, "dump", "-buffers", "-json", f)
            recs = lines(etwemu, "dump", "-json", "-payload", "0", f)[1:]
        except DumpError as exc:
            failed.append(f)
            sys.stdout.flush()
            print(f"realfiles: {f} not read: {exc}", file=sys.stderr, flush=True)
            continue
        h, bufs = rows[0], rows[1:]
        hooks = [r.get("hookName") or hex(r.get("hookId", 0)) for r in recs if r["buffer"] == 0]
        full = flushed = other = empty = 0
        for b in bufs[1:]:
            # The trace buffer's size is the file header's: a compressed buffer's own
            # BufferSize is the bytes it takes in the file.
            size = h["bufferSize"]
            d = b["currentOffset"] - b["savedOffset"]
            if b["records"] == 0:
                empty += 1
            if d == size:
                flushed += 1
            elif b["currentOffset"] > size and 0 < d <= 0x10000:
                full += 1
            else:
                other += 1
        others += other
        last = bufs[-1] if len(bufs) > 1 else None
        lastdesc = "none" if last is None else "%s, %s" % (last["flags"].replace("|", " "), records(last["records"]))
        print("| %s | %d | %s | %d | %d | %s | %d | %d | %d | %d | %s |" % (
            os.path.basename(f), h["build"], h["logFileMode"], h["buffersWritten"], len(bufs),
            ", ".join(hooks), full, flushed, other, empty, lastdesc))
    print()
    print("closed full: CurrentOffset is past BufferSize by the refused record(s); closed by flush: "
          "CurrentOffset = SavedOffset + BufferSize; other: neither (%d)" % others)
    if failed:
        print("\n%d of %d files could not be read by dump (named on stderr): %s" % (
            len(failed), len(files), ", ".join(os.path.basename(f) for f in failed)))
    return 1 if others or failed else 0


if __name__ == "__main__":
    sys.exit(main())
