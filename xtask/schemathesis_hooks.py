"""Loaded by schemathesis before a `cargo xtask fuzz` run (SCHEMATHESIS_HOOKS).

Two things: a lock around `ast.parse` (below), and the credentials of every lane (further
below), so that every operation is reached the way its callers reach it.


CPython before 3.11.8 and 3.12.2 shares the AST recursion guard between threads
(python/cpython#106905): two threads in `ast.parse` at once can fail with "SystemError: AST
constructor recursion depth mismatch". Hypothesis parses source files to describe its
filters, so schemathesis's worker threads hit it now and then, a runtime error of the fuzzer
that says nothing of the API. One lock around `ast.parse` keeps the four workers and removes
that failure; it changes no generated request.
"""

import ast
import base64
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
        with _picks_lock:
            headers = _picks.choice(usable)
        if case.headers is None:
            case.headers = {}
        case.headers.update(headers)
