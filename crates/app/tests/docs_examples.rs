//! The docs' `curl` examples, run as a reader would paste them (contract part 7, "The first
//! hour"): every ```` ```sh ```` block of `README.md` and `docs/*.md` that runs `curl` goes
//! through `bash` against a real `deckhand serve` on the in-memory store with its demo seed,
//! and each command must answer the status (and the top-level JSON keys) the doc shows.
//!
//! The convention is written down in `docs/api.md`, "Examples are tests": a block that needs
//! something else (PostgreSQL, a browser, a receiver) is preceded by `<!-- needs: ... -->` and
//! left out; placeholders are filled from what the demo prints at start.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BINARY: &str = env!("CARGO_BIN_EXE_deckhand");
/// The address the docs write; replaced by the test server's.
const DOC_BASE: &str = "http://127.0.0.1:8080";
const MARKER: &str = "<!-- needs:";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// `README.md`, then `docs/api.md` (whose walkthrough later pages build on), then the other
/// pages in name order.
fn doc_files() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .filter(|path| !path.ends_with("api.md"))
        .collect();
    docs.sort();
    let mut files = vec![root.join("README.md"), root.join("docs/api.md")];
    files.extend(docs);
    files
}

/// A fenced block of a Markdown file.
struct Block {
    file: String,
    /// 1-based line of the opening fence.
    line: usize,
    lang: String,
    lines: Vec<String>,
    /// The reason of a `<!-- needs: ... -->` marker right before it.
    needs: Option<String>,
    /// A ```` ```json ```` block shown right after it (the answer of its last command).
    json_after: Option<String>,
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path
        .strip_prefix(workspace_root())
        .unwrap()
        .display()
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut found: Vec<Block> = Vec::new();
    // Lines of prose since the last block closed, to tie a json block to the one before it.
    let mut prose_since_block: Option<usize> = None;
    let mut index = 0;
    while index < lines.len() {
        let trimmed = lines[index].trim_start();
        if let Some(lang) = trimmed.strip_prefix("```") {
            let start = index;
            let mut body = Vec::new();
            index += 1;
            while index < lines.len() && !lines[index].trim_start().starts_with("```") {
                body.push(lines[index].to_owned());
                index += 1;
            }
            let needs = lines[..start]
                .iter()
                .rev()
                .find(|line| !line.trim().is_empty())
                .and_then(|line| line.trim().strip_prefix(MARKER))
                .map(|rest| rest.trim_end_matches("-->").trim().to_owned());
            let lang = lang.trim().to_owned();
            if lang == "json"
                && prose_since_block.is_some_and(|count| count <= 3)
                && let Some(previous) = found.last_mut()
                && previous.json_after.is_none()
            {
                previous.json_after = Some(body.join("\n"));
            }
            found.push(Block {
                file: file.clone(),
                line: start + 1,
                lang,
                lines: body,
                needs,
                json_after: None,
            });
            prose_since_block = Some(0);
        } else if trimmed.starts_with('#') {
            prose_since_block = None;
        } else if !trimmed.is_empty() {
            prose_since_block = prose_since_block.map(|count| count + 1);
        }
        index += 1;
    }
    found
}

/// One command of a block (continuation and quoted lines joined) and what the doc shows for it.
#[derive(Debug)]
struct Statement {
    line: usize,
    text: String,
    /// The comment on its last line and the comment lines right after it.
    comment: String,
}

/// Where a `#` comment starts on `line`, given the quote state carried from earlier lines.
fn scan(line: &str, single: &mut bool, double: &mut bool) -> Option<usize> {
    let mut previous = ' ';
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if *single {
            if c == '\'' {
                *single = false;
            }
        } else if c == '\\' {
            escaped = true;
        } else if *double {
            if c == '"' {
                *double = false;
            }
        } else if c == '\'' {
            *single = true;
        } else if c == '"' {
            *double = true;
        } else if c == '#' && previous.is_whitespace() {
            return Some(at);
        }
        previous = c;
    }
    None
}

