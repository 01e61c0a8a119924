//! The agent card, read and written in one go without typed values: each
//! object's members are located first (one checked scan), then the other
//! version's members are written in the typed path's order
//! ([`crate::agent_card`] and the card types of [`crate::v03`] /
//! [`crate::v10`]), maps the typed path keeps sorted (`BTreeMap`: security
//! schemes, requirements, scopes) written sorted.
//!
//! Declined (`None`, the caller takes the typed path): repeated members,
//! `null` or a wrong type where a typed member is, proto-style member
//! names, escapes in names or values this pass compares or sorts, unknown
//! members beside a v1.0 oneof member (security scheme, OAuth flows: the
//! typed path merges and reorders those), the oneof-wrapped scheme and
//! ProtoJSON requirement forms in v0.3 input, and anything invalid.

use super::lex::Lex;
use crate::Version;

/// Members an object may have before this pass gives up on it.
const MAX_MEMBERS: usize = 48;

/// The typed path's `carry` lists (`crate::agent_card`): unknown members
/// with these names do not cross.
const CARD_KEYS: &[&[u8]] = &[
    b"protocolVersion",
    b"name",
    b"description",
    b"url",
    b"preferredTransport",
    b"additionalInterfaces",
    b"supportedInterfaces",
    b"iconUrl",
    b"provider",
    b"version",
    b"documentationUrl",
    b"capabilities",
    b"securitySchemes",
    b"security",
    b"securityRequirements",
    b"input_modes",
    b"output_modes",
    b"security_requirements",
    b"defaultInputModes",
    b"defaultOutputModes",
    b"skills",
    b"supportsAuthenticatedExtendedCard",
    b"supportsExtendedAgentCard",
    b"signatures",
    b"supported_interfaces",
    b"documentation_url",
    b"security_schemes",
    b"default_input_modes",
    b"default_output_modes",
    b"icon_url",
];
const CAPABILITY_KEYS: &[&[u8]] = &[
    b"streaming",
    b"pushNotifications",
    b"stateTransitionHistory",
    b"extensions",
    b"extendedAgentCard",
    b"push_notifications",
    b"extended_agent_card",
];
const INTERFACE_KEYS: &[&[u8]] = &[
    b"url",
    b"transport",
    b"protocolBinding",
    b"tenant",
    b"protocolVersion",
    b"protocol_binding",
    b"protocol_version",
];
const SKILL_KEYS: &[&[u8]] = &[
    b"id",
    b"name",
    b"description",
    b"tags",
    b"examples",
    b"inputModes",
    b"outputModes",
    b"security",
    b"securityRequirements",
];
const SCHEME_KEYS: &[&[u8]] = &[
    b"type",
    b"description",
    b"in",
    b"location",
    b"name",
    b"scheme",
    b"bearerFormat",
    b"flows",
    b"oauth2MetadataUrl",
    b"openIdConnectUrl",
    b"apiKeySecurityScheme",
    b"httpAuthSecurityScheme",
    b"oauth2SecurityScheme",
    b"openIdConnectSecurityScheme",
    b"mtlsSecurityScheme",
    b"bearer_format",
    b"oauth2_metadata_url",
    b"open_id_connect_url",
    b"api_key_security_scheme",
    b"http_auth_security_scheme",
    b"oauth2_security_scheme",
    b"open_id_connect_security_scheme",
    b"mtls_security_scheme",
];
const FLOW_KEYS: &[&[u8]] = &[
    b"authorizationUrl",
    b"tokenUrl",
    b"refreshUrl",
    b"scopes",
    b"pkceRequired",
    b"deviceAuthorizationUrl",
    b"authorization_url",
    b"token_url",
    b"refresh_url",
    b"pkce_required",
    b"device_authorization_url",
];
const FLOWS_KEYS: &[&[u8]] = &[
    b"authorizationCode",
    b"clientCredentials",
    b"implicit",
    b"password",
    b"deviceCode",
    b"authorization_code",
    b"client_credentials",
    b"device_code",
];

/// Proto spellings the v1.0 types accept as aliases: not taken here.
const V10_ALIASES: &[&[u8]] = &[
    b"supported_interfaces",
    b"documentation_url",
    b"security_schemes",
    b"security_requirements",
    b"default_input_modes",
    b"default_output_modes",
    b"icon_url",
    b"protocol_binding",
    b"protocol_version",
    b"push_notifications",
    b"extended_agent_card",
    b"input_modes",
    b"output_modes",
    b"bearer_format",
    b"oauth2_metadata_url",
    b"open_id_connect_url",
    b"authorization_url",
    b"token_url",
    b"refresh_url",
    b"pkce_required",
    b"device_authorization_url",
    b"api_key_security_scheme",
    b"http_auth_security_scheme",
    b"oauth2_security_scheme",
    b"open_id_connect_security_scheme",
    b"mtls_security_scheme",
    b"authorization_code",
    b"client_credentials",
    b"device_code",
];

/// One member of a scanned object: name (without quotes) and value spans.
#[derive(Clone, Copy, Default)]
struct M {
    ks: u32,
    ke: u32,
    vs: u32,
    ve: u32,
}

/// The members of one object, in input order: a range of `Cx::stack`.
#[derive(Clone, Copy)]
struct Obj {
    s: usize,
    e: usize,
}

/// An interface: url, transport / binding, its object and the members of
/// it that cross.
type Iface<'a> = (&'a [u8], &'a [u8], Obj, u64);

/// Translates the agent card `input` to `to`. `None`: not taken here.
pub fn card(to: Version, input: &[u8]) -> Option<Vec<u8>> {
    std::str::from_utf8(input).ok()?;
    u32::try_from(input.len()).ok()?;
    let mut cx = Cx {
        lx: Lex::new(input),
        out: Vec::with_capacity(input.len() + input.len() / 4 + 64),
        ws: false,
        ends: vec![0; input.len()],
        stack: Vec::with_capacity(64),
    };
    // One checked read of the whole card, recording where each value ends.
    let i = cx.lx.skip_ws(0);
    cx.lx.ws = false;
    let mut ends = std::mem::take(&mut cx.ends);
    let e = cx.lx.index(i, 0, &mut ends)?;
    cx.ends = ends;
    cx.ws = cx.lx.ws;
    if cx.lx.skip_ws(e) != input.len() {
        return None;
    }
    match to {
        Version::V10 => cx.card_to_v10(i)?,
        Version::V03 => cx.card_to_v03(i)?,
    }
    Some(cx.out)
}

