"""The platform's own tokens (docs/http-api.md#authentication, #claim-mapping),
end to end on the built binaries: tokens minted by PyJWT (an independent JOSE
implementation, pinned: scripts/install-jwt-minter.sh) with keys a test JWKS
HTTP server publishes, read by a center configured with auth.jwks-url and a
Keycloak-shaped claim mapping:

- an RS256 Keycloak-shaped token (preferred_username, a tenant claim,
  realm_access.roles and scope with the `ec:` prefix) is accepted and mapped;
- an ES256 key works beside the RSA one;
- key rotation: a kid the server starts serving later is accepted after the
  refresh its first token causes;
- an unknown kid is refused, and a burst of them costs at most one fetch per
  auth.jwks-refresh-min-interval-seconds;
- the JWKS server down: the keys already fetched keep working.

Run: /usr/bin/python3 jwks_auth_test.py BUILD_DIR [-k NAME]
"""
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import REPO, Cluster, free_port  # noqa: E402

sys.path.insert(0, subprocess.check_output(
    [os.path.join(REPO, "scripts", "install-jwt-minter.sh")], text=True).strip())
import jwt  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402

BUILD_DIR = None
ISSUER = "https://sso.test/realms/main"
INTERVAL = 2  # auth.jwks-refresh-min-interval-seconds


class JwksServer:
    """Serves `keys` (a JWK list) at /protocol/openid-connect/certs, counting GETs."""

    def __init__(self):
        self.keys = []
        self.fetches = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.fetches += 1
                body = json.dumps({"keys": outer.keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.port}/protocol/openid-connect/certs"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Key:
    def __init__(self, kid, alg):
        self.kid, self.alg = kid, alg
        self.private = (rsa.generate_private_key(public_exponent=65537, key_size=2048)
                        if alg == "RS256" else ec.generate_private_key(ec.SECP256R1()))
        algorithm = jwt.algorithms.RSAAlgorithm if alg == "RS256" else jwt.algorithms.ECAlgorithm
        self.jwk = {**json.loads(algorithm.to_jwk(self.private.public_key())),
                    "kid": kid, "use": "sig", "alg": alg}

    def token(self, user="alice", roles=("ec:platform:customer:export",),
              scope="openid profile email", ttl=600):
        now = int(time.time())
        claims = {"exp": now + ttl, "iat": now, "iss": ISSUER, "aud": ["export-center", "account"],
                  "sub": "3f0c-" + user, "preferred_username": user, "tenant": "t-jwks",
                  "typ": "Bearer", "azp": "platform-web", "scope": scope,
                  "realm_access": {"roles": ["offline_access", *roles]}}
        return jwt.encode(claims, self.private, algorithm=self.alg,
                          headers={"kid": self.kid, "typ": "JWT"})


class JwksAuth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.jwks = JwksServer()
        cls.rsa1 = Key("rsa-1", "RS256")
        cls.ec1 = Key("ec-1", "ES256")
        cls.rsa2 = Key("rsa-2", "RS256")  # served only from test_rotation on
        cls.jwks.keys = [cls.rsa1.jwk, cls.ec1.jwk]
        cls.c = Cluster(BUILD_DIR, seed=26, prefix="ec-jwks-auth-", overrides={"auth": {
            "jwt-issuer": ISSUER,
            "jwks-url": cls.jwks.url,
            "jwks-refresh-min-interval-seconds": INTERVAL,
            "jwks-fetch-timeout-ms": 1000,
            "claims": {"user": "preferred_username", "tenant": "tenant",
                       "app-default": "PLATFORM",
                       "permissions": ["realm_access.roles", "scope"],
                       "permission-prefix": "ec:"}}})
        try:
            cls.c.start()
        except BaseException:
            cls.c.cleanup()
            cls.jwks.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()
        if cls.jwks.server.socket.fileno() >= 0:
            cls.jwks.stop()

    def types(self, token):
        """GET /export-types: (envelope code, envelope); refusals are HTTP 200 envelopes."""
        body = self.c.api("GET", "/export-types", token=token).json()
        return body["code"], body

    def task_code(self, task_id, token):
        return self.c.api("GET", f"/export-tasks/{task_id}", token).json()["code"]

    def assert_accepted(self, token):
        code, body = self.types(token)
        self.assertEqual(code, "200", body)
        self.assertIn("CUSTOMER_LIST", [t["exportType"] for t in body["data"]], body)

    def test_a_keycloak_shaped_rs256_token_is_mapped(self):
        alice = self.rsa1.token()
        self.assert_accepted(alice)
        # Without the prefixed role the type is not offered: the mapping decides.
        code, body = self.types(self.rsa1.token(roles=("platform:customer:export",)))
        self.assertEqual(code, "200", body)
        self.assertEqual(body["data"], [])
        created = self.c.create(alice)
        self.assertEqual(created["code"], "200", created)
        task_id = created["data"]["id"]
        self.assertEqual(self.task_code(task_id, alice), "200")
        # Another user of the tenant sees it only with download:all, here from the scope string.
        bob = self.rsa1.token(user="bob")
        self.assertEqual(self.task_code(task_id, bob), "404")
        boss = self.rsa1.token(user="boss", scope="openid ec:platform:download:all")
        self.assertEqual(self.task_code(task_id, boss), "200")

    def test_b_es256_key_is_accepted(self):
        self.assert_accepted(self.ec1.token())
        # The EC key's kid on an RS256 signature: refused.
        forged = Key("ec-1", "RS256").token()
        self.assertEqual(self.types(forged)[0], "401")

    def test_c_rotation_new_kid_accepted_after_refresh(self):
        self.assert_accepted(self.rsa1.token())  # the first fetch happened
        self.jwks.keys = [self.rsa1.jwk, self.ec1.jwk, self.rsa2.jwk]
        time.sleep(INTERVAL + 0.5)
        before = self.jwks.fetches
        self.assert_accepted(self.rsa2.token())
        self.assertEqual(self.jwks.fetches, before + 1)
        self.assert_accepted(self.rsa2.token())  # cached now
        self.assertEqual(self.jwks.fetches, before + 1)

    def test_d_unknown_kid_is_refused_and_refresh_rate_limited(self):
        time.sleep(INTERVAL + 0.5)
        before = self.jwks.fetches
        stranger = Key("not-served", "ES256")
        for _ in range(15):
            code, body = self.types(stranger.token())
            self.assertEqual(code, "401", body)
            self.assertIn("unknown key", body["message"])
        self.assertEqual(self.jwks.fetches, before + 1)
        time.sleep(INTERVAL + 0.5)
        self.assertEqual(self.types(stranger.token())[0], "401")
        self.assertEqual(self.jwks.fetches, before + 2)

    def test_e_jwks_server_down_cached_keys_still_work(self):
        self.assert_accepted(self.rsa1.token())
        self.jwks.stop()
        time.sleep(INTERVAL + 0.5)
        # An unknown kid makes the center try the dead server: refused, no harm done.
        self.assertEqual(self.types(Key("after-outage", "ES256").token())[0], "401")
        self.assert_accepted(self.rsa1.token())
        self.assert_accepted(self.ec1.token())
        self.assert_accepted(self.rsa2.token())
        self.assertIn("JWKS fetch from", self.c.log())


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
