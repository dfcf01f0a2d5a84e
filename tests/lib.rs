//! Black-box HTTP tests of the whole service live in `e2e/`; this library is empty.
