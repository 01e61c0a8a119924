//! The classification of what the SDKs' compat converters do differently
//! from ours, read against the specification texts (`spec-v0.3.md`,
//! `spec-v1.0.md`, the v1.0 proto) and the edge cases every converter must
//! get right (EDGE-CASES): each rule names a kind of divergence, says whose
//! it is, and why. The first rule that matches a finding classifies it.

use super::Finding;

/// Whose divergence it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The SDK's converter departs from the specification.
    Theirs,
    /// Ours does (a bug of the `translate` crate).
    Ours,
    /// The specifications leave it open (or the versions cannot say the
    /// same thing): both outputs are defensible.
    Spec,
}

impl Class {
    pub fn title(self) -> &'static str {
        match self {
            Class::Theirs => "Theirs: the SDK departs from the specification",
            Class::Ours => "Ours: this crate departs from the specification",
            Class::Spec => "Spec ambiguity: the specifications leave it open",
        }
    }
}

pub struct Rule {
    pub class: Class,
    /// SDKs it applies to (empty: any).
    pub sdk: &'static [&'static str],
    /// The version the SDK wrote (`None`: either).
    pub to: Option<&'static str>,
    /// Glob (`*`: any text) on the path template (`$.history[].parts[].data.…`).
    pub path: &'static str,
    /// The changes it covers (`missing`, `added`, `changed`, `refused`, `ours-refused`).
    pub change: &'static [&'static str],
    /// Glob on the value class (`default`, `number`, `value`) or, for
    /// refusals, on the message.
    pub values: &'static str,
    pub title: &'static str,
    pub why: &'static str,
}

/// `*` matches any text.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|i| tail.is_char_boundary(*i))
                .any(|i| glob(rest, &tail[i..]))
        }
    }
}

impl Rule {
    pub fn matches(&self, f: &Finding) -> bool {
        (self.sdk.is_empty() || self.sdk.contains(&f.sdk))
            && self.to.is_none_or(|t| t == f.to)
            && self.change.contains(&f.change.as_str())
            && glob(self.path, &f.path)
            && glob(self.values, &f.values)
    }
}

const DIFF: &[&str] = &["missing", "added", "changed"];
const REFUSED: &[&str] = &["refused"];

