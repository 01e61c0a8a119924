//! The token layer of the transcoder: finds the end of a JSON value while
//! checking that the general path would render it back to the same bytes
//! (canonical strings and numbers, no repeated member names), and copies
//! such values to the output (whitespace dropped).

/// Nesting deeper than this is not taken (serde_json stops at 128).
pub(super) const MAX_DEPTH: u32 = 100;

/// Eight copies of byte `b`.
const fn splat(b: u8) -> u64 {
    (b as u64) * 0x0101_0101_0101_0101
}

/// The first of the eight bytes of `w` (little-endian: the byte at the
/// lowest address first) that is `"`, `\` or a control byte; 8 when none
/// is. Each of the three tests flags its first hit exactly (a borrow can
/// only flag bytes after a true hit), so the lowest flag of the three is
/// the first such byte.
#[inline]
fn special_at(w: u64) -> usize {
    const LO: u64 = splat(0x01);
    const HI: u64 = splat(0x80);
    let q = w ^ splat(b'"');
    let s = w ^ splat(b'\\');
    let zq = q.wrapping_sub(LO) & !q;
    let zs = s.wrapping_sub(LO) & !s;
    let ctl = w.wrapping_sub(splat(0x20)) & !w;
    ((zq | zs | ctl) & HI).trailing_zeros() as usize / 8
}

/// The eight bytes of `b` (eight long) as one little-endian word.
#[inline]
fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(b);
    u64::from_le_bytes(w)
}

/// The input being read, with the scratch state of the checks.
pub(super) struct Lex<'a> {
    pub(super) b: &'a [u8],
    /// Set when whitespace was skipped (reset around a copied value).
    pub(super) ws: bool,
    /// Member names of the open objects being checked for repeats.
    keys: Vec<(u32, u32)>,
}

impl<'a> Lex<'a> {
    pub(super) fn new(b: &'a [u8]) -> Self {
        Lex {
            b,
            ws: false,
            keys: Vec::new(),
        }
    }

    #[inline]
    pub(super) fn at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    /// The first position at or after `i` that is not whitespace.
    #[inline]
    pub(super) fn skip_ws(&mut self, mut i: usize) -> usize {
        while let Some(&c) = self.b.get(i) {
            if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.ws = true;
            i += 1;
        }
        i
    }

    /// The end (after the closing quote) of the string starting at `i`,
    /// when it is written as serde_json writes it: escapes only `\"`, `\\`,
    /// `\b`, `\f`, `\n`, `\r`, `\t`, no raw control bytes.
    #[inline(always)]
    pub(super) fn string_end(&self, i: usize) -> Option<usize> {
        // Most strings (member names, ids, enum values) close within their
        // first sixteen bytes: found here without a call.
        if let Some(w) = self.b.get(i..i + 17) {
            if w[0] == b'"' {
                let at = special_at(word(&w[1..9]));
                if at < 8 {
                    if w[1 + at] == b'"' {
                        return Some(i + 2 + at);
                    }
                } else {
                    let at = special_at(word(&w[9..17]));
                    if at < 8 && w[9 + at] == b'"' {
                        return Some(i + 10 + at);
                    }
                }
            }
        }
        self.scan_string::<false>(i)
    }

    /// As [`Lex::string_end`], for a string without escapes only.
    #[inline]
    pub(super) fn plain_string_end(&self, i: usize) -> Option<usize> {
        self.scan_string::<true>(i)
    }

