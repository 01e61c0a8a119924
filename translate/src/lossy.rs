//! The register of every lossy or ambiguous mapping. Each translator module
//! declares its own `LOSSY` table; [`all`] gathers them and [`render_markdown`]
//! produces `docs/mapping.md` (a test keeps the file in step with the code).

/// Which way a mapping loses information.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Going from v0.3 to v1.0.
    ToV10,
    /// Going from v1.0 to v0.3.
    ToV03,
    /// Both ways.
    Both,
}

/// One lossy or ambiguous mapping and the decision taken for it.
#[derive(Debug, Clone, Copy)]
pub struct Lossy {
    /// The entity (e.g. `Part`, `AgentCard.securitySchemes`).
    pub entity: &'static str,
    pub direction: Direction,
    /// What cannot be carried, or is ambiguous.
    pub what: &'static str,
    /// What the translator does about it (the normal form).
    pub decision: &'static str,
    /// The fixture file(s) that show it, relative to `fixtures/`.
    pub fixture: &'static str,
    /// Where in a document the mapping shows, for tools that compare
    /// documents (`a2a-compat-proxy roundtrip`): each pattern is a run of
    /// member names (dot-separated; `*` is any one name) that a
    /// difference's path contains, array indices left out (`parts.filename`
    /// covers `$.history[0].parts[2].filename`); `error:CODE` covers a
    /// translation refused with that JSON-RPC code.
    pub at: &'static [&'static str],
}

impl Direction {
    /// Whether a mapping declared for `self` applies going `way` (a
    /// translation's direction).
    pub fn covers(self, way: Direction) -> bool {
        self == Direction::Both || self == way || way == Direction::Both
    }
}

/// Whether the pattern `pattern` (see [`Lossy::at`]) covers the path
/// `path` (member names from the root, array indices left out).
pub fn pattern_covers(pattern: &str, path: &[&str]) -> bool {
    if pattern.is_empty() || pattern.starts_with("error:") {
        return false;
    }
    let want: Vec<&str> = pattern.split('.').collect();
    path.windows(want.len())
        .any(|w| w.iter().zip(&want).all(|(name, p)| *p == "*" || name == p))
}

/// Every declared mapping (module, row) that covers a difference at
/// `path` when translating `way` (`Both`: a round trip, either way), in
/// module order.
pub fn covering(way: Direction, path: &[&str]) -> Vec<(&'static str, &'static Lossy)> {
    all()
        .into_iter()
        .flat_map(|(module, rows)| {
            rows.iter()
                .filter(move |r| {
                    r.direction.covers(way) && r.at.iter().any(|p| pattern_covers(p, path))
                })
                .map(move |r| (module, r))
        })
        .collect()
}

/// The declared mapping (module, row) that refuses a translation `way`
/// with the JSON-RPC error `code`, if any.
pub fn covering_error(way: Direction, code: i64) -> Option<(&'static str, &'static Lossy)> {
    let want = format!("error:{code}");
    all().into_iter().find_map(|(module, rows)| {
        rows.iter()
            .find(|r| r.direction.covers(way) && r.at.contains(&want.as_str()))
            .map(|r| (module, r))
    })
}

/// Every lossy mapping of the crate, in module order.
pub fn all() -> Vec<(&'static str, &'static [Lossy])> {
    vec![
        ("part", crate::part::LOSSY),
        ("message", crate::message::LOSSY),
        ("task", crate::task::LOSSY),
        ("artifact", crate::artifact::LOSSY),
        ("event", crate::event::LOSSY),
        ("params", crate::params::LOSSY),
        ("push_config", crate::push_config::LOSSY),
        ("push_body", crate::push_body::LOSSY),
        ("agent_card", crate::agent_card::LOSSY),
        ("jsonrpc", crate::jsonrpc::LOSSY),
        ("code", crate::code::LOSSY),
    ]
}

/// Renders the register as the Markdown of `docs/mapping.md`.
pub fn render_markdown() -> String {
    let mut out = String::from(
        "# Lossy and ambiguous mappings\n\n\
         Generated from the `LOSSY` tables of the `translate` crate \
         (`cargo test -p translate --test mapping_doc` checks it; \
         run it with `BLESS=1` to rewrite this file). Every mapping not listed \
         here round-trips exactly (`to_v03(to_v10(x)) == x`, proven by proptest). \
         The last column says where each mapping shows in a document: \
         `a2a-compat-proxy roundtrip` marks a difference whose JSON path \
         contains one of these runs of member names (`*`: any name; \
         `error:CODE`: the translation is refused with that code) as \
         declared lossy.\n",
    );
    for (module, rows) in all() {
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n## `{module}`\n\n| entity | direction | what is lost or ambiguous | decision | fixture | where it shows |\n|---|---|---|---|---|---|\n"
        ));
        for r in rows {
            let dir = match r.direction {
                Direction::ToV10 => "v0.3 → v1.0",
                Direction::ToV03 => "v1.0 → v0.3",
                Direction::Both => "both",
            };
            let at: Vec<String> = r.at.iter().map(|p| format!("`{p}`")).collect();
            let at = if at.is_empty() {
                "-".to_string()
            } else {
                at.join(", ")
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | `{}` | {} |\n",
                r.entity, dir, r.what, r.decision, r.fixture, at
            ));
        }
    }
    out
}