struct Cx<'a> {
    lx: Lex<'a>,
    out: Vec<u8>,
    /// Whether the input has whitespace outside strings (copies strip it).
    ws: bool,
    /// `ends[s]`: the end of the value or member name starting at `s`.
    ends: Vec<u32>,
    /// The members of the objects scanned so far.
    stack: Vec<M>,
}

/// Where the next member of an output object goes: `first` says no comma.
struct W {
    first: bool,
}

impl W {
    fn new() -> Self {
        W { first: true }
    }
}

impl<'a> Cx<'a> {
    fn b(&self) -> &'a [u8] {
        self.lx.b
    }

    fn name(&self, m: M) -> &'a [u8] {
        &self.b()[m.ks as usize..m.ke as usize]
    }

    fn c(&self, m: M) -> u8 {
        self.b()[m.vs as usize]
    }

    /// The end of the value (or member name) starting at `i`.
    fn end(&self, i: usize) -> usize {
        self.ends[i] as usize
    }

    fn mems(&self, o: &Obj) -> &[M] {
        &self.stack[o.s..o.e]
    }

    /// The members of the (checked) object at `i`.
    fn scan(&mut self, i: usize, _depth: u32) -> Option<Obj> {
        if self.lx.at(i)? != b'{' {
            return None;
        }
        let s = self.stack.len();
        let mut j = self.lx.skip_ws(i + 1);
        if self.lx.at(j)? == b'}' {
            return Some(Obj { s, e: s });
        }
        loop {
            let ke = self.end(j);
            let v = self.lx.skip_ws(ke);
            let v = self.lx.skip_ws(v + 1);
            let ve = self.end(v);
            if self.stack.len() - s == MAX_MEMBERS {
                return None;
            }
            self.stack.push(M {
                ks: (j + 1) as u32,
                ke: (ke - 1) as u32,
                vs: v as u32,
                ve: ve as u32,
            });
            j = self.lx.skip_ws(ve);
            match self.lx.at(j)? {
                b',' => j = self.lx.skip_ws(j + 1),
                b'}' => {
                    return Some(Obj {
                        s,
                        e: self.stack.len(),
                    })
                }
                _ => return None,
            }
        }
    }

    /// The elements of the (checked) array at `m`: (start, end) each.
    fn elems(&mut self, m: M, _depth: u32) -> Option<Vec<(usize, usize)>> {
        let i = m.vs as usize;
        if self.lx.at(i)? != b'[' {
            return None;
        }
        let mut v = Vec::new();
        let mut j = self.lx.skip_ws(i + 1);
        if self.lx.at(j)? == b']' {
            return Some(v);
        }
        loop {
            let e = self.end(j);
            v.push((j, e));
            j = self.lx.skip_ws(e);
            match self.lx.at(j)? {
                b',' => j = self.lx.skip_ws(j + 1),
                b']' => return Some(v),
                _ => return None,
            }
        }
    }

    /// The content of a string value without escapes.
    fn plain(&self, m: M) -> Option<&'a [u8]> {
        if self.c(m) != b'"' {
            return None;
        }
        let raw = &self.b()[m.vs as usize + 1..m.ve as usize - 1];
        (!raw.contains(&b'\\')).then_some(raw)
    }

    fn key(&mut self, w: &mut W, name: &[u8]) {
        if !w.first {
            self.out.push(b',');
        }
        w.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(name);
        self.out.extend_from_slice(b"\":");
    }

    fn copy(&mut self, m: M) {
        self.lx
            .copy(&mut self.out, m.vs as usize, m.ve as usize, self.ws);
    }

    /// `"name":value` copied, the value checked to start with `first`.
    fn put(&mut self, w: &mut W, name: &[u8], m: M, first: u8) -> Option<()> {
        let c = self.c(m);
        let ok = match first {
            b't' => c == b't' || c == b'f',
            _ => c == first,
        };
        if !ok {
            return None;
        }
        self.key(w, name);
        self.copy(m);
        Some(())
    }

    fn put_opt(&mut self, w: &mut W, name: &[u8], m: Option<M>, first: u8) -> Option<()> {
        match m {
            Some(m) => self.put(w, name, m, first),
            None => Some(()),
        }
    }

    /// A string member with a default (`""`) when absent.
    fn put_str_or_empty(&mut self, w: &mut W, name: &[u8], m: Option<M>) -> Option<()> {
        match m {
            Some(m) => self.put(w, name, m, b'"'),
            None => {
                self.key(w, name);
                self.out.extend_from_slice(b"\"\"");
                Some(())
            }
        }
    }

    /// The start of the first element of the array at `m` (`None`: empty).
    fn arr_first(&mut self, m: M) -> Option<Option<usize>> {
        let i = m.vs as usize;
        if self.lx.at(i)? != b'[' {
            return None;
        }
        let j = self.lx.skip_ws(i + 1);
        Some((self.lx.at(j)? != b']').then_some(j))
    }

    /// The start of the element after the one starting at `s` (`None`: no more).
    fn arr_next(&mut self, s: usize) -> Option<Option<usize>> {
        let e = self.end(s);
        let j = self.lx.skip_ws(e);
        match self.lx.at(j)? {
            b',' => Some(Some(self.lx.skip_ws(j + 1))),
            b']' => Some(None),
            _ => None,
        }
    }

    /// Checks an array of strings.
    fn strings(&mut self, m: M, _depth: u32) -> Option<()> {
        let mut cur = self.arr_first(m)?;
        while let Some(s) = cur {
            if self.lx.at(s)? != b'"' {
                return None;
            }
            cur = self.arr_next(s)?;
        }
        Some(())
    }

    /// An array of strings member, copied.
    fn put_strings(&mut self, w: &mut W, name: &[u8], m: M, depth: u32) -> Option<()> {
        self.strings(m, depth)?;
        self.put(w, name, m, b'[')
    }

    fn put_strings_opt(&mut self, w: &mut W, name: &[u8], m: Option<M>, d: u32) -> Option<()> {
        match m {
            Some(m) => self.put_strings(w, name, m, d),
            None => Some(()),
        }
    }

    fn put_strings_or_empty(&mut self, w: &mut W, name: &[u8], m: Option<M>, d: u32) -> Option<()> {
        match m {
            Some(m) => self.put_strings(w, name, m, d),
            None => {
                self.key(w, name);
                self.out.extend_from_slice(b"[]");
                Some(())
            }
        }
    }

    /// Copies the members of `o` named in `extras` (in input order).
    fn put_extras(&mut self, w: &mut W, o: &Obj, extras: u64) {
        for k in 0..o.e - o.s {
            if extras & (1 << k) != 0 {
                let m = self.stack[o.s + k];
                let name = self.name(m);
                self.key(w, name);
                self.copy(m);
            }
        }
    }

    /// An array member whose elements `f` translates.
    fn put_array(
        &mut self,
        w: &mut W,
        name: &[u8],
        m: M,
        depth: u32,
        f: fn(&mut Self, usize, u32) -> Option<()>,
    ) -> Option<()> {
        let mut cur = self.arr_first(m)?;
        self.key(w, name);
        self.out.push(b'[');
        let mut first = true;
        while let Some(s) = cur {
            if !first {
                self.out.push(b',');
            }
            first = false;
            f(self, s, depth + 1)?;
            cur = self.arr_next(s)?;
        }
        self.out.push(b']');
        Some(())
    }

    /// A map member sorted by name (a `BTreeMap` in the typed path), each
    /// value written by `f`.
    fn put_sorted(
        &mut self,
        w: &mut W,
        name: Option<&[u8]>,
        i: usize,
        depth: u32,
        f: fn(&mut Self, M, u32) -> Option<()>,
    ) -> Option<()> {
        let o = self.scan(i, depth)?;
        let mut ms: Vec<M> = self.mems(&o).to_vec();
        if ms.iter().any(|m| self.name(*m).contains(&b'\\')) {
            return None;
        }
        let b = self.b();
        ms.sort_unstable_by(|x, y| {
            b[x.ks as usize..x.ke as usize].cmp(&b[y.ks as usize..y.ke as usize])
        });
        if let Some(name) = name {
            self.key(w, name);
        }
        self.out.push(b'{');
        let mut inner = W::new();
        for m in ms {
            let n = self.name(m);
            self.key(&mut inner, n);
            f(self, m, depth + 1)?;
        }
        self.out.push(b'}');
        Some(())
    }

    /// A map of strings (OAuth scopes), sorted.
    fn put_scopes(&mut self, w: &mut W, m: Option<M>, depth: u32) -> Option<()> {
        match m {
            None => {
                self.key(w, b"scopes");
                self.out.extend_from_slice(b"{}");
                Some(())
            }
            Some(m) => self.put_sorted(w, Some(b"scopes"), m.vs as usize, depth, |cx, v, _| {
                (cx.c(v) == b'"').then(|| cx.copy(v))
            }),
        }
    }

    /// Checks `signatures` (dropped both ways); `protected` and `signature`
    /// are required in v0.3 input (`need`).
    fn signatures(&mut self, m: M, depth: u32, need: bool) -> Option<()> {
        for (s, _) in self.elems(m, depth)? {
            let o = self.scan(s, depth + 1)?;
            let mut found = 0;
            for m in self.mems(&o) {
                let ok = match self.name(*m) {
                    b"protected" | b"signature" => {
                        found += 1;
                        self.c(*m) == b'"'
                    }
                    b"header" => self.c(*m) == b'{',
                    _ => true,
                };
                if !ok {
                    return None;
                }
            }
            if need && found != 2 {
                return None;
            }
        }
        Some(())
    }

    /// An extension declaration (same members in both versions); `uri`
    /// is required in v0.3 input.
    fn extension(&mut self, i: usize, depth: u32, need_uri: bool) -> Option<()> {
        let o = self.scan(i, depth)?;
        let (mut uri, mut desc, mut req, mut params) = (None, None, None, None);
        let mut extras = 0u64;
        for (k, m) in self.mems(&o).iter().enumerate() {
            match self.name(*m) {
                b"uri" => uri = Some(*m),
                b"description" => desc = Some(*m),
                b"required" => req = Some(*m),
                b"params" => params = Some(*m),
                _ => extras |= 1 << k,
            }
        }
        if need_uri && uri.is_none() {
            return None;
        }
        let mut w = W::new();
        self.out.push(b'{');
        self.put_str_or_empty(&mut w, b"uri", uri)?;
        self.put_opt(&mut w, b"description", desc, b'"')?;
        self.put_opt(&mut w, b"required", req, b't')?;
        self.put_opt(&mut w, b"params", params, b'{')?;
        self.put_extras(&mut w, &o, extras);
        self.out.push(b'}');
        Some(())
    }

    fn extension_v03(&mut self, i: usize, depth: u32) -> Option<()> {
        self.extension(i, depth, true)
    }

    fn extension_v10(&mut self, i: usize, depth: u32) -> Option<()> {
        self.extension(i, depth, false)
    }

    /// The provider: `organization` and `url` swap places; unknown members
    /// all cross.
    fn provider(&mut self, w: &mut W, m: M, depth: u32, to: Version) -> Option<()> {
        let o = self.scan(m.vs as usize, depth)?;
        let (mut org, mut url) = (None, None);
        let mut extras = 0u64;
        for (k, m) in self.mems(&o).iter().enumerate() {
            match self.name(*m) {
                b"organization" => org = Some(*m),
                b"url" => url = Some(*m),
                _ => extras |= 1 << k,
            }
        }
        self.key(w, b"provider");
        self.out.push(b'{');
        let mut pw = W::new();
        match to {
            Version::V10 => {
                self.put(&mut pw, b"url", url?, b'"')?;
                self.put(&mut pw, b"organization", org?, b'"')?;
            }
            Version::V03 => {
                self.put_str_or_empty(&mut pw, b"organization", org)?;
                self.put_str_or_empty(&mut pw, b"url", url)?;
            }
        }
        self.put_extras(&mut pw, &o, extras);
        self.out.push(b'}');
        Some(())
    }
}

