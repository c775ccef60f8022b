"""The task event stream and the token behind it
(docs/http-api.md#get-export-tasksevents--task-events), end to end on the built
binaries:

- a stream opened with a token that expires in ~3 s ends there (exp plus the
  leeway, 1 s here) with a last `event: reauth`, whether it was opened with
  the Authorization header or with a ticket;
- a ticket from POST /export-tasks/events-ticket opens one stream: the
  second connect with it is refused, and so is a fresh one after its life
  (server.events-ticket-ttl-seconds, 2 s here instead of 30);
- a bearer token in the query string (?access_token=) is refused with 401,
  also beside a valid Authorization header; and the ticket is not in the log.

Run: /usr/bin/python3 events_auth_test.py BUILD_DIR [-k NAME]
"""
import os
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
from harness import API, Cluster, TaskStream, request  # noqa: E402

BUILD_DIR = None
TICKET_TTL = 2
LEEWAY = 1


class EventsAuth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=20, prefix="ec-events-auth-",
                        overrides={"auth": {"jwt-leeway-seconds": LEEWAY},
                                   "server": {"events-ticket-ttl-seconds": TICKET_TTL,
                                              "events-poll-interval-ms": 200}})
        try:
            cls.c.start()
        except BaseException:
            cls.c.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def ticket(self, token):
        r = self.c.api("POST", "/export-tasks/events-ticket", token=token)
        self.assertEqual(r.status, 200)
        body = r.json()
        self.assertEqual(body["code"], "200", body)
        self.assertEqual(body["data"]["expiresInSeconds"], TICKET_TTL)
        self.assertEqual(r.headers["Cache-Control"], "no-store")
        return body["data"]["ticket"]

    def connect(self, query, token=None):
        """GET /export-tasks/events?<query>: (HTTP status, envelope or None)."""
        r = request("GET", self.c.base + API + "/export-tasks/events?" + query, token=token,
                    headers={"Accept": "text/event-stream"})
        return r.status, (r.json() if r.status != 200 else None)

    @staticmethod
    def wait_event(stream, task_id, timeout):
        deadline = time.time() + timeout
        while not stream.has(task_id) and time.time() < deadline:
            time.sleep(0.05)
        return stream.has(task_id)

    def wait_closed(self, stream, timeout):
        deadline = time.time() + timeout
        while stream.open and time.time() < deadline:
            time.sleep(0.05)
        return not stream.open

    def test_a_stream_ends_when_its_token_expires(self):
        token = self.c.token("expiring", "t-exp", ttl=3)
        opened = time.time()
        by_header = TaskStream(self.c.center_port, token)
        by_ticket = TaskStream(self.c.center_port, ticket=self.ticket(token))
        try:
            # Events flow while the token is valid.
            task = self.c.create(token)
            self.assertEqual(task["code"], "200", task)
            for stream in (by_header, by_ticket):
                self.assertTrue(self.wait_event(stream, task["data"]["id"], 2), stream.errors)
            for stream in (by_header, by_ticket):
                self.assertTrue(self.wait_closed(stream, 3 + LEEWAY + 5), "stream still open")
                took = time.time() - opened
                # exp is whole seconds (2..3 s after opening) plus the 1 s leeway,
                # ended within a poll interval.
                self.assertGreaterEqual(took, 2 + LEEWAY - 0.2)
                self.assertLess(took, 3 + LEEWAY + 3)
                self.assertEqual(stream.reauth["reason"], "TOKEN_EXPIRED", stream.errors)
                self.assertEqual(stream.errors, [])
        finally:
            by_header.close()
            by_ticket.close()
        # The expired token gets no new ticket: the page signs in again.
        r = self.c.api("POST", "/export-tasks/events-ticket", token=token)
        self.assertEqual(r.json()["code"], "401")

    def test_a_ticket_opens_one_stream_only(self):
        token = self.c.token("once", "t-once")
        ticket = self.ticket(token)
        stream = TaskStream(self.c.center_port, ticket=ticket)
        try:
            task = self.c.create(token)
            self.assertTrue(self.wait_event(stream, task["data"]["id"], 10), stream.errors)
            status, envelope = self.connect("ticket=" + urllib.parse.quote(ticket, safe=""))
            self.assertEqual(status, 401)
            self.assertEqual(envelope["code"], "401")
            self.assertIn("already used", envelope["message"])
            self.assertTrue(stream.open)  # the first stream is not disturbed
        finally:
            stream.close()
        # Nothing in the log holds the ticket (the access log has the path only).
        self.assertNotIn(ticket, self.c.log())

    def test_a_ticket_expires_after_its_life(self):
        ticket = self.ticket(self.c.token("late", "t-late"))
        time.sleep(TICKET_TTL + 0.5)
        status, envelope = self.connect("ticket=" + urllib.parse.quote(ticket, safe=""))
        self.assertEqual(status, 401)
        self.assertIn("expired", envelope["message"])

    def test_a_bearer_token_in_the_query_is_refused(self):
        token = self.c.token("query", "t-query")
        status, envelope = self.connect("access_token=" + token)
        self.assertEqual(status, 401)
        self.assertEqual(envelope["code"], "401")
        self.assertIn("events-ticket", envelope["message"])
        # Beside a valid header too: the URL may already be in a proxy's log.
        status, _ = self.connect("access_token=" + token, token=token)
        self.assertEqual(status, 401)
        # The header alone still opens the stream.
        TaskStream(self.c.center_port, token).close()


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
