"""realfiles.py ETWEMU FILE...: what real Windows ETL files hold where etwemu's writer makes
choices, read with etwemu's own dump (-buffers -json for the buffer headers, -json for the
header buffer's records). One Markdown row per file. See realfiles.sh."""
import json
import os
import subprocess
import sys


def lines(*args):
    out = subprocess.run(list(args), check=True, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines() if l]


def main():
    etwemu, files = sys.argv[1], sys.argv[2:]
    print("| file | build | mode | BuffersWritten | buffers held | buffer 0 records | closed full | closed by flush | other | empty | last buffer |")
    print("|---|---:|---|---:|---:|---|---:|---:|---:|---:|---|")
    others = 0
    for f in files:
        rows = lines(etwemu, "dump", "-buffers", "-json", f)
        h, bufs = rows[0], rows[1:]
        recs = lines(etwemu, "dump", "-json", "-payload", "0", f)[1:]
        hooks = [r.get("hook_name") or r.get("hook") for r in recs if r["buffer"] == 0]
        full = flushed = other = empty = 0
        for b in bufs[1:]:
            # The trace buffer's size is the file header's: a compressed buffer's own
            # BufferSize is the bytes it takes in the file.
            size = h["buffer_size"]
            d = b["current_offset"] - b["saved_offset"]
            if b["records"] == 0:
                empty += 1
            if d == size:
                flushed += 1
            elif b["current_offset"] > size and 0 < d <= 0x10000:
                full += 1
            else:
                other += 1
        others += other
        last = bufs[-1] if len(bufs) > 1 else None
        lastdesc = "none" if last is None else "%s, %d records" % (last["flags"].replace("|", " "), last["records"])
        print("| %s | %d | %s | %d | %d | %s | %d | %d | %d | %d | %s |" % (
            os.path.basename(f), h["build"], h["log_file_mode"], h["buffers_written"], len(bufs),
            ", ".join(hooks), full, flushed, other, empty, lastdesc))
    print()
    print("closed full: CurrentOffset is past BufferSize by the refused record(s); closed by flush: "
          "CurrentOffset = SavedOffset + BufferSize; other: neither (%d)" % others)
    return 1 if others else 0


if __name__ == "__main__":
    sys.exit(main())
