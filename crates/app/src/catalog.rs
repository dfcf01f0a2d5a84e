//! Catalog files into the store: `deckhand admin catalog import` and the catalog bundled with
//! the in-memory store. Files are read on a blocking thread and streamed record by record
//! (gzip detected by its magic bytes, a JSON array or JSON Lines by the first character), and
//! stored in batches through `CatalogService::import_batches`, so memory stays flat whatever the
//! file's size. The rules for each record live in `deckhand_domain::catalog::source`. An
//! operator at a terminal sees a progress bar of the file's bytes on stderr; anything else
//! (a pipe, a log, CI) sees nothing but the JSON report on stdout.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal as _, Read};
use std::marker::PhantomData;
use std::path::Path;

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::catalog::source::{self, FabCard, GenericCard, RecordError, ScryfallCard};
use deckhand_domain::catalog::{CatalogEntry, Game};
use deckhand_domain::events::{Actor, EventId, Origin};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::de::{DeserializeOwned, SeqAccess, Visitor};
use serde::{Deserializer as _, Serialize};
use time::Date;
use time::macros::date;
use tokio::sync::mpsc;

/// Records per batch handed to the store (one multi-row upsert each in PostgreSQL).
pub const BATCH_SIZE: usize = 1000;

/// The catalog `cargo run` starts with: a few hundred printings of the sample data (see
/// `data/make_mtg_demo.py`), a tiny illustrative catalog of `lorcana`, and forty real `fab`
/// cards (`data/make_fab_demo.py`), each with the day its data was made (the 2019 snapshot's,
/// as `../shared/data/mtg/README.md` says it; the `fab` package's publication day).
const BUNDLED: [(&str, Source, Date, &[u8]); 3] = [
    (
        "mtg",
        Source::Scryfall,
        date!(2019 - 04 - 01),
        include_bytes!("../data/mtg-demo.jsonl"),
    ),
    (
        "lorcana",
        Source::Generic,
        date!(2026 - 01 - 01),
        include_bytes!("../data/lorcana-demo.jsonl"),
    ),
    (
        "fab",
        Source::FabCards,
        date!(2026 - 05 - 16),
        include_bytes!("../data/fab-demo.jsonl"),
    ),
];

/// The format of a catalog file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Source {
    /// Scryfall card objects (bulk data: a JSON array or JSON Lines).
    Scryfall,
    /// Deckhand's generic JSON Lines records (docs/catalog.md).
    Generic,
    /// `@flesh-and-blood/cards` card objects, one card with all its printings each (JSON Lines
    /// or a JSON array), for `fab`.
    FabCards,
}

/// What an import did, as `admin catalog import` prints it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ImportReport {
    pub game: String,
    /// Cards and printings of the game in the store after the import.
    pub cards: u64,
    pub printings: u64,
    /// Records read from the file, and how many of them were skipped (not deck cards). A
    /// `fab-cards` record is a card with all its printings.
    pub read: u64,
    pub skipped: u64,
}

/// The day a catalog file was made: `as_of` when given, else the day in a Scryfall bulk file's
/// name; neither is an error naming `--as-of`. Imports stamp the legalities they bring with
/// this day, never with the time they run, so that shipped, imported and operator records of
/// a card's history keep their true order.
pub fn file_day(path: &Path, as_of: Option<Date>) -> anyhow::Result<Date> {
    let named = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(source::scryfall_file_day);
    as_of.or(named).with_context(|| {
        format!(
            "{} does not say the day it was made: give it with --as-of YYYY-MM-DD (its \
             legalities are recorded as of that day)",
            path.display()
        )
    })
}

/// Imports the file at `path`, made on `as_of` (see [`file_day`]).
pub async fn import_file(
    services: &Services,
    game: &str,
    source: Source,
    path: &Path,
    as_of: Option<Date>,
) -> anyhow::Result<ImportReport> {
    let day = file_day(path, as_of)?;
    let game = services
        .catalog
        .game(game)
        .await
        .with_context(|| format!("unknown game {game:?}"))?;
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let length = file.metadata().map(|metadata| metadata.len()).ok();
    let progress = progress_bar(length, std::io::stderr().is_terminal());
    let report = import_reader(services, &game, source, day, progress.wrap_read(file))
        .await
        .with_context(|| format!("importing {}", path.display()));
    progress.finish_and_clear();
    report
}