fn statements(block: &Block) -> Vec<Statement> {
    let mut out: Vec<Statement> = Vec::new();
    let mut current: Option<Statement> = None;
    let (mut single, mut double) = (false, false);
    // Whether comment lines may still belong to the statement before them.
    let mut attached = false;
    for (offset, raw) in block.lines.iter().enumerate() {
        let continuing = current.is_some();
        if !continuing {
            let trimmed = raw.trim();
            if trimmed.is_empty() {
                attached = false;
                continue;
            }
            if let Some(comment) = trimmed.strip_prefix('#') {
                if attached && let Some(last) = out.last_mut() {
                    last.comment.push(' ');
                    last.comment.push_str(comment.trim());
                }
                continue;
            }
        }
        let (code, comment) = match scan(raw, &mut single, &mut double) {
            Some(at) => (&raw[..at], raw[at + 1..].trim()),
            None => (raw.as_str(), ""),
        };
        let statement = current.get_or_insert_with(|| Statement {
            line: block.line + 1 + offset,
            text: String::new(),
            comment: String::new(),
        });
        statement.text.push_str(code.trim_end());
        statement.text.push('\n');
        if !comment.is_empty() {
            statement.comment = comment.to_owned();
        }
        if !(single || double || code.trim_end().ends_with('\\')) {
            out.push(current.take().unwrap());
            attached = true;
        }
    }
    assert!(
        current.is_none(),
        "{}:{}: an unterminated quote",
        block.file,
        block.line
    );
    out
}

fn runs_curl(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || "|;&$(".contains(c))
        .any(|word| word == "curl")
}

/// What a doc comment shows: a leading status, and JSON (possibly abridged with `...`).
fn expectation(comment: &str) -> (Option<u16>, Option<&str>) {
    let comment = comment.trim();
    let digits: String = comment.chars().take_while(char::is_ascii_digit).collect();
    let (status, rest) = if digits.len() == 3 {
        (
            digits.parse().ok(),
            comment[3..].trim_start_matches([',', ';', ':', ' ']),
        )
    } else {
        (None, comment)
    };
    let shape = (rest.starts_with('{') || rest.starts_with('[')).then_some(rest);
    (status, shape)
}

/// The keys of the top-level object of abridged JSON (of its first element, for an array),
/// and whether it is an array.
fn shown_keys(text: &str) -> (bool, Vec<String>) {
    let array = text.trim_start().starts_with('[');
    let object_depth = if array { 2 } else { 1 };
    let mut keys = Vec::new();
    let mut depth = 0;
    let mut objects_seen = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '[' => {
                depth += 1;
                if c == '{' && depth == object_depth {
                    objects_seen += 1;
                }
            }
            '}' | ']' => depth -= 1,
            '"' => {
                let mut string = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        c => string.push(c),
                    }
                }
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                if depth == object_depth && objects_seen == 1 && chars.peek() == Some(&':') {
                    keys.push(string);
                }
            }
            _ => {}
        }
    }
    (array, keys)
}

fn check_shape(shown: &str, body: &str) -> Result<(), String> {
    let actual: Value = serde_json::from_str(body.trim())
        .map_err(|error| format!("the doc shows JSON but the answer is not JSON ({error})"))?;
    let (array, keys) = shown_keys(shown);
    let object = if array {
        let items = actual.as_array().ok_or("the doc shows an array")?;
        match items.first() {
            Some(first) => first,
            None if keys.is_empty() => return Ok(()),
            None => return Err("the doc shows items; the answer is an empty array".into()),
        }
    } else {
        &actual
    };
    let object = object.as_object().ok_or("the doc shows an object")?;
    let missing: Vec<&String> = keys
        .iter()
        .filter(|key| !object.contains_key(*key))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("the answer lacks the keys {missing:?}"))
    }
}

