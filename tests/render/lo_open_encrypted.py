"""Opens a password-protected XLSX in LibreOffice headless, through UNO, with its password.

usage: /usr/bin/python3 lo_open_encrypted.py FILE.xlsx PASSWORD WORKDIR
Starts soffice (a fresh profile under WORKDIR, a private pipe), loads FILE
with the Password media descriptor property and prints the first sheet's used
area as JSON: {"rows": [[value, ...], ...]} (numbers as floats, text as str).
Exit 3 when LibreOffice does not open the file (a wrong password among the
causes). Needs Debian's python3-uno.
"""
import json
import os
import subprocess
import sys
import time

import uno  # noqa: F401  (python3-uno; makes com.sun.star importable)
from com.sun.star.beans import PropertyValue


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def main():
    path, password, workdir = sys.argv[1], sys.argv[2], sys.argv[3]
    pipe = "ec_lo_%d" % os.getpid()
    soffice = subprocess.Popen(
        ["soffice", "--headless", "--invisible", "--norestore", "--nologo", "--nodefault",
         "-env:UserInstallation=file://" + os.path.join(os.path.abspath(workdir), "lo-profile"),
         "--accept=pipe,name=%s;urp;" % pipe],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext(
            "com.sun.star.bridge.UnoUrlResolver", local)
        ctx = None
        deadline = time.time() + 90
        while ctx is None:
            try:
                ctx = resolver.resolve(
                    "uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
            except Exception:
                if time.time() > deadline or soffice.poll() is not None:
                    raise
                time.sleep(0.5)
        desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        url = uno.systemPathToFileUrl(os.path.abspath(path))
        try:
            doc = desktop.loadComponentFromURL(
                url, "_blank", 0,
                (prop("Hidden", True), prop("ReadOnly", True), prop("Password", password)))
        except Exception as e:
            doc = None
            print("load failed: %s" % e, file=sys.stderr)
        if doc is None or not hasattr(doc, "Sheets"):
            print("LibreOffice did not open %s" % path, file=sys.stderr)
            try:
                desktop.terminate()
            except Exception:
                pass
            sys.exit(3)
        sheet = doc.Sheets.getByIndex(0)
        cursor = sheet.createCursor()
        cursor.gotoEndOfUsedArea(False)
        end = cursor.RangeAddress
        rows = sheet.getCellRangeByPosition(0, 0, end.EndColumn, end.EndRow).getDataArray()
        json.dump({"rows": [list(r) for r in rows]}, sys.stdout, ensure_ascii=False)
        doc.close(True)
        try:
            desktop.terminate()
        except Exception:
            pass  # the bridge goes away with the process
    finally:
        try:
            soffice.wait(timeout=30)
        except subprocess.TimeoutExpired:
            soffice.kill()


if __name__ == "__main__":
    main()
