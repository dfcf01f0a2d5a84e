"""The flow `cargo xtask client` drives with the client generated from docs/openapi.json.

Every call goes through the generated functions and models, and every answer must parse into
the model the document promises: a response the client cannot parse comes back as `parsed ==
None`, which fails here. DECKHAND_URL and DECKHAND_TOKEN (a PAT with every scope) come from
the xtask.
"""

import os
import sys
import uuid

from deckhand_client import AuthenticatedClient, Client
from deckhand_client.api.cards import resolve_cards
from deckhand_client.api.decks import (
    create_deck,
    deck_detail,
    deck_versions,
    export_text,
    list_decks,
    update_deck,
)
from deckhand_client.api.games import list_games
from deckhand_client.models import (
    CardIdentifierDto,
    CardLineDto,
    DeckBody,
    DeckPatchBody,
    DeckDetail,
    DeckPage,
    DeckWriteRecord,
    Error,
    ExportBody,
    ResolveBody,
    ResolveResponse,
    VisibilityName,
)

GAME = "mtg"


def expect(response, status, model, step):
    """The parsed body of `response`, which must be `status` and parse into `model`."""
    if response.status_code != status or not isinstance(response.parsed, model):
        sys.exit(
            f"client flow: {step}: expected {status} {model.__name__}, got "
            f"{int(response.status_code)} {type(response.parsed).__name__}: "
            f"{response.content[:500]!r}"
        )
    print(f"client flow: {step}: {status} {model.__name__}")
    return response.parsed


def main():
    base_url = os.environ["DECKHAND_URL"]
    anonymous = Client(base_url=base_url, raise_on_unexpected_status=True)
    client = AuthenticatedClient(
        base_url=base_url, token=os.environ["DECKHAND_TOKEN"], raise_on_unexpected_status=True
    )

    games = list_games.sync_detailed(client=anonymous)
    if games.status_code != 200 or not any(game.slug == GAME for game in games.parsed or []):
        sys.exit(f"client flow: list games: no {GAME} in {games.content[:300]!r}")

    page = expect(
        list_decks.sync_detailed(GAME, client=anonymous, include="summary"),
        200,
        DeckPage,
        "list decks",
    )
    if page.pagination.total < 1 or not page.data:
        sys.exit("client flow: list decks: the demo deck is missing")

    name = f"Client flow {uuid.uuid4().hex[:8]}"
    cards = [
        CardLineDto(section="mainboard", quantity=4, name="Dimir Spybug"),
        CardLineDto(section="mainboard", quantity=20, name="Island"),
    ]
    created = expect(
        create_deck.sync_detailed(
            GAME,
            client=client,
            body=DeckBody(name=name, visibility=[VisibilityName.PUBLIC], cards=cards),
            idempotency_key=str(uuid.uuid4()),
        ),
        201,
        DeckWriteRecord,
        "create a deck",
    )
    if created.version != 1 or created.name != name:
        sys.exit(f"client flow: create a deck: {created.to_dict()}")

    updated = expect(
        update_deck.sync_detailed(
            GAME, created.id, client=client, body=DeckPatchBody(notes="Sideboard against burn.")
        ),
        200,
        DeckWriteRecord,
        "patch the deck",
    )
    if updated.version != 2 or updated.notes != "Sideboard against burn.":
        sys.exit(f"client flow: patch the deck: {updated.to_dict()}")

    detail = expect(
        deck_detail.sync_detailed(GAME, created.id, client=client, expand="cards"),
        200,
        DeckDetail,
        "read the deck",
    )
    if detail.name != name or not detail.expanded_cards:
        sys.exit(f"client flow: read the deck: {detail.to_dict()}")

    versions = deck_versions.sync_detailed(GAME, created.id, client=client)
    if versions.status_code != 200 or not isinstance(versions.parsed, list):
        sys.exit(f"client flow: versions: {versions.content[:300]!r}")
    numbers = sorted(version.version_number for version in versions.parsed)
    if numbers != [1, 2]:
        sys.exit(f"client flow: versions: expected [1, 2], got {numbers}")
    print("client flow: versions: 200 [1, 2]")

    exported = export_text.sync_detailed(GAME, client=client, body=ExportBody(deck_id=created.id))
    if exported.status_code != 200 or not isinstance(exported.parsed, str):
        sys.exit(f"client flow: export: {exported.content[:300]!r}")
    if "4 Dimir Spybug" not in exported.parsed or "20 Island" not in exported.parsed:
        sys.exit(f"client flow: export: {exported.parsed!r}")
    print("client flow: export: 200 text")

    resolved = expect(
        resolve_cards.sync_detailed(
            GAME,
            client=anonymous,
            body=ResolveBody(
                identifiers=[
                    CardIdentifierDto(name="Dimir Spybug"),
                    CardIdentifierDto(name="No Such Card Anywhere"),
                ]
            ),
        ),
        200,
        ResolveResponse,
        "resolve cards",
    )
    if [r.card.name for r in resolved.resolved] != ["Dimir Spybug"] or len(resolved.unresolved) != 1:
        sys.exit(f"client flow: resolve cards: {resolved.to_dict()}")

    missing = deck_detail.sync_detailed(GAME, uuid.uuid4(), client=client)
    expect(missing, 404, Error, "an unknown deck")
    print("client flow: ok")


if __name__ == "__main__":
    main()
