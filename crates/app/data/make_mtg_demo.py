#!/usr/bin/env python3
"""Rebuilds mtg-demo.jsonl, the catalog bundled with the in-memory store, from ../shared/data/mtg.

Run from the repository root: python3 crates/app/data/make_mtg_demo.py ../shared/data/mtg
It keeps the fields the importer reads (image_uris: `normal` only) so the file stays small.
"""
import gzip
import json
import sys

KEEP = ["object", "id", "oracle_id", "mtgo_id", "arena_id", "tcgplayer_id", "name", "lang",
        "released_at", "layout", "image_uris", "type_line", "colors", "card_faces", "legalities",
        "set", "set_type", "collector_number"]
FORMATS = ["standard", "pioneer", "modern", "legacy", "vintage", "pauper", "commander"]


def trim(card):
    out = {key: card[key] for key in KEEP if key in card}
    if "image_uris" in out:
        out["image_uris"] = {"normal": out["image_uris"].get("normal")}
    if "legalities" in out:
        out["legalities"] = {f: s for f, s in out["legalities"].items() if f in FORMATS}
    for face in out.get("card_faces", []):
        for key in ["mana_cost", "oracle_text", "flavor_text"]:
            face.pop(key, None)
        if "image_uris" in face:
            face["image_uris"] = {"normal": face["image_uris"].get("normal")}
    return out


def main(folder):
    sample = json.load(open(f"{folder}/sample-cards.json"))
    odd = [c for c in sample if c["layout"] != "normal"]
    basics = [c for c in sample if c["type_line"].startswith("Basic Land")]
    rest = [c for c in sample if c not in odd and c not in basics]
    # Every 4th other printing: all three sets, all colours, a playable spread.
    chosen = odd + basics + rest[::4]
    wanted = {
        ("10e", "1"), ("10e", "1★"), ("10e", "11★"), ("8ed", "S1"), ("8ed", "39"),
        ("eld", "115"), ("eld", "155"),
    }
    sample_oracles = {c["oracle_id"] for c in chosen}
    extra, translated, tokens = [], 0, 0
    with gzip.open(f"{folder}/default-cards-2019.jsonl.gz", "rt") as lines:
        for line in lines:
            card = json.loads(line)
            key = (card["set"], card["collector_number"])
            if key in wanted and card["lang"] == "en":
                extra.append(card)
            elif card["layout"] in ("transform", "flip") and card["set"] in ("isd", "chk") and len(
                    [c for c in extra if c["layout"] == card["layout"]]) < 2:
                extra.append(card)
            elif card["lang"] != "en" and card["oracle_id"] in sample_oracles and translated < 3:
                extra.append(card)
                translated += 1
            elif card["layout"] == "token" and tokens < 1:
                extra.append(card)
                tokens += 1
    with open("crates/app/data/mtg-demo.jsonl", "w") as out:
        for card in chosen + extra:
            out.write(json.dumps(trim(card), ensure_ascii=False, separators=(",", ":")) + "\n")


main(sys.argv[1])
