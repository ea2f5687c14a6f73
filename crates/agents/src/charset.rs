//! The legacy encodings an agent's tool may have decoded a file with.
//!
//! fsview compares what a tool showed with the disk's bytes as UTF-8 text.
//! Some tools decode a file that is not UTF-8 first: Qwen Code 0.24.4
//! samples its first 8 KiB and, unless that is valid UTF-8, asks chardet
//! for an encoding (GBK, Shift_JIS, ISO-8859-2, windows-1251, ...) and
//! decodes the whole file with iconv-lite, writing it back the same way.
//! What it shows is then the exact text of the bytes in that encoding: the
//! bytes themselves were shown, and a change through the tool keeps them.
//! [`decodings`] gives the file's text under each encoding such a tool may
//! have chosen, so the shown text can be matched exactly; a shown text that
//! matches none was not the file (a lossy decoding: U+FFFD in place of
//! bytes it could not read).

use encoding_rs::Encoding;

/// The encodings chardet names that a tool decodes (iconv-lite's names,
/// as encoding_rs knows them), most likely first. ISO-8859-1 is not here:
/// encoding_rs, as the web does, takes it for windows-1252, and iconv-lite
/// does not ([`latin1`]).
const LABELS: &[&str] = &[
    "gb18030",
    "big5",
    "shift_jis",
    "euc-jp",
    "iso-2022-jp",
    "euc-kr",
    "windows-1250",
    "windows-1251",
    "windows-1252",
    "windows-1253",
    "windows-1254",
    "windows-1255",
    "windows-1256",
    "iso-8859-2",
    "iso-8859-5",
    "iso-8859-6",
    "iso-8859-7",
    "iso-8859-8",
    "iso-8859-9",
    "koi8-r",
];

/// `bytes` as ISO-8859-1: each byte the code point of its value.
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(*b)).collect()
}

/// The text of `bytes` under each legacy encoding that decodes them without
/// an error (no byte it cannot map), ISO-8859-1 last (it maps every byte).
/// Nothing for valid UTF-8: a tool decodes that as UTF-8.
pub fn decodings(bytes: &[u8]) -> impl Iterator<Item = String> + '_ {
    let legacy = std::str::from_utf8(bytes).is_err();
    LABELS
        .iter()
        .filter(move |_| legacy)
        .filter_map(|label| Encoding::for_label(label.as_bytes()))
        .filter_map(move |enc| {
            enc.decode_without_bom_handling_and_without_replacement(bytes)
                .map(|t| t.into_owned())
        })
        .chain(legacy.then(|| latin1(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_bytes_decode_as_their_tools_would() {
        // Qwen Code decoded this Latin-1 file as ISO-8859-2 (chardet's
        // guess): "crčme", not "crème". Both are exact decodings.
        let bytes = "caf\u{e9} cr\u{e8}me\n"
            .chars()
            .map(|c| c as u8)
            .collect::<Vec<u8>>();
        let all: Vec<String> = decodings(&bytes).collect();
        assert!(all.contains(&"café crčme\n".to_string()));
        assert_eq!(all.last().unwrap(), "café crème\n");
        let gbk = b"\xd6\xd0\xce\xc4\n";
        assert_eq!(decodings(gbk).next().as_deref(), Some("中文\n"));
        assert_eq!(decodings("中文\n".as_bytes()).count(), 0);
    }
}
