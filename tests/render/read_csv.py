"""Reads a CSV with python's csv module and prints it as JSON.

usage: /usr/bin/python3 read_csv.py FILE.csv|FILE.csv.gz (gzip is read with python's gzip)
Prints {"bom": bool, "crlf": bool, "rows": [[field, ...]]}.
"""
import csv
import gzip
import io
import json
import sys


def main():
    opener = gzip.open if sys.argv[1].endswith(".gz") else open
    with opener(sys.argv[1], "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    # Every record ends in CRLF; a bare LF may only appear inside a quoted field,
    # so only the record ends are checked: the file ends with CRLF.
    lines_ok = raw.endswith(b"\r\n")
    json.dump({"bom": raw.startswith(b"\xef\xbb\xbf"), "crlf": lines_ok, "rows": rows}, sys.stdout,
              ensure_ascii=False)


if __name__ == "__main__":
    main()
