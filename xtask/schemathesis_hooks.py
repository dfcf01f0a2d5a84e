"""Loaded by schemathesis before a `cargo xtask fuzz` run (SCHEMATHESIS_HOOKS).

Three things: a lock around `ast.parse` (below), the credentials of every lane (further
below), so that every operation is reached the way its callers reach it, and a loopback webhook
receiver that the stateful phase registers endpoints for (at the end).


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
import os
import random
import threading

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
_picks = random.Random(int(_env("DECKHAND_FUZZ_SEED", "0")))
_picks_lock = threading.Lock()


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
        case.headers.update(headers)
        if ("OAuthClientBasic",) in (tuple(sorted(r)) for r in requirements):
            _name_the_client(case, basic=bool(headers))


def _name_the_client(case, basic):
    """A request to the token, introspection or revocation endpoint presents its client once:
    the confidential client in HTTP Basic alone, the public one as `client_id` in the form
    (contract section 5). A generated `client_id` beside Basic names another client and is
    rightly refused with 401 `invalid_client`, and without Basic it names no client at all, so
    positive cases name the harness's clients as a real client would; negative cases keep what
    was generated."""
    if case.meta is None or case.meta.generation.mode != "positive" or not isinstance(case.body, dict):
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


@schemathesis.hook
def before_call(context, case, kwargs):
    if (
        _is_stateful(case)
        and case.meta.generation.mode == "positive"
        and case.method.upper() == "POST"
        and case.path == "/api/public/v1/webhooks"
        and isinstance(case.body, dict)
    ):
        case.body["url"] = RECEIVER_URL