// ------------------------------------------------------------ v0.3 -> v1.0 --

impl Cx<'_> {
    fn card_to_v10(&mut self, i: usize) -> Option<()> {
        let o = self.scan(i, 0)?;
        let mut f: [Option<M>; 20] = [None; 20];
        let mut extras = 0u64;
        const NAMES: [&[u8]; 20] = [
            b"protocolVersion",
            b"name",
            b"description",
            b"url",
            b"preferredTransport",
            b"additionalInterfaces",
            b"iconUrl",
            b"provider",
            b"version",
            b"documentationUrl",
            b"capabilities",
            b"securitySchemes",
            b"security",
            b"defaultInputModes",
            b"defaultOutputModes",
            b"skills",
            b"supportsAuthenticatedExtendedCard",
            b"supportsExtendedAgentCard",
            b"signatures",
            b"",
        ];
        for (k, m) in self.mems(&o).iter().enumerate() {
            let name = self.name(*m);
            if let Some(p) = NAMES[..19].iter().position(|n| *n == name) {
                f[p] = Some(*m);
            } else if !CARD_KEYS.contains(&name) {
                extras |= 1 << k;
            }
        }
        let [pv, name, desc, url, transport, additional, icon, provider, version, doc, caps, schemes, security, din, dout, skills, sae, sea, sigs, _] =
            f;
        if let Some(pv) = pv {
            self.plain_or_str(pv)?;
        }
        for flag in [sae, sea].into_iter().flatten() {
            if !matches!(self.c(flag), b't' | b'f') {
                return None;
            }
        }
        if let Some(s) = sigs {
            self.signatures(s, 1, true)?;
        }
        let mut w = W::new();
        self.out.push(b'{');
        self.put(&mut w, b"name", name?, b'"')?;
        self.put(&mut w, b"description", desc?, b'"')?;
        self.interfaces_to_v10(&mut w, url?, transport, additional)?;
        if let Some(p) = provider {
            self.provider(&mut w, p, 1, Version::V10)?;
        }
        self.put(&mut w, b"version", version?, b'"')?;
        self.put_opt(&mut w, b"documentationUrl", doc, b'"')?;
        let flag = |m: Option<M>, cx: &Self| m.map(|m| cx.c(m) == b't');
        let card_flags = [flag(sae, self), flag(sea, self)];
        self.capabilities_to_v10(&mut w, caps?, card_flags)?;
        if let Some(s) = schemes {
            self.put_sorted(
                &mut w,
                Some(b"securitySchemes"),
                s.vs as usize,
                1,
                |cx, v, d| cx.scheme_to_v10(v, d),
            )?;
        }
        if let Some(s) = security {
            self.put_array(
                &mut w,
                b"securityRequirements",
                s,
                1,
                Self::requirement_to_v10,
            )?;
        }
        self.put_strings(&mut w, b"defaultInputModes", din?, 1)?;
        self.put_strings(&mut w, b"defaultOutputModes", dout?, 1)?;
        self.put_array(&mut w, b"skills", skills?, 1, Self::skill_to_v10)?;
        self.put_opt(&mut w, b"iconUrl", icon, b'"')?;
        self.put_extras(&mut w, &o, extras);
        self.out.push(b'}');
        Some(())
    }

    /// Checks a string value.
    fn plain_or_str(&self, m: M) -> Option<()> {
        (self.c(m) == b'"').then_some(())
    }

    fn interfaces_to_v10(
        &mut self,
        w: &mut W,
        url: M,
        transport: Option<M>,
        additional: Option<M>,
    ) -> Option<()> {
        let url = self.plain(url)?;
        let transport: &[u8] = match transport {
            Some(t) => self.plain(t)?,
            None => crate::agent_card::DEFAULT_TRANSPORT.as_bytes(),
        };
        // (url, transport, the object, its members that cross)
        let mut more: Vec<Iface> = Vec::new();
        if let Some(a) = additional {
            for (s, _) in self.elems(a, 1)? {
                let o = self.scan(s, 2)?;
                let (mut u, mut t) = (None, None);
                let mut extras = 0u64;
                for (k, m) in self.mems(&o).iter().enumerate() {
                    match self.name(*m) {
                        b"url" => u = Some(self.plain(*m)?),
                        b"transport" => t = Some(self.plain(*m)?),
                        n if INTERFACE_KEYS.contains(&n) => {}
                        _ => extras |= 1 << k,
                    }
                }
                more.push((u?, t?, o, extras));
            }
        }
        // The primary takes the unknown members of its first repetition.
        let primary = match more.iter().position(|i| i.0 == url && i.1 == transport) {
            Some(pos) => more.remove(pos),
            None => (url, transport, Obj { s: 0, e: 0 }, 0),
        };
        let mut list: Vec<Iface> = vec![primary];
        for i in more {
            if !list.iter().any(|l| l.0 == i.0 && l.1 == i.1) {
                list.push(i);
            }
        }
        self.key(w, b"supportedInterfaces");
        self.out.push(b'[');
        for (n, (u, t, o, extras)) in list.into_iter().enumerate() {
            if n > 0 {
                self.out.push(b',');
            }
            self.out.extend_from_slice(b"{\"url\":\"");
            self.out.extend_from_slice(u);
            self.out.extend_from_slice(b"\",\"protocolBinding\":\"");
            self.out.extend_from_slice(t);
            self.out
                .extend_from_slice(b"\",\"protocolVersion\":\"0.3\"");
            self.put_extras(&mut W { first: false }, &o, extras);
            self.out.push(b'}');
        }
        self.out.push(b']');
        Some(())
    }

    fn capabilities_to_v10(
        &mut self,
        w: &mut W,
        m: M,
        card_flags: [Option<bool>; 2],
    ) -> Option<()> {
        let o = self.scan(m.vs as usize, 1)?;
        let (mut streaming, mut push, mut ext, mut hybrid) = (None, None, None, None);
        let mut extras = 0u64;
        for (k, m) in self.mems(&o).iter().enumerate() {
            match self.name(*m) {
                b"streaming" => streaming = Some(*m),
                b"pushNotifications" => push = Some(*m),
                b"stateTransitionHistory" => {
                    if !matches!(self.c(*m), b't' | b'f') {
                        return None;
                    }
                }
                b"extensions" => ext = Some(*m),
                b"extendedAgentCard" => {
                    hybrid = match self.c(*m) {
                        b't' => Some(true),
                        b'f' => Some(false),
                        _ => None,
                    }
                }
                n if CAPABILITY_KEYS.contains(&n) => {}
                _ => extras |= 1 << k,
            }
        }
        let flags = [card_flags[0], card_flags[1], hybrid];
        let extended = if flags.contains(&Some(true)) {
            Some(true)
        } else if flags.contains(&Some(false)) {
            Some(false)
        } else {
            None
        };
        self.key(w, b"capabilities");
        self.out.push(b'{');
        let mut cw = W::new();
        self.put_opt(&mut cw, b"streaming", streaming, b't')?;
        self.put_opt(&mut cw, b"pushNotifications", push, b't')?;
        if let Some(e) = ext {
            self.put_array(&mut cw, b"extensions", e, 2, Self::extension_v03)?;
        }
        if let Some(x) = extended {
            self.key(&mut cw, b"extendedAgentCard");
            self.out
                .extend_from_slice(if x { b"true" } else { b"false" });
        }
        self.put_extras(&mut cw, &o, extras);
        self.out.push(b'}');
        Some(())
    }

    /// `{name: [scopes]}` -> `{"schemes": {name: {"list": [scopes]}}}`.
    fn requirement_to_v10(&mut self, i: usize, depth: u32) -> Option<()> {
        let mut w = W::new();
        self.out.push(b'{');
        let o = self.scan(i, depth)?;
        if self.mems(&o).iter().any(|m| self.name(*m) == b"schemes") {
            return None;
        }
        self.put_sorted(&mut w, Some(b"schemes"), i, depth, |cx, v, d| {
            cx.strings(v, d)?;
            cx.out.extend_from_slice(b"{\"list\":");
            cx.copy(v);
            cx.out.push(b'}');
            Some(())
        })?;
        self.out.push(b'}');
        Some(())
    }

    fn skill_to_v10(&mut self, i: usize, depth: u32) -> Option<()> {
        let o = self.scan(i, depth)?;
        let mut f: [Option<M>; 8] = [None; 8];
        let mut extras = 0u64;
        const NAMES: [&[u8]; 8] = [
            b"id",
            b"name",
            b"description",
            b"tags",
            b"examples",
            b"inputModes",
            b"outputModes",
            b"security",
        ];
        for (k, m) in self.mems(&o).iter().enumerate() {
            let name = self.name(*m);
            if let Some(p) = NAMES.iter().position(|n| *n == name) {
                f[p] = Some(*m);
            } else if !SKILL_KEYS.contains(&name) {
                extras |= 1 << k;
            }
        }
        let [id, name, desc, tags, examples, inm, outm, security] = f;
        let mut w = W::new();
        self.out.push(b'{');
        self.put(&mut w, b"id", id?, b'"')?;
        self.put(&mut w, b"name", name?, b'"')?;
        self.put(&mut w, b"description", desc?, b'"')?;
        self.put_strings(&mut w, b"tags", tags?, depth + 1)?;
        self.put_strings_opt(&mut w, b"examples", examples, depth + 1)?;
        self.put_strings_opt(&mut w, b"inputModes", inm, depth + 1)?;
        self.put_strings_opt(&mut w, b"outputModes", outm, depth + 1)?;
        if let Some(s) = security {
            self.put_array(
                &mut w,
                b"securityRequirements",
                s,
                depth + 1,
                Self::requirement_to_v10,
            )?;
        }
        self.put_extras(&mut w, &o, extras);
        self.out.push(b'}');
        Some(())
    }

    /// A `type`-tagged scheme -> `{"<oneof member>": {...}}`.
    fn scheme_to_v10(&mut self, v: M, depth: u32) -> Option<()> {
        let o = self.scan(v.vs as usize, depth)?;
        let get = |cx: &Self, n: &[u8]| cx.mems(&o).iter().copied().find(|m| cx.name(*m) == n);
        let ty = self.plain(get(self, b"type")?)?;
        let (member, fields): (&[u8], &[&[u8]]) = match ty {
            b"apiKey" => (b"apiKeySecurityScheme", &[b"description", b"in", b"name"]),
            b"http" => (
                b"httpAuthSecurityScheme",
                &[b"description", b"scheme", b"bearerFormat"],
            ),
            b"oauth2" => (
                b"oauth2SecurityScheme",
                &[b"description", b"flows", b"oauth2MetadataUrl"],
            ),
            b"openIdConnect" => (
                b"openIdConnectSecurityScheme",
                &[b"description", b"openIdConnectUrl"],
            ),
            b"mutualTLS" => (b"mtlsSecurityScheme", &[b"description"]),
            _ => return None,
        };
        // Unknown members cross in the order the typed path leaves them: it
        // takes `type` out of the member map by swapping the last member
        // into its place.
        let n = o.e - o.s;
        let mut order: Vec<usize> = (0..n).collect();
        let t = self
            .mems(&o)
            .iter()
            .position(|m| self.name(*m) == b"type")?;
        order.swap_remove(t);
        let extras: Vec<M> = order
            .into_iter()
            .map(|k| self.stack[o.s + k])
            .filter(|m| {
                let n = self.name(*m);
                !fields.contains(&n) && !SCHEME_KEYS.contains(&n)
            })
            .collect();
        let desc = get(self, b"description");
        self.out.extend_from_slice(b"{\"");
        self.out.extend_from_slice(member);
        self.out.extend_from_slice(b"\":{");
        let mut w = W::new();
        self.put_opt(&mut w, b"description", desc, b'"')?;
        match ty {
            b"apiKey" => {
                let loc = self.plain(get(self, b"in")?)?;
                if !matches!(loc, b"cookie" | b"header" | b"query") {
                    return None;
                }
                self.put(&mut w, b"location", get(self, b"in")?, b'"')?;
                self.put(&mut w, b"name", get(self, b"name")?, b'"')?;
            }
            b"http" => {
                self.put(&mut w, b"scheme", get(self, b"scheme")?, b'"')?;
                self.put_opt(&mut w, b"bearerFormat", get(self, b"bearerFormat"), b'"')?;
            }
            b"oauth2" => {
                self.key(&mut w, b"flows");
                self.flows_to_v10(get(self, b"flows")?, depth + 1)?;
                let meta = get(self, b"oauth2MetadataUrl");
                self.put_opt(&mut w, b"oauth2MetadataUrl", meta, b'"')?;
            }
            b"openIdConnect" => {
                let url = get(self, b"openIdConnectUrl")?;
                self.put(&mut w, b"openIdConnectUrl", url, b'"')?;
            }
            _ => {}
        }
        for m in extras {
            let name = self.name(m);
            self.key(&mut w, name);
            self.copy(m);
        }
        self.out.extend_from_slice(b"}}");
        Some(())
    }

    /// v0.3 flows (any subset) -> the v1.0 oneof (the first by precedence).
    fn flows_to_v10(&mut self, v: M, depth: u32) -> Option<()> {
        let o = self.scan(v.vs as usize, depth)?;
        const ORDER: [&[u8]; 4] = [
            b"authorizationCode",
            b"clientCredentials",
            b"implicit",
            b"password",
        ];
        let mut flows: [Option<M>; 4] = [None; 4];
        let mut extras = 0u64;
        for (k, m) in self.mems(&o).iter().enumerate() {
            let n = self.name(*m);
            if let Some(p) = ORDER.iter().position(|x| *x == n) {
                flows[p] = Some(*m);
            } else if !FLOWS_KEYS.contains(&n) {
                extras |= 1 << k;
            }
        }
        let mut w = W::new();
        self.out.push(b'{');
        let mut chosen = false;
        for (p, f) in flows.into_iter().enumerate() {
            let Some(f) = f else { continue };
            let mark = self.out.len();
            if !chosen {
                self.key(&mut w, ORDER[p]);
            }
            self.flow(f, p, depth + 1, Version::V10)?;
            if chosen {
                // Checked like the typed path, then dropped.
                self.out.truncate(mark);
            }
            chosen = true;
        }
        self.put_extras(&mut w, &o, extras);
        self.out.push(b'}');
        Some(())
    }

    /// One OAuth flow of kind `p` (index in authorizationCode,
    /// clientCredentials, implicit, password, deviceCode), read from the
    /// other version of `to` and written in `to`.
    fn flow(&mut self, v: M, p: usize, depth: u32, to: Version) -> Option<()> {
        let o = self.scan(v.vs as usize, depth)?;
        let (mut auth, mut token, mut refresh, mut scopes) = (None, None, None, None);
        let mut extras = 0u64;
        for (k, m) in self.mems(&o).iter().enumerate() {
            let n = self.name(*m);
            match n {
                b"authorizationUrl" if matches!(p, 0 | 2) => auth = Some(*m),
                b"deviceAuthorizationUrl" if p == 4 => auth = Some(*m),
                b"tokenUrl" if p != 2 => token = Some(*m),
                b"refreshUrl" => refresh = Some(*m),
                b"scopes" => scopes = Some(*m),
                b"pkceRequired" if p == 0 && to == Version::V03 => {
                    if !matches!(self.c(*m), b't' | b'f') {
                        return None;
                    }
                }
                _ if to == Version::V03 && V10_ALIASES.contains(&n) => return None,
                _ if FLOW_KEYS.contains(&n) => {}
                _ => extras |= 1 << k,
            }
        }
        let mut w = W::new();
        self.out.push(b'{');
        if matches!(p, 0 | 2 | 4) {
            let name: &[u8] = if p == 4 {
                b"deviceAuthorizationUrl"
            } else {
                b"authorizationUrl"
            };
            match to {
                Version::V10 => self.put(&mut w, name, auth?, b'"')?,
                Version::V03 => self.put_str_or_empty(&mut w, name, auth)?,
            }
        }
        if p != 2 {
            match to {
                Version::V10 => self.put(&mut w, b"tokenUrl", token?, b'"')?,
                Version::V03 => self.put_str_or_empty(&mut w, b"tokenUrl", token)?,
            }
        }
        self.put_opt(&mut w, b"refreshUrl", refresh, b'"')?;
        self.put_scopes(&mut w, scopes, depth + 1)?;
        self.put_extras(&mut w, &o, extras);
        self.out.push(b'}');
        Some(())
    }
}

