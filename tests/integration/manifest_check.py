"""Checks a downloaded file against its task's manifest (docs/task-lifecycle.md#the-files-manifest)
with an independent hash: Python's hashlib over the bytes the client received."""
import base64
import hashlib


def assert_manifest(test, task, body, headers=None, parts=None):
    """`task` is the task JSON, `body` the whole file as downloaded. `headers`,
    when given, are a download answer's: its Repr-Digest must be the file's.
    `parts`, when given, are the data rows each sheet or part must hold."""
    manifest = task["manifest"]
    test.assertIsNotNone(manifest, task)
    digest = hashlib.sha256(body)
    test.assertEqual(manifest["sha256"], digest.hexdigest(), "the manifest's SHA-256")
    test.assertEqual(int(manifest["sizeBytes"]), len(body))
    test.assertEqual(manifest["sizeBytes"], task["sizeBytes"])
    test.assertEqual(manifest["rows"], task["totalRows"])
    got_parts = [int(p["rows"]) for p in manifest["parts"]]
    test.assertEqual(sum(got_parts), int(task["totalRows"]), manifest)
    if parts is not None:
        test.assertEqual(got_parts, parts, manifest)
    if headers is not None:
        want = "sha-256=:" + base64.b64encode(digest.digest()).decode() + ":"
        test.assertEqual(headers.get("Repr-Digest"), want)
