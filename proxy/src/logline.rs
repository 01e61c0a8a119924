//! Text log lines that a request cannot forge: every field value and
//! message is written with its control characters escaped.
//!
//! Log fields carry request-derived values (task ids, method names, paths,
//! header values). Written as they are, a CR or LF in one starts a line of
//! the caller's making, and an ESC drives the reader's terminal. The JSON
//! format escapes them already (JSON strings cannot hold them); the text
//! format writes each value through [`fields`], which escapes control
//! characters (C0, DEL, C1) and the Unicode line and paragraph separators
//! as `\n`, `\r`, `\u{1b}`, ... . The proxy's own colour codes come from
//! the formatter around the fields, not from field values, so they stay.

use std::fmt::Write as _;

use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::FormatFields;

/// `s` with its control characters escaped (see the module).
pub fn escaped(s: &str) -> std::borrow::Cow<'_, str> {
    let forged = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
    if !s.chars().any(forged) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if forged(c) {
            let _ = write!(out, "{}", c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The text format's field formatter: `name=value` pairs (the message
/// bare), separated by spaces, each escaped.
pub fn fields() -> impl for<'w> FormatFields<'w> + Send + Sync + 'static {
    tracing_subscriber::fmt::format::debug_fn(|w: &mut Writer<'_>, field, value| {
        let text = format!("{value:?}");
        let text = escaped(&text);
        if field.name() == "message" {
            write!(w, "{text}")
        } else {
            write!(w, "{}={text}", field.name())
        }
    })
    .delimited(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_request_value_cannot_start_a_line_of_its_own() {
        let buf = Buf::default();
        let b = buf.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .fmt_fields(fields())
            .with_writer(move || b.clone());
        let subscriber = tracing_subscriber::registry().with(layer);
        let forged = "t1\r\n2026-12-07T00:00:00Z  INFO proxy: forged \x1b[31mred";
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("call", path = %forged);
            let _g = span.enter();
            tracing::info!(task_id = %forged, method = ?forged, "seen {forged}");
        });
        let out = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(!out.contains('\x1b') && !out.contains('\r'), "{out}");
        assert!(out.contains("task_id=t1\\r\\n2026"), "{out}");
        assert!(out.contains("seen t1\\r\\n"), "{out}");
        assert!(out.contains("path=t1\\r\\n"), "{out}");
        assert_eq!(escaped("plain"), "plain");
        assert_eq!(escaped("a\u{2028}b\u{85}"), "a\\u{2028}b\\u{85}");
    }
}
