//! How a file's text is stored on disk, so a change keeps it stored the
//! same way.
//!
//! Edits are matched against text, and text is UTF-8 in fsview (and in the
//! model's strings). A file is one of:
//!
//! - **UTF-8, with or without a byte-order mark.** The BOM is set aside
//!   while matching and put back in front. Bytes that are not valid UTF-8
//!   (a Latin-1 `é`) are kept as they are: matching works on bytes, so the
//!   parts of the file an edit does not touch stay byte for byte.
//! - **UTF-16 with a BOM** (little or big endian): decoded for matching and
//!   encoded back, BOM included.
//!
//! Anything else with a NUL byte in its first 8 KiB is binary (as
//! `fsview-read` decides) and refused.

use std::borrow::Cow;

/// How many leading bytes decide that a file is binary (as fsview-read).
pub const SNIFF_LEN: usize = 8 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The storage of a file's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8 { bom: bool },
    Utf16 { big_endian: bool },
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 { bom: false } => "utf-8",
            Encoding::Utf8 { bom: true } => "utf-8 with BOM",
            Encoding::Utf16 { big_endian: false } => "utf-16le",
            Encoding::Utf16 { big_endian: true } => "utf-16be",
        }
    }
}

/// Why bytes are not text this module can edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotText {
    /// A NUL byte in the first 8 KiB, without a UTF-16 BOM.
    Binary,
    /// A UTF-16 BOM, but not valid UTF-16 after it.
    BadUtf16,
}

/// Which encoding `bytes` (the start of a file, or all of it) use.
pub fn sniff(bytes: &[u8]) -> Result<Encoding, NotText> {
    if bytes.starts_with(b"\xFF\xFE") {
        // FF FE 00 00 is a UTF-32LE BOM: not text we edit.
        if bytes.starts_with(b"\xFF\xFE\x00\x00") {
            return Err(NotText::Binary);
        }
        return Ok(Encoding::Utf16 { big_endian: false });
    }
    if bytes.starts_with(b"\xFE\xFF") {
        return Ok(Encoding::Utf16 { big_endian: true });
    }
    if memchr::memchr(0, &bytes[..bytes.len().min(SNIFF_LEN)]).is_some() {
        return Err(NotText::Binary);
    }
    Ok(Encoding::Utf8 {
        bom: bytes.starts_with(UTF8_BOM),
    })
}

/// A whole file's bytes as a read shows them: a UTF-16 file's text in
/// UTF-8; anything else as it is. For diffs against what was shown.
pub fn as_shown(bytes: Vec<u8>) -> Vec<u8> {
    match decode(&bytes) {
        Ok((Encoding::Utf16 { .. }, text)) => text.into_owned(),
        _ => bytes,
    }
}

/// The text of a whole file, as UTF-8 bytes without the BOM.
pub fn decode(bytes: &[u8]) -> Result<(Encoding, Cow<'_, [u8]>), NotText> {
    let enc = sniff(bytes)?;
    let text = match enc {
        Encoding::Utf8 { bom } => {
            let start = if bom { UTF8_BOM.len() } else { 0 };
            Cow::Borrowed(&bytes[start..])
        }
        Encoding::Utf16 { big_endian } => {
            let body = &bytes[2..];
            if !body.len().is_multiple_of(2) {
                return Err(NotText::BadUtf16);
            }
            let units = body.chunks_exact(2).map(|c| {
                if big_endian {
                    u16::from_be_bytes([c[0], c[1]])
                } else {
                    u16::from_le_bytes([c[0], c[1]])
                }
            });
            let mut s = String::with_capacity(body.len() / 2);
            for c in char::decode_utf16(units) {
                s.push(c.map_err(|_| NotText::BadUtf16)?);
            }
            Cow::Owned(s.into_bytes())
        }
    };
    Ok((enc, text))
}

/// `text` stored as `enc`, BOM included. UTF-16 needs valid UTF-8 text;
/// `None` when it is not.
pub fn encode(enc: Encoding, text: Vec<u8>) -> Option<Vec<u8>> {
    match enc {
        Encoding::Utf8 { bom } if bom && !text.starts_with(UTF8_BOM) => {
            let mut out = Vec::with_capacity(text.len() + 3);
            out.extend_from_slice(UTF8_BOM);
            out.extend_from_slice(&text);
            Some(out)
        }
        Encoding::Utf8 { .. } => Some(text),
        Encoding::Utf16 { big_endian } => {
            let s = std::str::from_utf8(&text).ok()?;
            // A text that already starts with U+FEFF carries its own BOM.
            let s = s.strip_prefix('\u{feff}').unwrap_or(s);
            let mut out = Vec::with_capacity(2 + s.len() * 2);
            out.extend_from_slice(if big_endian { b"\xFE\xFF" } else { b"\xFF\xFE" });
            for u in s.encode_utf16() {
                out.extend_from_slice(&if big_endian {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                });
            }
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_with_and_without_bom_round_trips() {
        for bytes in [&b"a\nb"[..], b"\xEF\xBB\xBFa\r\nb\n", b"caf\xe9\n", b""] {
            let (enc, text) = decode(bytes).unwrap();
            assert_eq!(encode(enc, text.into_owned()).unwrap(), bytes);
        }
        assert_eq!(decode(b"\xEF\xBB\xBFx").unwrap().1.as_ref(), b"x");
    }

    #[test]
    fn utf16_round_trips_both_ways() {
        let le = b"\xFF\xFEh\x00\xe9\x00\n\x00";
        let (enc, text) = decode(le).unwrap();
        assert_eq!(enc, Encoding::Utf16 { big_endian: false });
        assert_eq!(text.as_ref(), "hé\n".as_bytes());
        assert_eq!(encode(enc, text.into_owned()).unwrap(), le);
        let be = b"\xFE\xFF\x00h\x00\n";
        let (enc, text) = decode(be).unwrap();
        assert_eq!(
            (enc, text.as_ref()),
            (Encoding::Utf16 { big_endian: true }, &b"h\n"[..])
        );
        assert_eq!(encode(enc, text.into_owned()).unwrap(), be);
    }

    #[test]
    fn binary_and_broken_utf16_are_refused() {
        assert_eq!(decode(b"ab\0cd"), Err(NotText::Binary));
        assert_eq!(
            decode(b"\xFF\xFE\x00\x00a\x00\x00\x00"),
            Err(NotText::Binary)
        );
        assert_eq!(decode(b"\xFF\xFEa"), Err(NotText::BadUtf16));
        // An unpaired surrogate.
        assert_eq!(decode(b"\xFF\xFE\x00\xD8a\x00"), Err(NotText::BadUtf16));
        assert_eq!(
            encode(Encoding::Utf16 { big_endian: false }, b"\xff".to_vec()),
            None
        );
    }
}
