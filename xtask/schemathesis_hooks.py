"""Loaded by schemathesis before a `cargo xtask fuzz` run (SCHEMATHESIS_HOOKS).

Five things: a lock around `ast.parse` (below), the credentials of every lane (further
below), so that every operation is reached the way its callers reach it, the ids of the
fixtures `cargo xtask fuzz` made (`xtask/src/fixtures.rs`) in a share of the requests, a
loopback webhook receiver that the stateful phase registers endpoints for, and a record of
every answer (at the end).


CPython before 3.11.8 and 3.12.2 shares the AST recursion guard between threads
(python/cpython#106905): two threads in `ast.parse` at once can fail with "SystemError: AST
constructor recursion depth mismatch". Hypothesis parses source files to describe its
filters, so schemathesis's worker threads hit it now and then, a runtime error of the fuzzer
that says nothing of the API. One lock around `ast.parse` keeps the four workers and removes
that failure; it changes no generated request.
"""

import ast
import base64
import http.server
import json
import os
import random
import threading
import uuid

import schemathesis

_lock = threading.Lock()
_parse = ast.parse


def _parse_one_at_a_time(*args, **kwargs):
    with _lock:
        return _parse(*args, **kwargs)


ast.parse = _parse_one_at_a_time


# Every lane `cargo xtask fuzz` made real credentials for (xtask/src/lanes.rs), by the name of
# the OpenAPI security requirement it satisfies. Each request goes on one lane its operation
# accepts, picked at random (anonymous too, where `{}` is allowed): every lane is fuzzed, and an
# operation open to several is reached through each. Two requirements are left out: a DPoP
# proof and a partner signature are made per request over its method, URL and (for the
# signature) exact body bytes, which schemathesis serializes only after this hook; the
# end-to-end tests drive both lanes with real proofs and signatures.
_env = os.environ.get
_basic = base64.b64encode(
    f"{_env('DECKHAND_FUZZ_CLIENT_ID', '')}:{_env('DECKHAND_FUZZ_CLIENT_SECRET', '')}".encode()
).decode()
LANES = {
    (): {},
    ("PersonalAccessToken",): {"Authorization": f"Bearer {_env('DECKHAND_FUZZ_PAT', '')}"},
    ("OAuth2",): {"Authorization": f"Bearer {_env('DECKHAND_FUZZ_ACCESS_TOKEN', '')}"},
    ("ApiKey",): {"X-Api-Key": _env("DECKHAND_FUZZ_API_KEY", "")},
    ("OAuthClientBasic",): {"Authorization": f"Basic {_basic}"},
}
# Every header that carries a credential, of any lane (the document's security schemes).
CREDENTIAL_HEADERS = {"authorization", "x-api-key", "x-partner-id", "x-signature", "dpop"}
_picks = random.Random(int(_env("DECKHAND_FUZZ_SEED", "0")))
_picks_lock = threading.Lock()


# Operation ("METHOD /path") -> the ids its requests may use: {"path": {...}, "body": {...}}
# (xtask/src/fixtures.rs). Outside the stateful phase, which uses what its own steps made, this
# share of the positive cases of an operation with a fixture goes to the fixture: its path
# parameters, and the body fields that name a resource where the generated body has them. The
# rest keep their generated ids, so the paths to a 404 are fuzzed as well.
FIXTURE_SHARE = 0.5
_fixtures_file = _env("DECKHAND_FUZZ_FIXTURES")
FIXTURES = json.load(open(_fixtures_file)) if _fixtures_file else {}


def _operation(case):
    return f"{case.method.upper()} {case.path}"


def _uses_fixture(case, fixture):
    """Whether the case's ids are its operation's fixture's."""
    path = fixture.get("path", {})
    body = fixture.get("body", {})
    return all(case.path_parameters.get(name) == value for name, value in path.items()) and (
        not body
        or (isinstance(case.body, dict) and any(case.body.get(name) == value for name, value in body.items()))
    )


# Every id of a fixture, and the operations that write (reshape or delete) what they are given.
# Schemathesis also reuses ids it has seen in responses (a list of endpoints names them all),
# so a generated DELETE or PATCH may name another operation's fixture; it gets its own
# instead, so that no operation's fixture is deleted or reshaped by another's request.
_FIXTURE_IDS = {
    value for fixture in FIXTURES.values() for name, value in fixture.get("path", {}).items() if name != "game"
}
WRITES = {"DELETE", "PATCH"}


def _names_another_fixture(case, fixture):
    own = set(fixture.get("path", {}).values())
    return any(value in _FIXTURE_IDS and value not in own for value in case.path_parameters.values())


def _put_fixture(case, fixture):
    case.path_parameters.update(fixture.get("path", {}))
    if isinstance(case.body, dict):
        for name, value in fixture.get("body", {}).items():
            if name in case.body:
                case.body[name] = value


