"""Recalculates an XLSX's formulas with LibreOffice headless and prints them.

usage: /usr/bin/python3 recalc_xlsx.py FILE.xlsx WORKDIR
Every cached formula value in FILE is first replaced by 0 (so a value read
back can only come from LibreOffice's own calculation), LibreOffice is told to
recalculate OOXML files on load (OOXMLRecalcMode 0 in a fresh profile), and it
saves the workbook as XLSX again. Prints {"SheetName!H12": value, ...} for every
formula cell of FILE, values as repr text for floats, read with openpyxl
data_only from LibreOffice's file.
"""
import json
import os
import re
import subprocess
import sys
import zipfile

import openpyxl

FORMULA_V = re.compile(r'(<c r="([A-Z]+[0-9]+)"[^>]*><f>[^<]*</f>)(?:<v>[^<]*</v>)?(</c>)')

PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode"
 oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def main():
    src, work = sys.argv[1], sys.argv[2]
    zeroed = os.path.join(work, "zeroed.xlsx")
    refs = []
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(zeroed, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            m = re.match(r"xl/worksheets/sheet([0-9]+)\.xml$", item.filename)
            if m:
                text = data.decode("utf-8")
                for f in FORMULA_V.finditer(text):
                    refs.append((int(m.group(1)), f.group(2)))
                # A t="e" error cache would survive as an error: drop the type too.
                text = FORMULA_V.sub(lambda f: f.group(1).replace(' t="e"', "") + "<v>0</v>" + f.group(3), text)
                data = text.encode("utf-8")
            zout.writestr(item, data)
    profile = os.path.join(work, "lo-profile")
    os.makedirs(os.path.join(profile, "user"), exist_ok=True)
    with open(os.path.join(profile, "user", "registrymodifications.xcu"), "w") as f:
        f.write(PROFILE)
    outdir = os.path.join(work, "lo-out")
    subprocess.run(["timeout", "180", "soffice", "--headless", "-env:UserInstallation=file://" + profile,
                    "--convert-to", "xlsx", "--outdir", outdir, zeroed], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, HOME=work))
    wb = openpyxl.load_workbook(os.path.join(outdir, "zeroed.xlsx"), data_only=True)
    out = {}
    for sheet, ref in refs:
        ws = wb.worksheets[sheet - 1]
        v = ws[ref].value
        out[ws.title + "!" + ref] = repr(v) if isinstance(v, float) else v
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
