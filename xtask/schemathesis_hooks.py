"""Loaded by schemathesis before a `cargo xtask fuzz` run (SCHEMATHESIS_HOOKS).

CPython before 3.11.8 and 3.12.2 shares the AST recursion guard between threads
(python/cpython#106905): two threads in `ast.parse` at once can fail with "SystemError: AST
constructor recursion depth mismatch". Hypothesis parses source files to describe its
filters, so schemathesis's worker threads hit it now and then, a runtime error of the fuzzer
that says nothing of the API. One lock around `ast.parse` keeps the four workers and removes
that failure; it changes no generated request.
"""

import ast
import threading

_lock = threading.Lock()
_parse = ast.parse


def _parse_one_at_a_time(*args, **kwargs):
    with _lock:
        return _parse(*args, **kwargs)


ast.parse = _parse_one_at_a_time
