//! `a2a-compat-proxy roundtrip`: each input line (a document of one kind,
//! in one version) translated to the other version and back; every
//! difference from the input reported with its JSON path, those a declared
//! lossy mapping covers (`docs/mapping.md`, the crate's `LOSSY` tables)
//! marked apart from the others. With `--against CMD`, an external
//! converter (a process reading and writing JSON Lines, one line out per
//! line in) does one of the two translations instead of ours, and its
//! output is compared with ours line by line.

mod converter;
pub mod diff;

use std::io::{BufRead, Write};

use serde_json::{json, Value};
use translate::document::{self, Kind};
use translate::lossy::{self, Direction};
use translate::method::Method;
use translate::Version;

use crate::cli::translate::{kind_of, version_of};
use crate::cli::{CliKind, TargetVersion};
use diff::{Difference, Rules};

/// Flags of `roundtrip`.
#[derive(Debug, Clone, clap::Args)]
pub struct RoundtripArgs {
    /// What each input line is.
    #[arg(long, value_enum)]
    pub kind: CliKind,
    /// The version the input lines are in.
    #[arg(long, value_enum)]
    pub from: TargetVersion,
    /// For `response` and `event`: the method answered (either version's
    /// name).
    #[arg(long)]
    pub method: Option<String>,
    /// A command (run by `sh -c`) that translates JSON Lines on its stdin
    /// to JSON Lines on its stdout, one line out per line in (a document,
    /// or `{"error":{"code":…,"message":…}}`), in place of one of the two
    /// translations. It finds what to do in its environment: A2A_KIND,
    /// A2A_FROM, A2A_TO (`0.3` / `1.0`), A2A_METHOD_V10 and A2A_METHOD_V03.
    #[arg(long, value_name = "CMD")]
    pub against: Option<String>,
    /// Which translation `--against` does: `there` (from the input's
    /// version to the other) or `back`.
    #[arg(long, value_enum, default_value = "there")]
    pub direction: Step,
    /// Seconds the `--against` command may take for all the lines.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// Report a v1.0 member that is absent on one side and a proto3
    /// default (`false`, `""`, `[]`, `{}`, `…_UNSPECIFIED`) on the other;
    /// by default they are the same ProtoJSON message.
    #[arg(long)]
    pub strict: bool,
}

/// One of the two translations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Step {
    There,
    Back,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::There => "there",
            Step::Back => "back",
        }
    }
}

/// A translation that did not give a document.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub code: Option<i64>,
    pub message: String,
}

type Outcome = Result<Vec<u8>, Refusal>;

/// The run's settings, resolved.
struct Run {
    kind: Kind,
    from: Version,
    method: Option<String>,
    against: Option<(String, Step)>,
    timeout: std::time::Duration,
    strict: bool,
}

/// Per line: its state as the steps go.
struct Line {
    input: Vec<u8>,
    there: Option<Outcome>,
    there_ours: Option<Outcome>,
    back: Option<Outcome>,
    back_ours: Option<Outcome>,
}

fn ours(kind: Kind, to: Version, method: Option<&str>, input: &[u8]) -> Outcome {
    document::translate(kind, to, method, input).map_err(|e| Refusal {
        code: Some(i64::from(e.jsonrpc_code())),
        message: e.to_string(),
    })
}

fn way(to: Version) -> Direction {
    match to {
        Version::V10 => Direction::ToV10,
        Version::V03 => Direction::ToV03,
    }
}

/// A declared lossy mapping: its module and row.
type Row = (&'static str, &'static lossy::Lossy);

/// What one line's report has found so far.
#[derive(Default)]
struct Verdict {
    /// The declared mappings our own round trip of the line shows (its
    /// differences and refusals): only these can explain a difference.
    shown: Vec<Row>,
    /// A difference or refusal a declared lossy mapping covers.
    declared: bool,
    /// A difference none covers.
    undeclared: bool,
    /// A refusal none covers, or a broken answer.
    failed: bool,
    errors: Vec<Value>,
}

impl Verdict {
    /// A step that gave no document: declared when ours refused it with
    /// the code of a declared mapping.
    fn refusal(&mut self, step: Step, by: &str, r: &Refusal, way: Direction) {
        let row = r.code.and_then(|c| lossy::covering_error(way, c));
        match (by, row) {
            ("ours" | "both", Some(_)) => self.declared = true,
            _ => self.failed = true,
        }
        self.errors.push(json!({
            "step": step.name(),
            "by": by,
            "code": r.code,
            "message": r.message,
            "lossy": row.map(|(m, r)| format!("{m}: {}", r.entity)),
        }));
    }

    /// The first of `rows` our own round trip showed.
    fn shown(&self, rows: Vec<Row>) -> Option<Row> {
        rows.into_iter()
            .find(|(_, r)| self.shown.iter().any(|(_, s)| std::ptr::eq(*s, *r)))
    }