/// A `deckhand serve` on the in-memory store, killed on drop.
struct Demo {
    child: Child,
    address: SocketAddr,
    /// The values the banner prints, by the names the docs use for them.
    values: BTreeMap<&'static str, String>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_demo(log: &Path) -> Demo {
    let address = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut child = Command::new(BINARY)
        .arg("serve")
        .env_remove("DATABASE_URL")
        .env_remove("DECKHAND_PUBLIC_URL")
        .env("DECKHAND_BIND", address.to_string())
        .env("DECKHAND_WORKERS", "2")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start deckhand serve");
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut banner = Vec::new();
    let mut lines = stdout.lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let last = line.contains("deckhand admin sign");
        banner.push(line);
        if last {
            break;
        }
    }
    // The server prints nothing more on stdout; keep the pipe drained anyway.
    std::thread::spawn(move || lines.for_each(drop));
    let field = |label: &str| -> String {
        banner
            .iter()
            .find_map(|line| line.trim().strip_prefix(label))
            .unwrap_or_else(|| {
                panic!(
                    "the banner has no {label:?}: {banner:?}; log: {}",
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            })
            .trim()
            .to_owned()
    };
    let word = |text: &str, after: &str| -> String {
        let at = text.find(after).unwrap() + after.len();
        text[at..]
            .split([' ', ',', ')'])
            .find(|word| !word.is_empty())
            .unwrap()
            .to_owned()
    };
    let token = field("Demo token:");
    let api_key = field("Demo API key:");
    let partner = field("Demo partner:");
    let client = field("OAuth client:");
    let decks = field("Demo decks:");
    let base = format!("http://{address}");
    let api = format!("{base}/api/public/v1");
    let values = BTreeMap::from([
        ("B", api.clone()),
        ("API", api),
        ("TOKEN", token.clone()),
        ("PAT", token),
        ("KEY", api_key),
        ("PARTNER", word(&partner, "")),
        ("PARTNER_SECRET", word(&partner, "(secret ")),
        ("CLIENT_ID", word(&client, "")),
        ("CLIENT_SECRET", word(&client, "(secret ")),
        ("DECK", word(&decks, "public ")),
        ("PRIVATE_DECK", word(&decks, "private ")),
        ("FORK", word(&decks, "fork ")),
        ("SIDEBOARD_GUIDE", field("Demo sideboard guide:")),
        ("BASE_URL", base),
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(address).is_err() {
        assert!(
            Instant::now() < deadline,
            "deckhand serve never listened; log: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Demo {
        child,
        address,
        values,
    }
}

/// The doc's literal placeholders, as the convention in docs/api.md lists them.
fn substitute(text: &str, demo: &Demo, last_id: &str) -> String {
    let value = |name: &str| demo.values[name].as_str();
    text.replace(DOC_BASE, &format!("http://{}", demo.address))
        .replace("dh_pat_...", value("TOKEN"))
        .replace("dh_key_...", value("KEY"))
        .replace("dh_ps_...", value("PARTNER_SECRET"))
        .replace("<public demo deck id>", value("DECK"))
        .replace("<fork demo deck id>", value("FORK"))
        .replace("<matchup id>", last_id)
}

struct Runner<'a> {
    demo: &'a Demo,
    scratch: PathBuf,
    env: BTreeMap<String, String>,
    last_id: String,
    ran: usize,
    failures: Vec<String>,
}

impl Runner<'_> {
    fn run_block(&mut self, block: &Block) {
        let statements = statements(block);
        let last_curl = statements.iter().rposition(|s| runs_curl(&s.text));
        for (index, statement) in statements.iter().enumerate() {
            let json_after = (Some(index) == last_curl)
                .then_some(block.json_after.as_deref())
                .flatten();
            if let Err(error) = self.run_statement(statement, json_after) {
                self.failures.push(format!(
                    "{}:{}: {}\n  {}",
                    block.file,
                    statement.line,
                    error,
                    statement.text.trim().replace('\n', "\n  ")
                ));
            }
        }
    }

    fn run_statement(
        &mut self,
        statement: &Statement,
        json_after: Option<&str>,
    ) -> Result<(), String> {
        let headers = self.scratch.join("headers");
        let env_dump = self.scratch.join("env");
        let _ = std::fs::remove_file(&headers);
        // "export ID=...   # the id you got": the reader copies it from the answer above.
        let text = if statement.comment.contains("the id you got") {
            let (name, _) = statement
                .text
                .trim()
                .trim_start_matches("export ")
                .split_once('=')
                .ok_or("\"the id you got\" on a line that assigns nothing")?;
            if self.last_id.is_empty() {
                return Err("\"the id you got\" but nothing was created before".into());
            }
            format!("{name}={}\n", self.last_id)
        } else {
            substitute(&statement.text, self.demo, &self.last_id)
        };
        let script = format!(
            "curl() {{ command curl -D \"$DOCTEST_HEADERS\" \"$@\"; }}\nset -a\n{text}\n\
             status=$?\nenv -0 > \"$DOCTEST_ENV\"\nexit $status\n"
        );
        let output = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .env_clear()
            .envs(&self.env)
            .env("DOCTEST_HEADERS", &headers)
            .env("DOCTEST_ENV", &env_dump)
            .current_dir(&self.scratch)
            .output()
            .map_err(|error| format!("bash: {error}"))?;
        if let Ok(dump) = std::fs::read(&env_dump) {
            self.env = String::from_utf8_lossy(&dump)
                .split('\0')
                .filter_map(|pair| pair.split_once('='))
                .filter(|(name, _)| !name.starts_with("DOCTEST_") && *name != "status")
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect();
        }
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            return Err(format!(
                "exited with {}; stderr: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        if !runs_curl(&statement.text) {
            return Ok(());
        }
        self.ran += 1;
        let head = std::fs::read_to_string(&headers).map_err(|_| "curl made no request")?;
        let status: u16 = head
            .lines()
            .rfind(|line| line.starts_with("HTTP/"))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|code| code.parse().ok())
            .ok_or("no status line")?;
        // With `-i` the answer's head comes first on stdout.
        let body = if statement.text.contains(" -i ") {
            stdout
                .split_once("\r\n\r\n")
                .map_or(stdout.as_str(), |(_, body)| body)
        } else {
            stdout.as_str()
        };
        if status == 201
            && let Ok(Value::Object(created)) = serde_json::from_str::<Value>(body.trim())
            && let Some(Value::String(id)) = created.get("id")
        {
            self.last_id = id.clone();
        }
        let (shown_status, mut shape) = expectation(&statement.comment);
        if shape.is_none() {
            shape = json_after;
        }
        match shown_status {
            Some(shown) if shown != status => {
                return Err(format!(
                    "the doc shows {shown}, the server answered {status}: {}",
                    stdout.trim()
                ));
            }
            None if !(200..300).contains(&status) => {
                return Err(format!(
                    "the doc shows no status, so a 2xx; the server answered {status}: {}",
                    stdout.trim()
                ));
            }
            _ => {}
        }
        // Only where stdout is the body as the server sent it.
        let plain = !statement.text.contains(" -o ")
            && !statement.text.contains(" -w ")
            && !statement.text.contains('|');
        if let Some(shape) = shape
            && plain
        {
            check_shape(shape, body).map_err(|error| format!("{error}: {}", body.trim()))?;
        }
        Ok(())
    }
}

#[test]
fn every_curl_example_of_the_docs_answers_as_shown_on_the_demo() {
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("docs-examples");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let log = scratch.join("deckhand.log");
    let demo = start_demo(&log);
    let path = std::env::var("PATH").unwrap_or_default();
    let mut runner = Runner {
        demo: &demo,
        scratch: scratch.clone(),
        env: BTreeMap::new(),
        last_id: String::new(),
        ran: 0,
        failures: Vec::new(),
    };
    let mut per_file = Vec::new();
    for file in doc_files() {
        // Each page starts from the demo's values alone, as a reader opening it would.
        runner.env = demo
            .values
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .chain([("PATH".to_owned(), path.clone())])
            .collect();
        let before = runner.ran;
        for block in blocks(&file) {
            if block.needs.is_none()
                && block.lang == "sh"
                && block.lines.iter().any(|line| runs_curl(line))
            {
                runner.run_block(&block);
            }
        }
        per_file.push(format!(
            "{}: {}",
            file.strip_prefix(workspace_root()).unwrap().display(),
            runner.ran - before
        ));
    }
    let failures = std::mem::take(&mut runner.failures);
    assert!(
        failures.is_empty(),
        "{} doc example(s) did not answer as shown:\n\n{}\n\nserver log: {}",
        failures.len(),
        failures.join("\n\n"),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    println!("curl commands run per page: {per_file:#?}");
    // A parser that found nothing would pass vacuously.
    assert!(
        runner.ran >= 40,
        "only {} curl commands ran: {per_file:?}",
        runner.ran
    );
}

/// A block showing `curl` that the test does not run says why, so no example is left out
/// silently: anything but a `sh` block, or a marked one, needs the marker.
#[test]
fn every_curl_example_left_out_says_what_it_needs() {
    let mut unmarked = Vec::new();
    for file in doc_files() {
        for block in blocks(&file) {
            let shows_curl = block
                .lines
                .iter()
                .any(|line| runs_curl(line.trim_start_matches("$ ")));
            if shows_curl && block.lang != "sh" && block.needs.is_none() {
                unmarked.push(format!("{}:{}", block.file, block.line));
            }
            if block.needs.as_deref() == Some("") {
                unmarked.push(format!("{}:{} (an empty marker)", block.file, block.line));
            }
        }
    }
    assert!(
        unmarked.is_empty(),
        "curl examples that are not `sh` blocks run against the demo need a \
         `<!-- needs: <what> -->` line before them (docs/api.md, \"Examples are tests\"): \
         {unmarked:?}"
    );
}

#[test]
fn abridged_json_shows_its_top_level_keys() {
    assert_eq!(
        shown_keys(r#"{..., "name": "Stompy", "cards": [{"x": 1}], "version": 2, ...}"#),
        (false, vec!["name".into(), "cards".into(), "version".into()])
    );
    assert_eq!(
        shown_keys(r#"[{"version_number":1,"a":{"b":2}}, {"c":3}]"#),
        (true, vec!["version_number".into(), "a".into()])
    );
    assert_eq!(expectation("204; again: 404"), (Some(204), None));
    assert_eq!(expectation(r#"{"a":1}"#), (None, Some(r#"{"a":1}"#)));
}
