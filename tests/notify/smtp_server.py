#!/usr/bin/env python3
"""A real SMTP server for the mail tests: aiosmtpd (pinned, scripts/install-smtp-server.sh).

    smtp_server.py --port P --dir D [--cert C --key K] [--user U --password W]
                   [--tempfail N]

With --cert/--key it offers STARTTLS and requires it before MAIL (and before
AUTH); with --user it requires AUTH (PLAIN or LOGIN) with that user and
password. --tempfail N answers the first N messages "451 4.3.0" after DATA.
Each accepted message is written as D/<n>.eml (the raw bytes) and D/<n>.json:
the envelope (mail_from, rcpt_tos, login) and the message as Python's email
package reads it (subject, message_id, text, html, attachments with their
bytes in base64) — an independent reader of what the center built.
Writes D/ready once serving; stops on SIGTERM.
"""
import argparse
import base64
import email
import email.policy
import json
import os
import signal
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def parse(raw):
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    out = {"subject": str(msg["subject"]), "message_id": str(msg["message-id"]),
           "from": str(msg["from"]), "to": str(msg["to"]), "text": None, "html": None,
           "attachments": []}
    for part in msg.walk():
        if part.is_multipart():
            continue
        if part.get_content_disposition() == "attachment":
            out["attachments"].append({
                "filename": part.get_filename(),
                "content_type": part.get_content_type(),
                "data_b64": base64.b64encode(part.get_payload(decode=True)).decode()})
        elif part.get_content_type() == "text/plain":
            out["text"] = part.get_content()
        elif part.get_content_type() == "text/html":
            out["html"] = part.get_content()
    return out


class Handler:
    def __init__(self, folder, tempfail):
        self.folder = folder
        self.tempfail = tempfail
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            if self.tempfail > 0:
                self.tempfail -= 1
                return "451 4.3.0 try again later"
            self.count += 1
            n = self.count
        raw = envelope.original_content or envelope.content
        auth = session.auth_data
        login = auth.login.decode() if isinstance(auth, LoginPassword) else None
        record = {"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                  "login": login, "message": parse(raw)}
        with open(os.path.join(self.folder, f"{n}.eml"), "wb") as f:
            f.write(raw)
        tmp = os.path.join(self.folder, f".{n}.json")
        with open(tmp, "w") as f:
            json.dump(record, f)
        os.rename(tmp, os.path.join(self.folder, f"{n}.json"))
        return "250 2.0.0 OK"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--tempfail", type=int, default=0)
    a = p.parse_args()

    kwargs = {}
    if a.cert:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(a.cert, a.key)
        kwargs.update(tls_context=tls, require_starttls=True)
    if a.user:
        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = (isinstance(auth_data, LoginPassword)
                  and auth_data.login == a.user.encode()
                  and auth_data.password == a.password.encode())
            return AuthResult(success=ok, handled=False, auth_data=auth_data)
        kwargs.update(authenticator=authenticator, auth_required=True,
                      auth_require_tls=bool(a.cert))
    controller = Controller(Handler(a.dir, a.tempfail), hostname="127.0.0.1", port=a.port,
                            **kwargs)
    controller.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with open(os.path.join(a.dir, "ready"), "w") as f:
        f.write("ready\n")
    stop.wait()
    controller.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
