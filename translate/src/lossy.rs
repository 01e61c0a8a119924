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
         here round-trips exactly (`to_v03(to_v10(x)) == x`, proven by proptest).\n",
    );
    for (module, rows) in all() {
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n## `{module}`\n\n| entity | direction | what is lost or ambiguous | decision | fixture |\n|---|---|---|---|---|\n"
        ));
        for r in rows {
            let dir = match r.direction {
                Direction::ToV10 => "v0.3 → v1.0",
                Direction::ToV03 => "v1.0 → v0.3",
                Direction::Both => "both",
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | `{}` |\n",
                r.entity, dir, r.what, r.decision, r.fixture
            ));
        }
    }
    out
}