    #[inline(never)]
    fn scan_string<const PLAIN: bool>(&self, i: usize) -> Option<usize> {
        let b = self.b;
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let mut j = i + 1;
        loop {
            // Eight bytes at a time; the last few one by one.
            loop {
                let Some(w) = b.get(j..j + 8) else {
                    while let Some(&c) = b.get(j) {
                        if c == b'"' || c == b'\\' || c < 0x20 {
                            break;
                        }
                        j += 1;
                    }
                    break;
                };
                let at = special_at(word(w));
                j += at;
                if at < 8 {
                    break;
                }
            }
            match b.get(j)? {
                b'"' => return Some(j + 1),
                b'\\' if PLAIN => return None,
                b'\\' => match b.get(j + 1)? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    /// The end of the number starting at `i`, when serde_json renders it
    /// back as written.
    fn number_end(&self, i: usize) -> Option<usize> {
        let b = self.b;
        let digit = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
        let mut j = i;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        match b.get(j)? {
            b'0' => j += 1,
            b'1'..=b'9' => {
                while digit(j) {
                    j += 1;
                }
            }
            _ => return None,
        }
        let int_end = j;
        let mut float = false;
        if b.get(j) == Some(&b'.') {
            j += 1;
            if !digit(j) {
                return None;
            }
            while digit(j) {
                j += 1;
            }
            float = true;
        }
        if matches!(b.get(j), Some(b'e' | b'E')) {
            j += 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if !digit(j) {
                return None;
            }
            while digit(j) {
                j += 1;
            }
            float = true;
        }
        let tok = &b[i..j];
        if !float && int_end - i <= 18 && tok != b"-0" {
            return Some(j);
        }
        // Anything else: as serde_json reads and writes it.
        let v: serde_json::Value = serde_json::from_slice(tok).ok()?;
        let again = serde_json::to_vec(&v).ok()?;
        (again == tok).then_some(j)
    }

    fn literal(&self, i: usize, word: &[u8]) -> Option<usize> {
        (self.b.get(i..i + word.len())? == word).then_some(i + word.len())
    }

    /// The end of the value starting at `i` (checked as described above).
    pub(super) fn skip(&mut self, i: usize, depth: u32) -> Option<usize> {
        match self.at(i)? {
            b'"' => self.string_end(i),
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let base = self.keys.len();
                let mut j = self.skip_ws(i + 1);
                if self.at(j)? == b'}' {
                    return Some(j + 1);
                }
                loop {
                    let ke = self.string_end(j)?;
                    self.keys.push((j as u32, ke as u32));
                    j = self.skip_ws(ke);
                    if self.at(j)? != b':' {
                        return None;
                    }
                    j = self.skip_ws(j + 1);
                    j = self.skip(j, depth + 1)?;
                    j = self.skip_ws(j);
                    match self.at(j)? {
                        b',' => j = self.skip_ws(j + 1),
                        b'}' => {
                            let unique = self.unique(base);
                            self.keys.truncate(base);
                            return unique.then_some(j + 1);
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let mut j = self.skip_ws(i + 1);
                if self.at(j)? == b']' {
                    return Some(j + 1);
                }
                loop {
                    j = self.skip(j, depth + 1)?;
                    j = self.skip_ws(j);
                    match self.at(j)? {
                        b',' => j = self.skip_ws(j + 1),
                        b']' => return Some(j + 1),
                        _ => return None,
                    }
                }
            }
            b't' => self.literal(i, b"true"),
            b'f' => self.literal(i, b"false"),
            b'n' => self.literal(i, b"null"),
            b'-' | b'0'..=b'9' => self.number_end(i),
            _ => None,
        }
    }

    /// As [`Lex::skip`], and records in `ends[s]` the end of every value
    /// and member name starting at `s` (so a later reader finds any value's
    /// end without reading it again). `ends` is as long as the input.
    pub(super) fn index(&mut self, i: usize, depth: u32, ends: &mut [u32]) -> Option<usize> {
        let e = match self.at(i)? {
            b'"' => self.string_end(i)?,
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let base = self.keys.len();
                let mut j = self.skip_ws(i + 1);
                if self.at(j)? == b'}' {
                    j + 1
                } else {
                    loop {
                        let ke = self.string_end(j)?;
                        *ends.get_mut(j)? = ke as u32;
                        self.keys.push((j as u32, ke as u32));
                        j = self.skip_ws(ke);
                        if self.at(j)? != b':' {
                            return None;
                        }
                        j = self.skip_ws(j + 1);
                        j = self.index(j, depth + 1, ends)?;
                        j = self.skip_ws(j);
                        match self.at(j)? {
                            b',' => j = self.skip_ws(j + 1),
                            b'}' => {
                                let unique = self.unique(base);
                                self.keys.truncate(base);
                                if !unique {
                                    return None;
                                }
                                break j + 1;
                            }
                            _ => return None,
                        }
                    }
                }
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let mut j = self.skip_ws(i + 1);
                if self.at(j)? == b']' {
                    j + 1
                } else {
                    loop {
                        j = self.index(j, depth + 1, ends)?;
                        j = self.skip_ws(j);
                        match self.at(j)? {
                            b',' => j = self.skip_ws(j + 1),
                            b']' => break j + 1,
                            _ => return None,
                        }
                    }
                }
            }
            b't' => self.literal(i, b"true")?,
            b'f' => self.literal(i, b"false")?,
            b'n' => self.literal(i, b"null")?,
            b'-' | b'0'..=b'9' => self.number_end(i)?,
            _ => return None,
        };
        *ends.get_mut(i)? = e as u32;
        Some(e)
    }

    /// Whether the member names pushed since `base` are all different
    /// (raw comparison is exact: only one spelling is accepted per name).
    fn unique(&self, base: usize) -> bool {
        let ks = &self.keys[base..];
        let name = |k: &(u32, u32)| &self.b[k.0 as usize..k.1 as usize];
        if ks.len() <= 16 {
            for (n, a) in ks.iter().enumerate() {
                for c in &ks[..n] {
                    if name(a) == name(c) {
                        return false;
                    }
                }
            }
            return true;
        }
        let mut names: Vec<&[u8]> = ks.iter().map(name).collect();
        names.sort_unstable();
        names.windows(2).all(|w| w[0] != w[1])
    }

    /// Copies `b[s..e]` to `out`, without whitespace outside strings when
    /// `ws` says there is some.
    pub(super) fn copy(&self, out: &mut Vec<u8>, s: usize, e: usize, ws: bool) {
        let src = &self.b[s..e];
        if !ws {
            out.extend_from_slice(src);
            return;
        }
        let mut in_str = false;
        let mut esc = false;
        for &c in src {
            if in_str {
                out.push(c);
                if esc {
                    esc = false;
                } else if c == b'\\' {
                    esc = true;
                } else if c == b'"' {
                    in_str = false;
                }
            } else if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                if c == b'"' {
                    in_str = true;
                }
                out.push(c);
            }
        }
    }

    /// Checks the value at `i` and copies it to `out`; returns its end.
    pub(super) fn copy_value(&mut self, out: &mut Vec<u8>, i: usize, depth: u32) -> Option<usize> {
        let saved = self.ws;
        self.ws = false;
        let e = self.skip(i, depth)?;
        let ws = self.ws;
        self.ws |= saved;
        self.copy(out, i, e, ws);
        Some(e)
    }
}

/// Whether `s` is standard base64 with padding, exactly as the encoder
/// writes it (so decoding and encoding again gives `s` back).
pub(super) fn canonical_base64(s: &[u8]) -> bool {
    if s.len() & 3 != 0 {
        return false;
    }
    let pad = s.iter().rev().take(2).take_while(|&&c| c == b'=').count();
    let body = &s[..s.len() - pad];
    let val = |c: u8| -> Option<u8> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    if !body.iter().all(|&c| val(c).is_some()) {
        return false;
    }
    match (pad, body.last()) {
        (0, _) | (_, None) => pad == 0,
        (1, Some(&c)) => val(c).is_some_and(|v| v & 0b11 == 0),
        (_, Some(&c)) => val(c).is_some_and(|v| v & 0b1111 == 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `string_end` as a byte-by-byte reader finds it.
    fn reference(b: &[u8], i: usize) -> Option<usize> {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let mut j = i + 1;
        loop {
            match *b.get(j)? {
                b'"' => return Some(j + 1),
                b'\\' => match b.get(j + 1)? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    _ => return None,
                },
                c if c < 0x20 => return None,
                _ => j += 1,
            }
        }
    }

    /// Every special byte at every position of strings up to 40 bytes long,
    /// with bytes that are close to the special ones (`!`, `#`, `[`, `]`,
    /// 0x20, 0x7f, 0x80, 0xff) around it: the word-wise search stops exactly
    /// where the byte-wise one does.
    #[test]
    fn string_end_is_the_bytewise_end() {
        let specials: [&[u8]; 9] = [
            b"\"", b"\\\"", b"\\n", b"\\u", b"\\", b"\x00", b"\x1f", b"\n", b"\\\\",
        ];
        let fillers = [b'a', b'!', b'#', b'[', b']', 0x20, 0x7f, 0x80, 0xff];
        for len in 0..40 {
            for at in 0..=len {
                for sp in specials {
                    for &f in &fillers {
                        let mut b = vec![b'"'];
                        b.extend(std::iter::repeat_n(f, at));
                        b.extend_from_slice(sp);
                        b.extend(std::iter::repeat_n(f, len - at));
                        for tail in [&b"\""[..], b"", b"x\"", b"\x01\""] {
                            let mut b = b.clone();
                            b.extend_from_slice(tail);
                            let lx = Lex::new(&b);
                            let want = reference(&b, 0);
                            assert_eq!(lx.string_end(0), want, "{b:?}");
                            let plain = want.filter(|&e| !b[..e].contains(&b'\\'));
                            assert_eq!(lx.plain_string_end(0), plain, "{b:?}");
                        }
                    }
                }
            }
        }
    }
}