/// The bytes of the file read so far, drawn on stderr only when it is a terminal.
fn progress_bar(length: Option<u64>, on_terminal: bool) -> ProgressBar {
    if !on_terminal {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "importing [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec}, {eta} left",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Imports the bundled catalogs (idempotent, like every import).
pub async fn load_bundled(services: &Services) -> anyhow::Result<()> {
    for (slug, source, day, bytes) in BUNDLED {
        let game = services
            .catalog
            .game(slug)
            .await
            .with_context(|| format!("the bundled catalog's game {slug:?} is not seeded"))?;
        import_reader(services, &game, source, day, bytes)
            .await
            .with_context(|| format!("loading the bundled {slug} catalog"))?;
    }
    Ok(())
}

/// Imports the records of `reader`, a file made on `day`.
pub async fn import_reader(
    services: &Services,
    game: &Game,
    source: Source,
    day: Date,
    reader: impl Read + Send + 'static,
) -> anyhow::Result<ImportReport> {
    // Two batches in flight at most: the parser waits while the store catches up.
    let (sender, mut batches) = mpsc::channel::<Vec<CatalogEntry>>(2);
    let parse_game = game.clone();
    let parser = tokio::task::spawn_blocking(move || {
        parse(reader, source, &parse_game, |batch| {
            sender
                .blocking_send(batch)
                .map_err(|_| anyhow::anyhow!("the import stopped"))
        })
    });
    // Legality changes the import brings are recorded from the day the file was made.
    let imported_at = day.midnight().assume_utc();
    let batches = futures_util::stream::poll_fn(|context| batches.poll_recv(context));
    // On an error the receiver is dropped, which stops the parser at its next batch.
    let stored = services
        .catalog
        .import_batches(game, batches, imported_at)
        .await;
    let parsed = parser.await.context("the catalog parser panicked")?;
    stored?;
    let (read, skipped) = parsed?;
    let counts = services.catalog.counts(game).await?;
    let origin = Origin {
        event_id: EventId(services.system.ids.new_id()),
        actor: Actor::operator(),
    };
    let finished_at = services.system.clock.now();
    services
        .catalog
        .finish_import(game, &origin, &counts, finished_at)
        .await?;
    Ok(ImportReport {
        game: game.slug.clone(),
        cards: counts.cards,
        printings: counts.printings,
        read,
        skipped,
    })
}

/// Reads every record of `reader`, hands them to `emit` in batches of [`BATCH_SIZE`], and
/// returns (records read, records skipped).
fn parse(
    reader: impl Read,
    source: Source,
    game: &Game,
    emit: impl FnMut(Vec<CatalogEntry>) -> anyhow::Result<()>,
) -> anyhow::Result<(u64, u64)> {
    let reader = decompressed(reader)?;
    match source {
        Source::Scryfall => read_records::<ScryfallCard>(
            reader,
            game,
            |game, card| {
                source::scryfall_entry(game, card).map(|entry| entry.into_iter().collect())
            },
            emit,
        ),
        Source::Generic => read_records::<GenericCard>(
            reader,
            game,
            |game, card| source::generic_entry(game, card).map(|entry| vec![entry]),
            emit,
        ),
        Source::FabCards => read_records::<FabCard>(reader, game, source::fab_entries, emit),
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// `reader`, gunzipped when it starts with the gzip magic bytes (whatever the file is called).
fn decompressed<'a>(reader: impl Read + 'a) -> anyhow::Result<Box<dyn BufRead + 'a>> {
    let mut buffered = BufReader::new(reader);
    let head = buffered.fill_buf().context("reading the catalog file")?;
    if head.starts_with(&GZIP_MAGIC) {
        // Multi-member, as `cat a.gz b.gz` or parallel gzip tools write them.
        let decoder = flate2::bufread::MultiGzDecoder::new(buffered);
        Ok(Box::new(BufReader::new(decoder)))
    } else {
        Ok(Box::new(buffered))
    }
}

/// Whether the first non-blank byte of `reader` opens a JSON array (else: JSON Lines).
fn is_json_array(reader: &mut dyn BufRead) -> anyhow::Result<bool> {
    loop {
        let buffer = reader.fill_buf().context("reading the catalog file")?;
        if buffer.is_empty() {
            return Ok(false);
        }
        match buffer.iter().position(|byte| !byte.is_ascii_whitespace()) {
            Some(at) => {
                let array = buffer[at] == b'[';
                reader.consume(at);
                return Ok(array);
            }
            None => {
                let all = buffer.len();
                reader.consume(all);
            }
        }
    }
}

/// One record as the entries it brings: none when it is skipped, several when a record is a
/// card with its printings (`fab`).
type Mapper<T> = fn(&Game, T) -> Result<Vec<CatalogEntry>, RecordError>;

fn read_records<T: DeserializeOwned>(
    mut reader: Box<dyn BufRead + '_>,
    game: &Game,
    map: Mapper<T>,
    mut emit: impl FnMut(Vec<CatalogEntry>) -> anyhow::Result<()>,
) -> anyhow::Result<(u64, u64)> {
    let array = is_json_array(&mut *reader)?;
    let mut batcher = Batcher {
        game,
        map,
        emit: &mut emit,
        batch: Vec::with_capacity(BATCH_SIZE),
        read: 0,
        skipped: 0,
    };
    if array {
        // Element by element: a visitor over the sequence never holds the whole array.
        let mut json = serde_json::Deserializer::from_reader(reader);
        json.deserialize_seq(EachElement {
            batcher: &mut batcher,
            marker: PhantomData,
        })
        .context("reading the JSON array")?;
        json.end().context("after the JSON array")?;
    } else {
        each_value(&mut *reader, |record| batcher.push(record))?;
    }
    batcher.flush()?;
    Ok((batcher.read, batcher.skipped))
}

/// How much of a JSON Lines file is read at a time: the whole of any record, however long,
/// is kept until it is parsed.
const CHUNK: usize = 256 * 1024;

/// Hands each JSON value of `reader` (JSON Lines, or values one after another however they are
/// laid out) to `each`, in order; an error names the record it is in (counted from 1). The
/// values are parsed from a slice of a buffer refilled a chunk at a time (serde_json reads a
/// slice several times faster than an `io::Read`, which it takes byte by byte), so memory
/// holds a chunk and the record that straddles it, whatever the file's size.
fn each_value<T: DeserializeOwned>(
    reader: &mut dyn BufRead,
    mut each: impl FnMut(T) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut handed: u64 = 0;
    let mut buffer: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut at_end = false;
    loop {
        let mut values = serde_json::Deserializer::from_slice(&buffer).into_iter::<T>();
        for value in values.by_ref() {
            match value {
                Ok(value) => {
                    handed += 1;
                    each(value)?;
                }
                // The record goes on in the next chunk.
                Err(error) if error.is_eof() && !at_end => break,
                Err(error) => {
                    return Err(error).with_context(|| format!("reading record {}", handed + 1));
                }
            }
        }
        let parsed = values.byte_offset();
        if at_end {
            return Ok(());
        }
        buffer.drain(..parsed);
        // At least one read: what is left may be a record longer than a chunk.
        let wanted = buffer.len() + CHUNK;
        while buffer.len() < wanted && !at_end {
            let chunk = reader.fill_buf().context("reading the catalog file")?;
            at_end = chunk.is_empty();
            buffer.extend_from_slice(chunk);
            let length = chunk.len();
            reader.consume(length);
        }
    }
}

struct Batcher<'a, T, E> {
    game: &'a Game,
    map: Mapper<T>,
    emit: &'a mut E,
    batch: Vec<CatalogEntry>,
    read: u64,
    skipped: u64,
}

impl<T, E: FnMut(Vec<CatalogEntry>) -> anyhow::Result<()>> Batcher<'_, T, E> {
    fn push(&mut self, record: T) -> anyhow::Result<()> {
        self.read += 1;
        let entries = (self.map)(self.game, record)
            .with_context(|| format!("record {} is invalid", self.read))?;
        if entries.is_empty() {
            self.skipped += 1;
        }
        for entry in entries {
            self.batch.push(entry);
            if self.batch.len() >= BATCH_SIZE {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_SIZE));
        (self.emit)(full)
    }
}

