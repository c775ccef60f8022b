"""Opens a password-protected file with independent readers and dumps it as JSON.

usage: /usr/bin/python3 read_encrypted.py xlsx FILE PASSWORD
         msoffcrypto-tool checks the password and the data-integrity HMAC and
         decrypts in memory; openpyxl reads the workbook: read_xlsx.py's JSON.
       /usr/bin/python3 read_encrypted.py zip FILE PASSWORD
         pyzipper reads every entry (checking each AES authentication code):
         {"entries": [{"name", "aes": strength, "method", "bytes", "text"|"xlsx"}]}
         where "text" is a .csv's or .json's UTF-8 and "xlsx" read_xlsx.py's JSON.
Exit 3 with a message on stderr when the password is wrong or the file is damaged.
Both readers come pinned from scripts/install-file-decrypters.sh; nothing
decrypted touches the disk.
"""
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, subprocess.check_output(
    [os.path.join(REPO, "scripts", "install-file-decrypters.sh")], text=True).strip())

import msoffcrypto  # noqa: E402
import openpyxl  # noqa: E402
import pyzipper  # noqa: E402
from read_xlsx import cell_json  # noqa: E402


def workbook_json(data):
    wb = openpyxl.load_workbook(io.BytesIO(data))
    return {"sheets": [{"name": ws.title,
                        "rows": [[cell_json(c) for c in row] for row in ws.iter_rows()]}
                       for ws in wb.worksheets]}


def read_xlsx(path, password):
    with open(path, "rb") as f:
        office = msoffcrypto.OfficeFile(f)
        if not office.is_encrypted():
            raise ValueError("not an encrypted Office file")
        office.load_key(password=password, verify_password=True)
        out = io.BytesIO()
        office.decrypt(out, verify_integrity=True)
    result = workbook_json(out.getvalue())
    result["encryption"] = office.type
    return result


def read_zip(path, password):
    entries = []
    with pyzipper.AESZipFile(path) as z:
        z.setpassword(password.encode("utf-8"))
        for info in z.infolist():
            data = z.read(info.filename)
            entry = {"name": info.filename, "aes": getattr(info, "wz_aes_strength", None),
                     "ae": getattr(info, "wz_aes_version", None),
                     "method": info.compress_type, "bytes": len(data)}
            if info.filename.endswith(".xlsx"):
                entry["xlsx"] = workbook_json(data)
            else:
                entry["text"] = data.decode("utf-8")
            entries.append(entry)
    return {"entries": entries}


def main():
    kind, path, password = sys.argv[1], sys.argv[2], sys.argv[3]
    try:
        result = read_xlsx(path, password) if kind == "xlsx" else read_zip(path, password)
    except Exception as e:  # a wrong password or a damaged file, named
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(3)
    json.dump(result, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