    /// The differences, each marked with the declared mapping that covers
    /// it, when our own round trip of the line shows that mapping.
    fn differences(&mut self, found: &[Difference], way: Direction) -> Vec<Value> {
        found
            .iter()
            .map(|d| {
                let names: Vec<&str> = d.names.iter().map(String::as_str).collect();
                let row = self.shown(lossy::covering(way, &names));
                if row.is_some() {
                    self.declared = true;
                } else {
                    self.undeclared = true;
                }
                json!({
                    "path": d.path,
                    "change": d.change(),
                    "expected": d.expected,
                    "got": d.got,
                    "lossy": row.map(|(m, r)| format!("{m}: {}", r.entity)),
                })
            })
            .collect()
    }
}

/// Counts of the lines by status.
#[derive(Default)]
struct Tally {
    exact: u64,
    lossy: u64,
    differs: u64,
    error: u64,
}

impl Run {
    fn rules(&self, v: Version) -> Rules {
        Rules {
            proto3_defaults: v == Version::V10 && !self.strict,
        }
    }

    /// The report of one line.
    fn report(&self, n: usize, line: &Line, tally: &mut Tally) -> Value {
        let to = self.from.other();
        let mut v = Verdict {
            shown: self.own_rows(line),
            ..Verdict::default()
        };
        let theirs_at = self.against.as_ref().map(|(_, s)| *s);
        let by = |s: Step| {
            if theirs_at == Some(s) {
                "theirs"
            } else {
                "ours"
            }
        };
        let input: Option<Value> = serde_json::from_slice(&line.input).ok();
        if input.is_none() {
            v.refusal(
                Step::There,
                "input",
                &Refusal {
                    code: Some(-32700),
                    message: "the line is not a JSON document".into(),
                },
                way(to),
            );
        }
        for (step, outcome, mine, w) in [
            (Step::There, &line.there, &line.there_ours, way(to)),
            (Step::Back, &line.back, &line.back_ours, way(self.from)),
        ] {
            match (outcome, mine) {
                // Theirs refused what ours refuses: they agree (ours says why).
                (Some(Err(_)), Some(Err(o))) if by(step) == "theirs" => {
                    v.refusal(step, "both", o, w)
                }
                (Some(Err(r)), _) => v.refusal(step, by(step), r, w),
                _ => {}
            }
        }
        // Ours where theirs did the step, when only ours refused.
        let mut compare = Vec::new();
        if let Some(step) = theirs_at {
            let (theirs, mine, version) = match step {
                Step::There => (&line.there, &line.there_ours, to),
                Step::Back => (&line.back, &line.back_ours, self.from),
            };
            let w = way(version);
            match (theirs, mine) {
                (Some(Ok(t)), Some(Ok(o))) => {
                    match (
                        serde_json::from_slice::<Value>(o),
                        serde_json::from_slice::<Value>(t),
                    ) {
                        (Ok(o), Ok(t)) => {
                            let d = diff::diff(&o, &t, self.rules(version));
                            compare = v.differences(&d, w);
                        }
                        _ => v.failed = true,
                    }
                }
                (Some(Ok(_)), Some(Err(r))) => v.refusal(step, "ours", r, w),
                _ => {}
            }
        }
        let mut round_trip = Vec::new();
        if let (Some(x), Some(Ok(back))) = (&input, &line.back) {
            match serde_json::from_slice::<Value>(back) {
                Ok(y) => {
                    let d = diff::diff(x, &y, self.rules(self.from));
                    round_trip = v.differences(&d, Direction::Both);
                }
                Err(e) => v.refusal(
                    Step::Back,
                    by(Step::Back),
                    &Refusal {
                        code: None,
                        message: format!("not JSON: {e}"),
                    },
                    way(self.from),
                ),
            }
        }
        let status = if v.failed {
            tally.error += 1;
            "error"
        } else if v.undeclared {
            tally.differs += 1;
            "differs"
        } else if v.declared {
            tally.lossy += 1;
            "lossy"
        } else {
            tally.exact += 1;
            "exact"
        };
        let mut r = json!({"line": n, "status": status, "round_trip": round_trip});
        if theirs_at.is_some() {
            r["compare"] = Value::from(compare);
        }
        if !v.errors.is_empty() {
            r["errors"] = Value::from(v.errors);
        }
        r
    }

    /// The declared mappings our own round trip of `line` shows.
    fn own_rows(&self, line: &Line) -> Vec<Row> {
        let to = self.from.other();
        let method = self.method.as_deref();
        let there = match (&self.against, &line.there_ours) {
            (None, _) => line.there.clone(),
            (Some(_), mine) => mine.clone(),
        };
        let mut rows = Vec::new();
        let there = match there {
            Some(Ok(t)) => t,
            Some(Err(r)) => {
                rows.extend(r.code.and_then(|c| lossy::covering_error(way(to), c)));
                return rows;
            }
            None => return rows,
        };
        let back = match (&self.against, &line.back) {
            (None, Some(b)) => b.clone(),
            _ => ours(self.kind, self.from, method, &there),
        };
        let back = match back {
            Ok(b) => b,
            Err(r) => {
                rows.extend(
                    r.code
                        .and_then(|c| lossy::covering_error(way(self.from), c)),
                );
                return rows;
            }
        };
        let (Ok(x), Ok(y)) = (
            serde_json::from_slice::<Value>(&line.input),
            serde_json::from_slice::<Value>(&back),
        ) else {
            return rows;
        };
        for d in diff::diff(&x, &y, self.rules(self.from)) {
            let names: Vec<&str> = d.names.iter().map(String::as_str).collect();
            rows.extend(lossy::covering(Direction::Both, &names));
        }
        rows
    }