// ------------------------------------------------------------ v1.0 -> v0.3 --

impl Cx<'_> {
    fn card_to_v03(&mut self, i: usize) -> Option<()> {
        let o = self.scan(i, 0)?;
        let mut f: [Option<M>; 14] = [None; 14];
        let mut extras = 0u64;
        const NAMES: [&[u8]; 14] = [
            b"name",
            b"description",
            b"supportedInterfaces",
            b"provider",
            b"version",
            b"documentationUrl",
            b"capabilities",
            b"securitySchemes",
            b"securityRequirements",
            b"defaultInputModes",
            b"defaultOutputModes",
            b"skills",
            b"signatures",
            b"iconUrl",
        ];
        for (k, m) in self.mems(&o).iter().enumerate() {
            let name = self.name(*m);
            if let Some(p) = NAMES.iter().position(|n| *n == name) {
                f[p] = Some(*m);
            } else if V10_ALIASES.contains(&name) {
                return None;
            } else if !CARD_KEYS.contains(&name) {
                extras |= 1 << k;
            }
        }
        let [name, desc, ifaces, provider, version, doc, caps, schemes, security, din, dout, skills, sigs, icon] =
            f;
        if let Some(s) = sigs {
            self.signatures(s, 1, false)?;
        }
        let mut w = W::new();
        self.out.push(b'{');
        self.key(&mut w, b"protocolVersion");
        self.out.extend_from_slice(b"\"");
        self.out
            .extend_from_slice(crate::agent_card::V03_PROTOCOL_VERSION.as_bytes());
        self.out.extend_from_slice(b"\"");
        self.put_str_or_empty(&mut w, b"name", name)?;
        self.put_str_or_empty(&mut w, b"description", desc)?;
        self.interfaces_to_v03(&mut w, ifaces?)?;
        self.put_opt(&mut w, b"iconUrl", icon, b'"')?;
        if let Some(p) = provider {
            self.provider(&mut w, p, 1, Version::V03)?;
        }
        self.put_str_or_empty(&mut w, b"version", version)?;
        self.put_opt(&mut w, b"documentationUrl", doc, b'"')?;
        let extended = match caps {
            Some(c) => self.capabilities_to_v03(&mut w, c)?,
            None => {
                self.key(&mut w, b"capabilities");
                self.out.extend_from_slice(b"{}");
                None
            }
        };
        if let Some(s) = schemes {
            self.put_sorted(
                &mut w,
                Some(b"securitySchemes"),
                s.vs as usize,
                1,
                |cx, v, d| cx.scheme_to_v03(v, d),
            )?;
        }
        if let Some(s) = security {
            self.put_array(&mut w, b"security", s, 1, Self::requirement_to_v03)?;
        }
        self.put_strings_or_empty(&mut w, b"defaultInputModes", din, 1)?;
        self.put_strings_or_empty(&mut w, b"defaultOutputModes", dout, 1)?;
        match skills {
            Some(s) => self.put_array(&mut w, b"skills", s, 1, Self::skill_to_v03)?,
            None => {
                self.key(&mut w, b"skills");
                self.out.extend_from_slice(b"[]");
            }
        }
        if let Some(x) = extended {
            self.key(&mut w, b"supportsAuthenticatedExtendedCard");
            self.out
                .extend_from_slice(if x { b"true" } else { b"false" });
        }
        self.put_extras(&mut w, &o, extras);
        self.out.push(b'}');
        Some(())
    }

    fn interfaces_to_v03(&mut self, w: &mut W, m: M) -> Option<()> {
        // (url, binding, speaks v0.3, the object, its members that cross)
        let mut all: Vec<(Iface, bool)> = Vec::new();
        for (s, _) in self.elems(m, 1)? {
            let o = self.scan(s, 2)?;
            let (mut u, mut t, mut pv): (&[u8], &[u8], &[u8]) = (b"", b"", b"");
            let mut extras = 0u64;
            for (k, m) in self.mems(&o).iter().enumerate() {
                match self.name(*m) {
                    b"url" => u = self.plain(*m)?,
                    b"protocolBinding" => t = self.plain(*m)?,
                    b"protocolVersion" => pv = self.plain(*m)?,
                    b"tenant" => self.plain_or_str(*m)?,
                    b"protocol_binding" | b"protocol_version" => return None,
                    n if INTERFACE_KEYS.contains(&n) => {}
                    _ => extras |= 1 << k,
                }
            }
            let pv = std::str::from_utf8(pv).ok()?.trim();
            let speaks = pv.is_empty() || Version::from_header(Some(pv)) == Ok(Version::V03);
            all.push(((u, t, o, extras), speaks));
        }
        let any = all.iter().any(|i| i.1);
        let mut list: Vec<Iface> = Vec::with_capacity(all.len());
        for (i, speaks) in all {
            if (speaks || !any) && !list.iter().any(|l| l.0 == i.0 && l.1 == i.1) {
                list.push(i);
            }
        }
        let &(pu, pt, _, _) = list.first()?;
        for (name, v) in [(&b"url"[..], pu), (b"preferredTransport", pt)] {
            self.key(w, name);
            self.out.push(b'"');
            self.out.extend_from_slice(v);
            self.out.push(b'"');
        }
        self.key(w, b"additionalInterfaces");
        self.out.push(b'[');
        for (n, (u, t, o, extras)) in list.into_iter().enumerate() {
            if n > 0 {
                self.out.push(b',');
            }
            self.out.extend_from_slice(b"{\"url\":\"");
            self.out.extend_from_slice(u);
            self.out.extend_from_slice(b"\",\"transport\":\"");
            self.out.extend_from_slice(t);
            self.out.push(b'"');
            self.put_extras(&mut W { first: false }, &o, extras);
            self.out.push(b'}');
        }
        self.out.push(b']');
        Some(())
    }

    /// Writes the v0.3 capabilities; returns `extendedAgentCard`.
    fn capabilities_to_v03(&mut self, w: &mut W, m: M) -> Option<Option<bool>> {
        let o = self.scan(m.vs as usize, 1)?;
        let (mut streaming, mut push, mut ext, mut extended) = (None, None, None, None);
        let mut extras = 0u64;
        for (k, m) in self.mems(&o).iter().enumerate() {
            match self.name(*m) {
                b"streaming" => streaming = Some(*m),
                b"pushNotifications" => push = Some(*m),
                b"extensions" => ext = Some(*m),
                b"extendedAgentCard" => {
                    extended = Some(match self.c(*m) {
                        b't' => true,
                        b'f' => false,
                        _ => return None,
                    })
                }
                b"push_notifications" | b"extended_agent_card" => return None,
                n if CAPABILITY_KEYS.contains(&n) => {}
                _ => extras |= 1 << k,
            }
        }
        self.key(w, b"capabilities");
        self.out.push(b'{');
        let mut cw = W::new();
        self.put_opt(&mut cw, b"streaming", streaming, b't')?;
        self.put_opt(&mut cw, b"pushNotifications", push, b't')?;
        if let Some(e) = ext {
            self.put_array(&mut cw, b"extensions", e, 2, Self::extension_v10)?;
        }
        self.put_extras(&mut cw, &o, extras);
        self.out.push(b'}');
        Some(extended)
    }

    /// `{"schemes": {name: {"list": [scopes]}}}` -> `{name: [scopes]}`.
    fn requirement_to_v03(&mut self, i: usize, depth: u32) -> Option<()> {
        let o = self.scan(i, depth)?;
        let schemes = self
            .mems(&o)
            .iter()
            .copied()
            .find(|m| self.name(*m) == b"schemes");
        let Some(s) = schemes else {
            self.out.extend_from_slice(b"{}");
            return Some(());
        };
        let mut w = W::new();
        self.put_sorted(&mut w, None, s.vs as usize, depth + 1, |cx, v, d| {
            let o = cx.scan(v.vs as usize, d)?;
            let list = cx.mems(&o).iter().copied().find(|m| cx.name(*m) == b"list");
            match list {
                Some(l) => {
                    cx.strings(l, d + 1)?;
                    cx.copy(l);
                }
                None => cx.out.extend_from_slice(b"[]"),
            }
            Some(())
        })
    }

    fn skill_to_v03(&mut self, i: usize, depth: u32) -> Option<()> {
        let o = self.scan(i, depth)?;
        let mut f: [Option<M>; 8] = [None; 8];
        let mut extras = 0u64;
        const NAMES: [&[u8]; 8] = [
            b"id",
            b"name",
            b"description",
            b"tags",
            b"examples",
            b"inputModes",
            b"outputModes",
            b"securityRequirements",
        ];
        for (k, m) in self.mems(&o).iter().enumerate() {
            let name = self.name(*m);
            if let Some(p) = NAMES.iter().position(|n| *n == name) {
                f[p] = Some(*m);
            } else if V10_ALIASES.contains(&name) {
                return None;
            } else if !SKILL_KEYS.contains(&name) {
                extras |= 1 << k;
            }
        }
        let [id, name, desc, tags, examples, inm, outm, security] = f;
        let mut w = W::new();
        self.out.push(b'{');
        self.put_str_or_empty(&mut w, b"id", id)?;
        self.put_str_or_empty(&mut w, b"name", name)?;
        self.put_str_or_empty(&mut w, b"description", desc)?;
        self.put_strings_or_empty(&mut w, b"tags", tags, depth + 1)?;
        self.put_strings_opt(&mut w, b"examples", examples, depth + 1)?;
        self.put_strings_opt(&mut w, b"inputModes", inm, depth + 1)?;
        self.put_strings_opt(&mut w, b"outputModes", outm, depth + 1)?;
        if let Some(s) = security {
            self.put_array(&mut w, b"security", s, depth + 1, Self::requirement_to_v03)?;
        }
        self.put_extras(&mut w, &o, extras);
        self.out.push(b'}');
        Some(())
    }

    /// `{"<oneof member>": {...}}` -> a `type`-tagged scheme.
    fn scheme_to_v03(&mut self, v: M, depth: u32) -> Option<()> {
        let o = self.scan(v.vs as usize, depth)?;
        // Exactly the oneof member: anything beside it would be merged in an
        // order this pass does not reproduce.
        let &[m] = self.mems(&o) else {
            return None;
        };
        let (ty, fields): (&[u8], &[&[u8]]) = match self.name(m) {
            b"apiKeySecurityScheme" => (b"apiKey", &[b"description", b"location", b"name"]),
            b"httpAuthSecurityScheme" => (b"http", &[b"description", b"scheme", b"bearerFormat"]),
            b"oauth2SecurityScheme" => {
                (b"oauth2", &[b"description", b"flows", b"oauth2MetadataUrl"])
            }
            b"openIdConnectSecurityScheme" => {
                (b"openIdConnect", &[b"description", b"openIdConnectUrl"])
            }
            b"mtlsSecurityScheme" => (b"mutualTLS", &[b"description"]),
            _ => return None,
        };
        let inner = self.scan(m.vs as usize, depth + 1)?;
        let mut got: [Option<M>; 3] = [None; 3];
        let mut extras = 0u64;
        for (k, x) in self.mems(&inner).iter().enumerate() {
            let n = self.name(*x);
            if let Some(p) = fields.iter().position(|f| *f == n) {
                got[p] = Some(*x);
            } else if V10_ALIASES.contains(&n) {
                return None;
            } else if !SCHEME_KEYS.contains(&n) {
                extras |= 1 << k;
            }
        }
        let mut w = W::new();
        self.out.extend_from_slice(b"{\"type\":\"");
        self.out.extend_from_slice(ty);
        self.out.push(b'"');
        w.first = false;
        self.put_opt(&mut w, b"description", got[0], b'"')?;
        match ty {
            b"apiKey" => {
                let loc = match got[1] {
                    Some(l) => self.plain(l)?,
                    None => b"",
                };
                let loc: &[u8] = if loc.eq_ignore_ascii_case(b"query") {
                    b"query"
                } else if loc.eq_ignore_ascii_case(b"cookie") {
                    b"cookie"
                } else {
                    b"header"
                };
                self.key(&mut w, b"in");
                self.out.push(b'"');
                self.out.extend_from_slice(loc);
                self.out.push(b'"');
                self.put_str_or_empty(&mut w, b"name", got[2])?;
            }
            b"http" => {
                self.put_str_or_empty(&mut w, b"scheme", got[1])?;
                self.put_opt(&mut w, b"bearerFormat", got[2], b'"')?;
            }
            b"oauth2" => {
                self.key(&mut w, b"flows");
                match got[1] {
                    Some(f) => self.flows_to_v03(f, depth + 2)?,
                    None => self.out.extend_from_slice(b"{}"),
                }
                self.put_opt(&mut w, b"oauth2MetadataUrl", got[2], b'"')?;
            }
            b"openIdConnect" => {
                self.put_str_or_empty(&mut w, b"openIdConnectUrl", got[1])?;
            }
            _ => {}
        }
        self.put_extras(&mut w, &inner, extras);
        self.out.push(b'}');
        Some(())
    }

    /// The v1.0 oneof flow -> v0.3 flows (that one flow; `deviceCode`
    /// checked and dropped).
    fn flows_to_v03(&mut self, v: M, depth: u32) -> Option<()> {
        let o = self.scan(v.vs as usize, depth)?;
        const ORDER: [&[u8]; 5] = [
            b"authorizationCode",
            b"clientCredentials",
            b"implicit",
            b"password",
            b"deviceCode",
        ];
        // Only the flow member: anything beside it would be reordered.
        let f = match self.mems(&o) {
            [] => None,
            [m] => Some(*m),
            _ => return None,
        };
        self.out.push(b'{');
        if let Some(f) = f {
            let p = ORDER.iter().position(|x| *x == self.name(f))?;
            let mark = self.out.len();
            let mut w = W::new();
            self.key(&mut w, ORDER[p]);
            self.flow(f, p, depth + 1, Version::V03)?;
            if p == 4 {
                self.out.truncate(mark);
            }
        }
        self.out.push(b'}');
        Some(())
    }
}
