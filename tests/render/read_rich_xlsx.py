"""Dumps what the rich column options put in an XLSX, with independent readers:
python3-openpyxl for cells, merges, panes, styles and conditional formats, and
zipfile + a regex for the exact text of cached formula values.

usage: /usr/bin/python3 read_rich_xlsx.py FILE.xlsx
Prints {"sheets": [{"name", "freeze", "merged": ["A1:A3", ...] (sorted),
  "rows": [[value|null, ...]] (formulas as "=...", floats as repr text),
  "cached": {"H12": value} (openpyxl data_only), "raw": {"H12": "<v> text"},
  "styles": {"A1": {"bold", "fill", "font", "h", "v", "wrap"}} for the header rows and
            the first data row,
  "cf": [{"sqref", "type", "operator", "formula": [...], "fill", "font"}]}]}
"""
import json
import re
import sys
import zipfile

import openpyxl

CELL_RE = re.compile(r'<c r="([A-Z]+[0-9]+)"[^>]*><f>[^<]*</f>(?:<v>([^<]*)</v>)?</c>')


def plain(v):
    if isinstance(v, float):
        return repr(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def colour(c):
    if c is None or c.rgb is None or not isinstance(c.rgb, str):
        return None
    return c.rgb


def main():
    path = sys.argv[1]
    wb = openpyxl.load_workbook(path)
    cached_wb = openpyxl.load_workbook(path, data_only=True)
    raw_sheets = []
    with zipfile.ZipFile(path) as z:
        i = 1
        while "xl/worksheets/sheet%d.xml" % i in z.namelist():
            xml = z.read("xl/worksheets/sheet%d.xml" % i).decode("utf-8")
            raw_sheets.append({m.group(1): m.group(2) for m in CELL_RE.finditer(xml)})
            i += 1
    out = {"sheets": []}
    for n, ws in enumerate(wb.worksheets):
        cws = cached_wb.worksheets[n]
        rows = [[plain(c.value) for c in row] for row in ws.iter_rows()]
        cached = {ref: plain(cws[ref].value) for ref in raw_sheets[n]}
        header_rows = ws.freeze_panes and int(re.sub(r"[A-Z]+", "", ws.freeze_panes)) - 1 or 1
        styles = {}
        for row in ws.iter_rows(min_row=1, max_row=header_rows + 1):
            for c in row:
                styles[c.coordinate] = {
                    "bold": bool(c.font and c.font.b),
                    "font": colour(c.font.color) if c.font else None,
                    "fill": colour(c.fill.fgColor) if c.fill and c.fill.fill_type == "solid" else None,
                    "h": c.alignment.horizontal,
                    "v": c.alignment.vertical,
                    "wrap": bool(c.alignment.wrap_text),
                }
        cf = []
        for fmt in ws.conditional_formatting:
            for rule in fmt.rules:
                dxf = rule.dxf
                cf.append({
                    "sqref": str(fmt.sqref),
                    "type": rule.type,
                    "operator": rule.operator,
                    "formula": list(rule.formula),
                    "fill": colour(dxf.fill.bgColor) if dxf is not None and dxf.fill is not None else None,
                    "font": colour(dxf.font.color) if dxf is not None and dxf.font is not None else None,
                })
        out["sheets"].append({
            "name": ws.title,
            "freeze": ws.freeze_panes,
            "merged": sorted(str(r) for r in ws.merged_cells.ranges),
            "rows": rows,
            "cached": cached,
            "raw": raw_sheets[n],
            "styles": styles,
            "cf": cf,
        })
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