    /// The environment of the `--against` command for a step toward `to`.
    fn env(&self, to: Version) -> Vec<(&'static str, String)> {
        let m = self
            .method
            .as_deref()
            .and_then(Method::from_name)
            .map(|(m, _)| m);
        let name = |v: Version| m.and_then(|m| m.name(v)).unwrap_or_default().to_string();
        vec![
            ("A2A_KIND", self.kind.name().to_string()),
            ("A2A_FROM", to.other().as_str().to_string()),
            ("A2A_TO", to.as_str().to_string()),
            ("A2A_METHOD_V10", name(Version::V10)),
            ("A2A_METHOD_V03", name(Version::V03)),
        ]
    }

    /// One step for every line that has something to translate.
    fn step(&self, lines: &mut [Line], step: Step) -> Result<(), String> {
        let to = match step {
            Step::There => self.from.other(),
            Step::Back => self.from,
        };
        let method = self.method.as_deref();
        let inputs: Vec<Option<Vec<u8>>> = lines
            .iter()
            .map(|l| match step {
                Step::There => Some(l.input.clone()),
                Step::Back => l.there.as_ref().and_then(|o| o.as_ref().ok().cloned()),
            })
            .collect();
        let mine: Vec<Option<Outcome>> = inputs
            .iter()
            .map(|i| i.as_ref().map(|x| ours(self.kind, to, method, x)))
            .collect();
        let theirs = match &self.against {
            Some((cmd, s)) if *s == step => {
                let given: Vec<&[u8]> = inputs.iter().flatten().map(Vec::as_slice).collect();
                let mut answers =
                    converter::run(cmd, &self.env(to), &given, self.timeout)?.into_iter();
                Some(
                    inputs
                        .iter()
                        .map(|i| i.as_ref().and_then(|_| answers.next()))
                        .collect::<Vec<_>>(),
                )
            }
            _ => None,
        };
        for (i, l) in lines.iter_mut().enumerate() {
            let (done, ours_slot) = match step {
                Step::There => (&mut l.there, &mut l.there_ours),
                Step::Back => (&mut l.back, &mut l.back_ours),
            };
            *ours_slot = mine[i].clone();
            *done = match &theirs {
                Some(t) => t[i].clone(),
                None => mine[i].clone(),
            };
        }
        Ok(())
    }
}

/// Runs the round trips of `input`'s lines, writing one report line each
/// to `output`; returns the summary and whether every line was exact or
/// only declared lossy.
fn go(run: &Run, input: impl BufRead, mut output: impl Write) -> Result<(String, bool), String> {
    let mut lines = Vec::new();
    for l in input.split(b'\n') {
        let mut l = l.map_err(|e| format!("cannot read stdin: {e}"))?;
        if l.last() == Some(&b'\r') {
            l.pop();
        }
        lines.push(Line {
            input: l,
            there: None,
            there_ours: None,
            back: None,
            back_ours: None,
        });
    }
    run.step(&mut lines, Step::There)?;
    run.step(&mut lines, Step::Back)?;
    let mut tally = Tally::default();
    let mut buf = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let r = run.report(i + 1, l, &mut tally);
        buf.clear();
        serde_json::to_writer(&mut buf, &r).map_err(|e| e.to_string())?;
        buf.push(b'\n');
        output.write_all(&buf).map_err(|e| e.to_string())?;
    }
    output.flush().map_err(|e| e.to_string())?;
    let summary = format!(
        "roundtrip: {} lines: {} exact, {} only declared lossy differences, {} other differences, {} errors",
        lines.len(),
        tally.exact,
        tally.lossy,
        tally.differs,
        tally.error
    );
    Ok((summary, tally.differs == 0 && tally.error == 0))
}

/// Runs the subcommand on stdin/stdout; returns the exit code: 0 when
/// every line came back exact or with declared lossy differences only, 1
/// otherwise, 2 on a usage error or when the `--against` command fails.
pub fn main(args: &RoundtripArgs) -> i32 {
    let kind = kind_of(args.kind);
    if let Some(m) = &args.method {
        if Method::from_name(m).is_none() {
            eprintln!("error: no A2A method is named {m:?}");
            return 2;
        }
    } else if kind == Kind::Response {
        eprintln!("error: --kind response needs --method (the method answered)");
        return 2;
    }
    let run = Run {
        kind,
        from: version_of(args.from),
        method: args.method.clone(),
        against: args.against.clone().map(|c| (c, args.direction)),
        timeout: std::time::Duration::from_secs(args.timeout),
        strict: args.strict,
    };
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let out = std::io::BufWriter::new(stdout.lock());
    match go(&run, stdin.lock(), out) {
        Ok((summary, ok)) => {
            eprintln!("{summary}");
            if ok {
                0
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}