pub const RULES: &[Rule] = &[
    // ------------------------------------------------------------ theirs
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: None,
        path: "*",
        change: &["changed"],
        values: "number",
        title: "Integers beyond 2^53 lose precision.",
        why: "The document is parsed into doubles (`JSON.parse`), so a metadata or data integer such as `8669747728739616979` becomes `8669747728739617000`. EDGE-CASES 12: preserve integers beyond 2^53 (v0.3 JSON and v1.0 ProtoJSON both carry them as written; only a `google.protobuf.Struct` held in memory is made of doubles). Only the full domain has such integers.",
    },
    Rule {
        class: Class::Theirs,
        sdk: &["js"],
        to: Some("0.3"),
        path: "",
        change: REFUSED,
        values: "*part: missing content*",
        title: "A v1.0 part whose `data` is `null` is refused.",
        why: "`{\"data\": null}` is a part whose `google.protobuf.Value` is `NULL_VALUE`: ProtoJSON reads JSON `null` as the null value for `Value` fields (not as \"unset\"), and v1.0 `data` may be any JSON value. The codec drops it and the converter then finds no content.",
    },
    Rule {
        class: Class::Theirs,
        sdk: &["python"],
        to: Some("1.0"),
        path: "",
        change: REFUSED,
        values: "*does not match format*",
        title: "Naive v0.3 timestamps are refused.",
        why: "A v0.3 `timestamp` without an offset (`2025-04-02T16:59:25.331844`, the form of the v0.3 specification's own examples) makes the converter raise. Ours reads it as UTC and writes `Z` (mapping row TaskStatus.timestamp).",
    },
    Rule {
        class: Class::Theirs,
        sdk: &["js"],
        to: Some("1.0"),
        path: "*.timestamp",
        change: &["changed"],
        values: "*",
        title: "v0.3 timestamps cross to v1.0 as they are.",
        why: "A naive (`2027-10-16T13:52:45.387616`) or offset (`…+02:00`) v0.3 timestamp is copied into the v1.0 document. v1.0 §5.6.1: timestamps MUST be UTC with `Z` and MUST NOT carry other offsets; a naive one is not a `google.protobuf.Timestamp` at all. Ours converts to UTC `Z`.",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: Some("1.0"),
        path: "*.parts[].data*",
        change: &["changed", "missing"],
        values: "*",
        title: "Data parts that only look like the compat wrapping are unwrapped.",
        why: "A v0.3 data part `{\"value\": X}` whose `metadata.data_part_compat` is truthy but not exactly `true` (`1`, `\"true\"`), or whose `data` has other keys beside `value`, is unwrapped to the bare X (other keys dropped). EDGE-CASES 12: reverse the `{value: X}` convention only when the flag is strictly `true` (and `data` is exactly `{value}`); a genuine v0.3 object is data, not a wrapper.",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: Some("1.0"),
        path: "*.parts[].metadata*",
        change: &["missing", "changed"],
        values: "*",
        title: "The compat flag of a look-alike data part is removed.",
        why: "The other half of the previous row: with the part unwrapped, `metadata.data_part_compat` is taken out (ours keeps the part and its metadata as they are).",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: None,
        path: "*.signatures",
        change: &["added"],
        values: "*",
        title: "Card signatures are forwarded onto the translated card.",
        why: "A JWS over the JCS-canonical original card cannot verify over the translated card (new members, new shapes). EDGE-CASES 29: drop, re-sign or mark the signature, never forward a stale one silently. Ours drops it (mapping row AgentCard.signatures).",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: Some("1.0"),
        path: "*supportedInterfaces*",
        change: DIFF,
        values: "*",
        title: "Interfaces stamped with the card's `protocolVersion`, the primary repeated.",
        why: "Each v1.0 interface gets the v0.3 card-level string (`0.3.0`, or whatever the card says) where v1.0 §3.6 names versions by `Major.Minor` and says patch versions SHOULD NOT appear in cards; and the primary `url` is listed again when `additionalInterfaces` repeats it. EDGE-CASES 8: de-duplicate, stamp every interface `0.3`.",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: Some("0.3"),
        path: "*additionalInterfaces",
        change: &["changed", "missing"],
        values: "*",
        title: "`additionalInterfaces` leaves out the primary interface.",
        why: "v0.3 §5.6.2 (Completeness): `additionalInterfaces` SHOULD include all supported transports, the main URL's included. Ours lists the primary first, then the others.",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: Some("1.0"),
        path: "*returnImmediately",
        change: &["added"],
        values: "*",
        title: "An absent v0.3 `blocking` becomes non-blocking.",
        why: "A v0.3 configuration without `blocking` gets `returnImmediately: true`. The v0.3 reference servers (a2a-python 0.3.26, a2a-js 0.3.14, a2a-go 0.3.15) block unless `blocking` is explicitly false (EDGE-CASES §6 and 17), so the v0.3 client meant a blocking call; ours leaves `returnImmediately` unset (v1.0: blocking).",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: Some("1.0"),
        path: "*historyLength",
        change: &["added", "changed"],
        values: "*",
        title: "v0.3 `historyLength: 0` becomes v1.0 `0`.",
        why: "In v0.3 a `historyLength` of 0 sets no limit; in v1.0 an unset `historyLength` sets no limit and 0 asks for no history at all (v1.0 §3.2.4, EDGE-CASES 18). Copying the 0 turns \"all the history\" into \"none\"; ours leaves it unset.",
    },
    Rule {
        class: Class::Theirs,
        sdk: &[],
        to: Some("1.0"),
        path: "$.params.configuration",
        change: &["added"],
        values: "*",
        title: "v0.3 `historyLength: 0` becomes v1.0 `0` (the whole configuration).",
        why: "As the previous row, where the 0 was all the configuration held that crosses: the SDK writes `configuration: {historyLength: 0}`, ours no configuration.",
    },
    // --------------------------------------------------------- ambiguity
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("0.3"),
        path: "*",
        change: &["missing", "added"],
        values: "default",
        title: "v1.0 members holding their proto3 default.",
        why: "A v1.0 document may write a member with its default (`\"artifacts\": []`, `\"name\": \"\"`, `\"metadata\": {}`) or leave it out: ProtoJSON readers cannot tell the two apart. v0.3 JSON can: ours carries the member as written (present stays present, absent stays absent), the SDK's protobuf objects cannot, so it writes v0.3 from the default (leaving out empty members, or writing `append: false` where the input had nothing).",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("0.3"),
        path: "$.params.configuration*",
        change: &["missing", "changed"],
        values: "*",
        title: "`blocking` sent explicitly.",
        why: "A v1.0 SendMessage without a configuration blocks (v1.0 §3.2.2); v0.3 does not say what an absent `blocking` means, and v0.3 servers differ (EDGE-CASES §6: the v0.3 reference servers block, JS 1.x and .NET servers do not). Ours always writes `configuration.blocking` toward v0.3 (EDGE-CASES 17); the SDK leaves the configuration out.",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("0.3"),
        path: "*protocolVersion",
        change: &["changed"],
        values: "*",
        title: "The v0.3 card's `protocolVersion`.",
        why: "v1.0 has a version per interface, v0.3 one per card, whose schema default is `0.3.0`. Ours writes `0.3.0`; the SDK copies the interface's `0.3`. Both are read as A2A 0.3 by clients that compare `Major.Minor` (as both specifications ask).",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("0.3"),
        path: "*.timestamp",
        change: &["changed"],
        values: "*",
        title: "v1.0 timestamps rewritten toward v0.3.",
        why: "The same instant in another spelling: the SDK writes three fraction digits (`…27.1Z` → `…27.100Z`) where ours passes the v1.0 string unchanged (v0.3 only says ISO 8601).",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("1.0"),
        path: "*.securitySchemes*",
        change: DIFF,
        values: "*",
        title: "Which OAuth flow of several survives.",
        why: "v0.3 allows several flows on one scheme; the v1.0 `flow` oneof holds one. Neither specification says which (EDGE-CASES 9: pick by a documented precedence; a2a-js keeps the first, a2a-python the last). Ours: authorizationCode, clientCredentials, implicit, password (mapping row OAuthFlows).",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("1.0"),
        path: "*capabilities.extendedAgentCard",
        change: DIFF,
        values: "*",
        title: "The pre-release extended-card flag.",
        why: "Cards of pre-release v0.3 servers spell the flag `supportsExtendedAgentCard`, a name the v0.3 schema does not have. Ours reads it (mapping row AgentCard.supportsAuthenticatedExtendedCard); the SDK treats it as an unknown member.",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("0.3"),
        path: "",
        change: REFUSED,
        values: "*at least one interface*",
        title: "v1.0 cards without a 0.3 interface are refused.",
        why: "Nothing in either specification says what a v0.3 client should be shown for an agent that serves only other versions. The SDK refuses (a2a-python: VersionNotSupportedError); ours keeps the 0.3 interfaces, or all of them when there is none, the first as the primary (mapping rows AgentCard.supportedInterfaces): what the proxy serves its v0.3 clients.",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("1.0"),
        path: "",
        change: REFUSED,
        values: "*OAuthFlows must declare at least one flow*",
        title: "A v0.3 OAuth scheme with no flow is refused.",
        why: "The v0.3 schema lets `flows` be empty; the v1.0 `flow` oneof has no empty form. The SDK refuses the card; ours writes the scheme with an empty `flows` object.",
    },
    Rule {
        class: Class::Spec,
        sdk: &["python"],
        to: Some("0.3"),
        path: "",
        change: REFUSED,
        values: "*is not a valid In*",
        title: "Free-form v1.0 API-key locations are refused.",
        why: "v1.0 `location` is a string whose proto comment names `query`, `header` and `cookie`; v0.3 `in` is an enum of those three. The SDK raises on any other string; ours maps it to `header` (mapping row APIKeySecurityScheme.location).",
    },
    Rule {
        class: Class::Spec,
        sdk: &[],
        to: Some("1.0"),
        path: "$.params.id",
        change: &["missing"],
        values: "*",
        title: "A v0.3 push-config get without a config id.",
        why: "v0.3 `pushNotificationConfigId` is optional, v1.0 `id` is required. Ours asks for the task id, the id a config registered without one gets (EDGE-CASES 19, mapping row GetTaskPushNotificationConfig params without config id); the SDK leaves `id` empty, which its own handler never matches.",
    },
    Rule {
        class: Class::Spec,
        sdk: &["python"],
        to: Some("1.0"),
        path: "",
        change: REFUSED,
        values: "*Invalid base64-encoded string*",
        title: "URL-safe base64 is refused.",
        why: "v0.3 file `bytes` are \"base64-encoded\", with no alphabet named; the decoder takes only the standard alphabet and fails on `-` and `_`. Ours accepts both alphabets and writes the standard one (mapping row Part (file bytes)).",
    },
    Rule {
        class: Class::Spec,
        sdk: &["python"],
        to: Some("1.0"),
        path: "",
        change: REFUSED,
        values: "*Incorrect padding*",
        title: "Unpadded base64 is refused.",
        why: "v0.3 file `bytes` are \"base64-encoded\", nothing more precise; RFC 4648 wants padding, and many producers leave it out. Ours accepts unpadded and URL-safe base64 and writes the standard form (mapping row Part (file bytes)); the SDK refuses it.",
    },
];

