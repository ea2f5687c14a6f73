//! Byte scans for the read path (newlines, a NUL), without the CPU feature
//! detection that `memchr`'s top-level functions run on their first call.
//!
//! That detection asks the CPU for a dozen feature leaves; in a virtual
//! machine each question traps to the hypervisor, and together they cost
//! about 45 µs, a few percent of a whole `fsview-read` call. On x86_64 SSE2
//! is part of the architecture, needs no detection, and scans the text a
//! read shows fast enough (16 bytes a step); elsewhere `memchr` dispatches
//! as it likes.

#[cfg(target_arch = "x86_64")]
fn one(needle: u8) -> memchr::arch::x86_64::sse2::memchr::One {
    memchr::arch::x86_64::sse2::memchr::One::new(needle).expect("SSE2 is part of x86_64")
}

/// The first `needle` in `hay`.
pub fn find(needle: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        one(needle).find(hay)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memchr::memchr(needle, hay)
    }
}

/// The last `needle` in `hay`.
pub fn rfind(needle: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        one(needle).rfind(hay)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memchr::memrchr(needle, hay)
    }
}

/// How many `needle`s `hay` holds.
pub fn count(needle: u8, hay: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        one(needle).count(hay)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memchr::memchr_iter(needle, hay).count()
    }
}

/// Every position of `needle` in `hay`, in order.
pub fn positions(needle: u8, hay: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let i = find(needle, &hay[at..])?;
        let pos = at + i;
        at = pos + 1;
        Some(pos)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_agree_with_memchr() {
        let hay: Vec<u8> = (0..1000u32)
            .map(|i| {
                if i % 37 == 5 {
                    b'\n'
                } else {
                    b'a' + (i % 26) as u8
                }
            })
            .collect();
        for hay in [&hay[..], &hay[3..], &hay[..40], b"", b"\n", b"abc"] {
            assert_eq!(find(b'\n', hay), memchr::memchr(b'\n', hay));
            assert_eq!(rfind(b'\n', hay), memchr::memrchr(b'\n', hay));
            assert_eq!(count(b'\n', hay), memchr::memchr_iter(b'\n', hay).count());
            assert!(positions(b'\n', hay).eq(memchr::memchr_iter(b'\n', hay)));
        }
    }
}