struct EachElement<'a, 'b, T, E> {
    batcher: &'a mut Batcher<'b, T, E>,
    marker: PhantomData<T>,
}

impl<'de, T, E> Visitor<'de> for EachElement<'_, '_, T, E>
where
    T: DeserializeOwned,
    E: FnMut(Vec<CatalogEntry>) -> anyhow::Result<()>,
{
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("an array of card objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(record) = seq.next_element::<T>()? {
            self.batcher
                .push(record)
                .map_err(|error| serde::de::Error::custom(format!("{error:#}")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn mtg() -> Game {
        Game {
            slug: "mtg".into(),
            name: "Magic".into(),
            sections: Vec::new(),
            colors: ["W", "U", "B", "R", "G"].map(String::from).to_vec(),
        }
    }

    fn parse_all(bytes: Vec<u8>) -> (Vec<CatalogEntry>, u64, u64) {
        let mut all = Vec::new();
        let (read, skipped) = parse(bytes.as_slice(), Source::Scryfall, &mtg(), |batch| {
            all.extend(batch);
            Ok(())
        })
        .unwrap();
        (all, read, skipped)
    }

    const CARD: &str = r#"{"id":"07a3d9e8-8597-498b-869c-cff79e0df516","oracle_id":"060209fa-4b7d-4e08-bf8b-8759bba5641b","name":"Karn, Scion of Urza","set":"dom","collector_number":"1","colors":[],"layout":"normal","extra":{"ignored":true}}"#;
    const TOKEN: &str = r#"{"id":"17a3d9e8-8597-498b-869c-cff79e0df516","oracle_id":"160209fa-4b7d-4e08-bf8b-8759bba5641b","name":"Goblin","set":"tdom","collector_number":"T1","layout":"token"}"#;

    fn gzipped(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// Files near the real ones: known records cut, spliced and repeated, as lines or an
    /// array, gzipped or not, besides arbitrary bytes (a gzip header among them).
    fn catalog_files() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let record = prop_oneof![
            Just(CARD.to_owned()),
            Just(TOKEN.to_owned()),
            (0..CARD.len()).prop_map(|cut| CARD[..cut].to_owned()),
            "\\PC{0,40}",
        ];
        let text = (proptest::collection::vec(record, 0..6), any::<bool>()).prop_map(
            |(records, array)| {
                if array {
                    format!("[{}]", records.join(","))
                } else {
                    records.join("\n")
                }
            },
        );
        prop_oneof![
            3 => text.clone().prop_map(String::into_bytes),
            1 => text.prop_map(|text| gzipped(text.as_bytes())),
            1 => any::<Vec<u8>>(),
            1 => any::<Vec<u8>>().prop_map(|tail| [GZIP_MAGIC.as_slice(), &tail].concat()),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Whatever the file holds, the import reads it or stops with an error; never a panic.
        #[test]
        fn any_file_is_read_or_refused(bytes in catalog_files()) {
            for source in [Source::Scryfall, Source::Generic] {
                let mut emitted = 0;
                let outcome = parse(bytes.as_slice(), source, &mtg(), |batch| {
                    emitted += batch.len();
                    Ok(())
                });
                if let Ok((read, skipped)) = outcome {
                    proptest::prop_assert_eq!(read - skipped, u64::try_from(emitted).unwrap());
                }
            }
        }
    }

    #[test]
    fn json_lines_arrays_and_gzip_read_the_same() {
        let lines = format!("{CARD}\n{TOKEN}\n");
        let array = format!(" \n[{CARD},\n{TOKEN}]\n");
        let gzipped = gzipped(array.as_bytes());
        for bytes in [lines.into_bytes(), array.into_bytes(), gzipped] {
            let (entries, read, skipped) = parse_all(bytes);
            assert_eq!((read, skipped), (2, 1));
            assert_eq!(entries.len(), 1);
            assert_eq!(entries[0].printing.name, "Karn, Scion of Urza");
        }
    }

    #[test]
    fn the_progress_bar_is_drawn_only_on_a_terminal() {
        assert!(progress_bar(Some(10), false).is_hidden());
        let bar = progress_bar(Some(10), true);
        let mut read = Vec::new();
        bar.wrap_read(&b"0123456789"[..])
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!((bar.position(), bar.length()), (10, Some(10)));
    }

    #[test]
    fn batches_are_bounded() {
        let many: String = (0..2500)
            .map(|n| {
                CARD.replace(
                    "07a3d9e8-8597-498b-869c-",
                    &format!("{n:08x}-8597-498b-869c-"),
                ) + "\n"
            })
            .collect();
        let mut sizes = Vec::new();
        parse(many.as_bytes(), Source::Scryfall, &mtg(), |batch| {
            sizes.push(batch.len());
            Ok(())
        })
        .unwrap();
        assert_eq!(sizes, [1000, 1000, 500]);
    }

    /// Records longer than a chunk, and records cut anywhere by a chunk's end, read whole.
    #[test]
    fn records_are_read_whole_across_chunks() {
        let long_name = "K".repeat(3 * CHUNK);
        let long = CARD.replace("Karn, Scion of Urza", &long_name);
        let many = (0..3 * CHUNK / CARD.len())
            .map(|_| CARD)
            .collect::<Vec<_>>()
            .join("\n");
        let file = format!("{many}\n{long}\n{TOKEN}\n");
        let (entries, read, skipped) = parse_all(file.clone().into_bytes());
        assert_eq!(read, u64::try_from(3 * CHUNK / CARD.len()).unwrap() + 2);
        assert_eq!(skipped, 1);
        assert_eq!(entries.last().unwrap().printing.name, long_name);
        let (gzipped_entries, _, _) = parse_all(gzipped(file.as_bytes()));
        assert_eq!(gzipped_entries.len(), entries.len());
    }

    #[test]
    fn a_broken_record_names_its_position() {
        let error = parse(
            format!("{CARD}\n{{\"id\": 1}}\n").as_bytes(),
            Source::Scryfall,
            &mtg(),
            |_| Ok(()),
        )
        .unwrap_err();
        assert!(format!("{error:#}").contains("record 2"), "{error:#}");
    }

    /// A file cut inside its last record is refused, not read as ending one record early.
    #[test]
    fn a_file_cut_inside_a_record_names_it() {
        let cut = &CARD[..CARD.len() / 2];
        for (file, cut_record) in [
            (format!("{CARD}\n{cut}"), "record 2"),
            (format!("{CARD}\n{CARD}\n{cut}\n"), "record 3"),
        ] {
            let error = parse(file.as_bytes(), Source::Scryfall, &mtg(), |_| Ok(())).unwrap_err();
            assert!(format!("{error:#}").contains(cut_record), "{error:#}");
        }
    }

    /// A `fab-cards` record is a card with every printing: one entry each, batched alike.
    #[test]
    fn fab_cards_bring_an_entry_per_printing() {
        let game = Game {
            slug: "fab".into(),
            name: "Flesh and Blood".into(),
            sections: Vec::new(),
            colors: ["red", "yellow", "blue"].map(String::from).to_vec(),
        };
        let bytes = include_bytes!("../data/fab-demo.jsonl");
        let mut entries = Vec::new();
        let (read, skipped) = parse(
            gzipped(bytes).as_slice(),
            Source::FabCards,
            &game,
            |batch| {
                entries.extend(batch);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((read, skipped), (40, 0));
        assert!(entries.len() > 100, "{}", entries.len());
        let cards: std::collections::BTreeSet<_> =
            entries.iter().map(|e| e.printing.card_id).collect();
        assert_eq!(cards.len(), 40);
        let variants: std::collections::BTreeSet<_> =
            entries.iter().map(|e| e.printing.variant_id).collect();
        assert_eq!(variants.len(), entries.len(), "printing ids are unique");
        let red = entries
            .iter()
            .find(|e| e.printing.name == "Sink Below (red)")
            .unwrap();
        assert_eq!(red.printing.colors, ["red"]);
        assert_eq!(red.front_face_name(), "Sink Below");
    }

    #[test]
    fn the_bundled_catalogs_parse() {
        for (_, source, _, bytes) in BUNDLED {
            let mut game = mtg();
            if source == Source::FabCards {
                game.colors = ["red", "yellow", "blue"].map(String::from).to_vec();
            }
            if source == Source::Generic {
                game.colors = ["Amber", "Amethyst", "Emerald", "Ruby", "Sapphire", "Steel"]
                    .map(String::from)
                    .to_vec();
            }
            parse(bytes, source, &game, |_| Ok(())).unwrap();
        }
    }
}