pub const INTRO: &str = "# The SDKs' v0.3 ⇄ v1.0 converters next to ours

What `a2a-compat-proxy roundtrip --against` finds when the official SDKs' v0.3 compat converters
translate the documents `a2a-compat-proxy gen` writes: 1,000 documents of each kind (task,
message, card, push-body, push-config, request, event; responses spread over every method), in
both versions, in the lossless and the full domain (`gen --seed 40`). Each SDK's converter
translates every document to the other version in place of ours (`examples/a2a_python_compat.py`,
`examples/a2a_js_compat.mjs`), and its output is compared with ours member by member (member order
ignored, numbers by value, proto3 defaults equal to absent in v1.0 output).

Each divergence is classified against the specification texts: **theirs** (the SDK departs from
the specification), **ours** (a bug of the `translate` crate, fixed when clearly ours) or a
**spec ambiguity** (both outputs are defensible). \"Documents\" counts the documents a divergence
shows in; \"where\" names the runs (kind, version, domain → the version written).

Generated by `BLESS=1 cargo test -p a2a-compat-proxy --test sdk_divergences` (the test fails
when this file is stale or a divergence is not classified; the rules are in
`proxy/tests/sdk_divergences/rules.rs`).
";

pub const FIXED: &str = "
## Ours, fixed

- **Doubles read one unit in the last place off.** The a2a-python SDK writes every
  `google.protobuf.Struct` number as a double (`8729470021900460.0`); serde_json's default float
  parser read some of them one unit in the last place off, so our translation turned
  `8729470021900460.0` into `8729470021900461.0`. The crate now reads numbers exactly
  (serde_json's `float_roundtrip`; `proxy/tests/jsonl.rs` `numbers_cross_exactly`).
";
