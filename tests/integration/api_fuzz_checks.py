"""Schemathesis hooks of tests/integration/api_fuzz_test.py (SCHEMATHESIS_HOOKS).

before_load_schema narrows the bodies of create and preview, which the
document leaves open (export types and their parameters are configuration),
to the two types the test configures: generated requests then reach the
parameter validation, the template engine and the exports on both routes
instead of stopping at "unknown exportType", and an unknown type, a value
outside `allowed` or a malformed DATE is negative data the center must
refuse.

The checks read what the house envelope hides from the stock ones.
Business answers are HTTP 200 with the outcome in the envelope's `code`
(docs/http-api.md#envelope), so a stock check that reads only the HTTP status
sees a failure as a success. These read the envelope:

- envelope_not_a_server_error: an envelope whose `code` is 5xx is a server
  error behind HTTP 200 (`/readyz`'s documented 503 is a real status, seen by
  the stock not_a_server_error);
- envelope_code_is_the_http_status: an answer documented as `HttpError` (a
  real HTTP error status) carries that status as its `code`;
- envelope_rejects_negative_data, envelope_rejects_missing_required_header:
  data that breaks the document, or a request without its Authorization, is
  refused by a 4xx HTTP status or a 4xx envelope `code` (the stock
  negative_data_rejection and missing_required_header, with the envelope's
  code read as the status);
- envelope_auth_is_enforced: an operation that requires the bearer token,
  answered with success, is sent again without it and with a token whose
  signature is broken; both must be refused with 401 (a real status or the
  envelope's code). Once per operation (the stock ignored_auth, which reads
  only the HTTP status).
"""
import copy
import json

import requests
import schemathesis
from schemathesis.specs.openapi import checks as openapi_checks

HTTP_ERROR_REF = "#/components/responses/HttpError"


def _request_of(export_type, parameters):
    """A create or preview body naming `export_type`, with its parameters;
    a top-level null stands for an absent parameter (docs/http-api.md)."""
    nullable = {name: {"anyOf": [schema, {"type": "null"}]} for name, schema in parameters.items()}
    return {"type": "object", "required": ["exportType"],
            "properties": {"exportType": {"const": export_type},
                           "parameters": {"type": ["object", "null"],
                                          "additionalProperties": False,
                                          "properties": nullable}}}


# The two export types api_fuzz_test.py configures, as the registry checks them
# (docs/http-api.md#create-task): CUSTOMER_LIST on the provider route,
# ORDER_LIST on the sql-template route. Strings within
# limits.max-parameter-string-chars (256 by default); the byte and key limits
# of the whole object are left out (the center refusing a long list is not
# checked).
TEXT_CHARS = 256
EXPORT_TYPES = [
    _request_of("CUSTOMER_LIST", {
        "keyword": {"type": "string", "maxLength": TEXT_CHARS},
        "status": {"enum": ["ACTIVE", "INACTIVE", "FROZEN"]},
    }),
    _request_of("ORDER_LIST", {
        "status": {"enum": ["NEW", "PAID", "SHIPPED", "DONE", "REFUNDED"]},
        "channel": {"enum": ["WEB", "APP", "STORE"]},
        "dateFrom": {"type": "string", "format": "date"},
        "dateTo": {"type": "string", "format": "date"},
        "keyword": {"type": "string", "maxLength": TEXT_CHARS},
        "customerCodes": {"type": "array",
                          "items": {"type": "string", "maxLength": TEXT_CHARS}},
    }),
]


@schemathesis.hook
def before_load_schema(context, raw_schema):
    schemas = raw_schema["components"]["schemas"]
    for name in ("CreateTaskRequest", "PreviewRequest"):
        # The oneOf says which parameters each type takes.
        schemas[name]["properties"]["parameters"] = {"type": ["object", "null"]}
        schemas[name]["oneOf"] = EXPORT_TYPES


def _envelope(response):
    """The JSON envelope of `response`, or None for any other body."""
    if not response.headers.get("content-type", [""])[0].startswith("application/json"):
        return None
    try:
        body = json.loads(response.content)
    except ValueError:
        return None  # response_schema_conformance reports a body that is not JSON
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return body
    return None


def _documented(case, status):
    responses = case.operation.definition.raw.get("responses", {})
    return responses.get(str(status))


@schemathesis.check
def envelope_not_a_server_error(ctx, response, case):
    envelope = _envelope(response)
    if envelope is not None and envelope["code"].startswith("5") and response.status_code < 500:
        raise AssertionError(
            f"HTTP {response.status_code} carries a server error in its envelope: "
            f"code {envelope['code']}, message {envelope.get('message')!r}")
    return None


@schemathesis.check
def envelope_code_is_the_http_status(ctx, response, case):
    if _documented(case, response.status_code) != {"$ref": HTTP_ERROR_REF}:
        return None
    envelope = _envelope(response)
    if envelope is None or envelope["code"] != str(response.status_code):
        raise AssertionError(
            f"HTTP {response.status_code} is documented as HttpError (the envelope's code "
            f"equals the status), got {response.content[:200]!r}")
    return None


def _with_envelope_status(stock_check, ctx, response, case):
    """`stock_check` with an HTTP 200 envelope's `code` read as the status:
    the stock check's heuristics (a mutation that serializes back into valid
    data, and the like) stay. A real status goes to it as it is."""
    envelope = _envelope(response)
    if envelope is None or response.status_code != 200:
        return stock_check(ctx, response, case)
    if not envelope["code"].isdigit():
        return None  # the schema checks report it
    as_status = copy.copy(response)
    as_status.status_code = int(envelope["code"])
    return stock_check(ctx, as_status, case)


@schemathesis.check
def envelope_rejects_negative_data(ctx, response, case):
    return _with_envelope_status(openapi_checks.negative_data_rejection, ctx, response, case)


@schemathesis.check
def envelope_rejects_missing_required_header(ctx, response, case):
    return _with_envelope_status(openapi_checks.missing_required_header, ctx, response, case)


_AUTH_PROBED = set()  # operations whose auth was probed in this run


def _requires_bearer(case):
    security = case.operation.definition.raw.get("security")
    return bool(security) and all(requirement for requirement in security)


def _refused_as_unauthenticated(response):
    if response.status_code == 401:
        return True
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return response.status_code == 200 and isinstance(body, dict) and body.get("code") == "401"


@schemathesis.check
def envelope_auth_is_enforced(ctx, response, case):
    envelope = _envelope(response)
    succeeded = 200 <= response.status_code < 300 and (envelope is None
                                                       or envelope["code"] == "200")
    label = case.operation.label
    if not succeeded or not _requires_bearer(case) or label in _AUTH_PROBED:
        return None
    _AUTH_PROBED.add(label)
    sent = response.request
    token = sent.headers.get("Authorization", "")
    for name, authorization in (("no token", None), ("a forged token", token[:-2] + "xx")):
        probe = sent.copy()
        probe.headers.pop("Authorization", None)
        if authorization is not None:
            probe.headers["Authorization"] = authorization
        with requests.Session() as session:
            # stream: the event stream answers a refusal at once, never ends otherwise.
            answer = session.send(probe, timeout=10, allow_redirects=False, stream=True)
            try:
                answer._content = answer.raw.read(4096)
            finally:
                answer.close()
        if not _refused_as_unauthenticated(answer):
            raise AssertionError(
                f"{label} requires the bearer token, yet with {name} it answered "
                f"{answer.status_code} {answer._content[:200]!r}")
    return None