@schemathesis.auth(refresh_interval=None, retry_on=[])
class EveryLane:
    def get(self, case, context):
        return LANES

    def set(self, case, lanes, context):
        requirements = case.operation.definition.raw.get("security", [])
        usable = [
            lanes[key]
            for key in (tuple(sorted(requirement)) for requirement in requirements)
            if key in lanes
        ]
        if not usable:
            return
        fixture = FIXTURES.get(_operation(case))
        with _picks_lock:
            share = _picks.random() < FIXTURE_SHARE
        if not (
            fixture is not None
            and _is_positive(case)
            and (share or (case.method.upper() in WRITES and _names_another_fixture(case, fixture)))
        ):
            fixture = None
        if fixture is not None and not _is_stateful(case):
            # The fixtures are the user's (webhook endpoints the partner's, whose API key acts
            # for the user too): any lane with a credential owns them.
            _put_fixture(case, fixture)
            usable = [lane for lane in usable if lane] or usable
        # A stateful sequence uses what its first step made: a deck or guide is the user's and
        # private by default, a webhook endpoint the partner's. So its steps go on the lanes of
        # the user (or, where no user lane is accepted, of the partner), never anonymous: on
        # another lane the next step would only ever meet a 404.
        if _is_stateful(case):
            owners = [lane for lane in usable if lane] or usable
            usable = [lane for lane in owners if lane is not LANES[("ApiKey",)]] or owners
        with _picks_lock:
            headers = _picks.choice(usable)
        if case.headers is None:
            case.headers = {}
        if _is_positive(case):
            # A generated credential (an `X-Partner-Id`, a `DPoP` proof, ...) beside the lane's
            # makes another lane or none, and is rightly refused with a 401: positive cases
            # carry the lane's credentials alone; negative cases keep what was generated.
            for name in [name for name in case.headers if name.lower() in CREDENTIAL_HEADERS]:
                del case.headers[name]
            _unique_idempotency_key(case)
        case.headers.update(headers)
        if ("OAuthClientBasic",) in (tuple(sorted(r)) for r in requirements):
            _name_the_client(case, basic=bool(headers))


def _unique_idempotency_key(case):
    """An `Idempotency-Key` is unique per intended operation (contract, docs/api.md): a
    generated key is short and soon repeats, and a repeat with another body is rightly a 422.
    So a positive case's generated key gets a UUID after it, as a client makes a key per
    operation; negative cases keep what was generated."""
    for name in [name for name in case.headers if name.lower() == "idempotency-key"]:
        key = case.headers[name]
        if isinstance(key, str):
            case.headers[name] = f"{key[:218]}-{uuid.uuid4()}"


def _name_the_client(case, basic):
    """A request to the token, introspection or revocation endpoint presents its client once:
    the confidential client in HTTP Basic alone, the public one as `client_id` in the form
    (contract section 5). A generated `client_id` beside Basic names another client and is
    rightly refused with 401 `invalid_client`, and without Basic it names no client at all, so
    positive cases name the harness's clients as a real client would; negative cases keep what
    was generated."""
    if not _is_positive(case) or not isinstance(case.body, dict):
        return
    if basic:
        case.body.pop("client_id", None)
    else:
        case.body["client_id"] = _env("DECKHAND_FUZZ_PUBLIC_CLIENT_ID", "")


# A webhook endpoint is created only for a URL the server may deliver to, and no generated URL
# is one (the server runs with DECKHAND_WEBHOOK_ALLOW_PRIVATE=true, but a generated string is
# rarely even an http URL). The stateful phase is where a created endpoint is used, through the
# links to every operation on it (ping, deliveries, retry, secret, PATCH, DELETE), so there the
# URL of a positive create is this receiver's, which answers every delivery 204. The other
# phases keep their generated URLs, which fuzz the URL check; they would also use up the 16
# endpoints a partner may have before the stateful phase began.
class _Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


_receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
threading.Thread(target=_receiver.serve_forever, daemon=True).start()
RECEIVER_URL = f"http://127.0.0.1:{_receiver.server_port}/deckhand-fuzz"


def _is_stateful(case):
    return case.meta is not None and case.meta.phase.name == "stateful"


def _is_positive(case):
    return case.meta is not None and case.meta.generation.mode == "positive"


@schemathesis.hook
def before_call(context, case, kwargs):
    if (
        _is_stateful(case)
        and _is_positive(case)
        and case.method.upper() == "POST"
        and case.path == "/api/public/v1/webhooks"
        and isinstance(case.body, dict)
    ):
        case.body["url"] = RECEIVER_URL


# Every answer, one JSON line each, so that an operation that never answered a 2xx can be told
# why (`cargo xtask fuzz` sums them by operation, status and error code): the phase, the
# generation mode, whether the request used the operation's fixture, and the status with the
# envelope's `error`, `details.reason`, first field code and message (and, on a 401, the names
# of the headers sent).
_answers_file = _env("DECKHAND_FUZZ_ANSWERS")
_answers_lock = threading.Lock()


@schemathesis.hook
def after_call(context, case, response):
    if not _answers_file:
        return
    fixture = FIXTURES.get(_operation(case))
    answer = {
        "operation": _operation(case),
        "phase": case.meta.phase.name if case.meta else None,
        "mode": str(case.meta.generation.mode) if case.meta else None,
        "fixture": fixture is not None and _uses_fixture(case, fixture),
        "status": response.status_code,
    }
    if response.status_code >= 400:
        try:
            envelope = json.loads(response.content)
        except ValueError:
            envelope = None
        if isinstance(envelope, dict):
            details = envelope.get("details") if isinstance(envelope.get("details"), dict) else {}
            fields = details.get("fields") if isinstance(details.get("fields"), list) else []
            first = fields[0] if fields and isinstance(fields[0], dict) else {}
            answer["error"] = envelope.get("error")
            answer["reason"] = details.get("reason")
            answer["field"] = f"{first.get('field')}: {first.get('code')}" if first else None
            answer["message"] = envelope.get("message")
        if response.status_code == 401:
            # Which credentials went with it (names, never values).
            answer["headers"] = sorted(response.request.headers.keys())
    with _answers_lock, open(_answers_file, "a") as answers:
        answers.write(json.dumps(answer) + "\n")
