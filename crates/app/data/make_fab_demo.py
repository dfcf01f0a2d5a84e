#!/usr/bin/env python3
"""Rebuilds fab-demo.jsonl, the `fab` catalog bundled with the in-memory store and read by the
tests, from ../shared/data/fab: the named cards' lines of the real file, unchanged.

Run from the repository root: python3 crates/app/data/make_fab_demo.py ../shared/data/fab
The cards: everything a Warrior deck of Dorinthea Ironsong plays from Welcome to Rathe (a legal
Classic Constructed deck; see crates/app/src/demo.rs), her young self for Blitz, the three
`Sink Below`, a card banned in Classic Constructed, a card of another class, and a hero legal in
Blitz only.
"""
import gzip
import sys

CARDS = [
    "dorinthea-ironsong", "dorinthea", "arakni", "dawnblade", "braveforge-bracers",
    "refraction-bolters", "biting-blade-red", "biting-blade-yellow", "biting-blade-blue",
    "driving-blade-red", "driving-blade-yellow", "driving-blade-blue",
    "glint-the-quicksilver-blue", "ironsong-determination-yellow", "ironsong-response-red",
    "ironsong-response-yellow", "ironsong-response-blue", "overpower-red", "overpower-yellow",
    "overpower-blue", "rout-red", "sharpen-steel-red", "sharpen-steel-yellow",
    "sharpen-steel-blue", "singing-steelblade-yellow", "steelblade-shunt-red",
    "steelblade-shunt-yellow", "steelblade-shunt-blue", "steelblade-supremacy-red",
    "stroke-of-foresight-red", "stroke-of-foresight-yellow", "stroke-of-foresight-blue",
    "warriors-valor-red", "warriors-valor-yellow", "warriors-valor-blue", "sink-below-red",
    "sink-below-yellow", "sink-below-blue", "art-of-war-yellow", "alpha-rampage-red",
]

wanted = set(CARDS)
with gzip.open(f"{sys.argv[1]}/fab-cards-3.8.6.jsonl.gz", "rt", encoding="utf-8") as source, \
        open("crates/app/data/fab-demo.jsonl", "w", encoding="utf-8") as out:
    for line in source:
        identifier = line.split('"cardIdentifier":"', 1)[1].split('"', 1)[0]
        if identifier in wanted:
            out.write(line)
            wanted.discard(identifier)
if wanted:
    sys.exit(f"not in the file: {sorted(wanted)}")
