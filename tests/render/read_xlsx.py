"""Dumps an XLSX as JSON with an independent reader (python3-openpyxl).

usage: /usr/bin/python3 read_xlsx.py FILE.xlsx
Prints {"sheets": [{"name", "freeze", "widths": {"A": w}, "rows": [[cell|null, ...]]}]}
where cell = {"v": value, "t": python type name, "fmt": number format, "bold": bool}.
Datetimes and dates are ISO text; floats keep repr() so 68141.1 stays 68141.1.
"""
import datetime
import json
import sys

import openpyxl


def cell_json(cell):
    v = cell.value
    if v is None:
        return None
    t = type(v).__name__
    if isinstance(v, (datetime.datetime, datetime.date)):
        v = v.isoformat()
    elif isinstance(v, float):
        v = repr(v)
    return {"v": v, "t": t, "fmt": cell.number_format, "bold": bool(cell.font and cell.font.b)}


def main():
    wb = openpyxl.load_workbook(sys.argv[1])
    out = {"sheets": []}
    for ws in wb.worksheets:
        rows = [[cell_json(c) for c in row] for row in ws.iter_rows()]
        widths = {k: d.width for k, d in ws.column_dimensions.items() if d.customWidth}
        out["sheets"].append({"name": ws.title, "freeze": ws.freeze_panes, "widths": widths,
                              "rows": rows})
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
