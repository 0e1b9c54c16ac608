//! The random primitives of HammerDB's `tpcccommon` (RandomNumber, NURand, Lastname,
//! MakeAlphaString, Makezip, MakeNumberString) over a small, fast, seedable generator
//! (SplitMix64), so loads and drivers need no extra crate and can be reproduced.

pub(crate) struct Rng(u64);

const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// A seed from the clock and a salt (threads get different streams).
    pub(crate) fn from_time(salt: u64) -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Rng::new(
            t.wrapping_mul(31)
                .wrapping_add(salt.wrapping_mul(0xD1B5_4A32_D192_ED03)),
        )
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// RandomNumber(lo, hi): uniform over lo..=hi.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(hi >= lo);
        let span = (hi - lo + 1) as u64;
        lo + (self.next_u64() % span) as i64
    }

    /// NURand(A, x, y, C) of TPC-C.
    pub(crate) fn nurand(&mut self, a: i64, x: i64, y: i64, c: i64) -> i64 {
        (((self.range(0, a) | self.range(x, y)) + c) % (y - x + 1)) + x
    }

    /// MakeAlphaString(lo, hi): length uniform in lo..=hi over [0-9A-Za-z]. Six bits per
    /// character, ten from each 64-bit draw, values 62 and 63 rejected: uniform and cheap (the
    /// loader spends most of its client time here).
    pub(crate) fn alnum(&mut self, lo: i64, hi: i64, out: &mut String) {
        let n = self.range(lo, hi) as usize;
        out.reserve(n);
        let (mut bits, mut left, mut k) = (0u64, 0, 0);
        while k < n {
            if left == 0 {
                bits = self.next_u64();
                left = 10;
            }
            let c = (bits & 63) as usize;
            bits >>= 6;
            left -= 1;
            if c < ALNUM.len() {
                out.push(ALNUM[c] as char);
                k += 1;
            }
        }
    }

    pub(crate) fn alnum_string(&mut self, lo: i64, hi: i64) -> String {
        let mut s = String::with_capacity(hi as usize);
        self.alnum(lo, hi, &mut s);
        s
    }

    /// Makezip: a number 0..9999 written over the start of "000011111".
    pub(crate) fn zip(&mut self, out: &mut String) {
        let r = self.range(0, 9999).to_string();
        out.push_str(&r);
        out.push_str(&"000011111"[r.len()..]);
    }

    /// MakeNumberString: two numbers 0..99,999,999, each left-aligned in "00000000".
    pub(crate) fn phone(&mut self, out: &mut String) {
        for _ in 0..2 {
            let r = self.range(0, 99_999_999).to_string();
            out.push_str(&r);
            out.push_str(&"00000000"[r.len()..]);
        }
    }

    /// `k` percent chance.
    pub(crate) fn percent(&mut self, k: i64) -> bool {
        self.range(1, 100) <= k
    }
}

/// Lastname(n), n in 0..=999: three syllables.
pub(crate) fn lastname(n: i64) -> String {
    let n = n as usize;
    format!(
        "{}{}{}",
        SYLLABLES[n / 100],
        SYLLABLES[(n / 10) % 10],
        SYLLABLES[n % 10]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_have_hammerdb_shapes() {
        assert_eq!(lastname(0), "BARBARBAR");
        assert_eq!(lastname(371), "PRICALLYOUGHT");
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            let v = r.range(5, 15);
            assert!((5..=15).contains(&v));
            let n = r.nurand(255, 0, 999, 123);
            assert!((0..=999).contains(&n));
        }
        let mut z = String::new();
        r.zip(&mut z);
        assert_eq!(z.len(), 9);
        assert!(z.ends_with("11111") || z.len() == 9);
        let mut p = String::new();
        r.phone(&mut p);
        assert_eq!(p.len(), 16);
        let s = r.alnum_string(14, 24);
        assert!((14..=24).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric()));
        // Every one of the 62 characters turns up, about equally often.
        let mut counts = std::collections::HashMap::new();
        for c in r.alnum_string(62_000, 62_000).chars() {
            *counts.entry(c).or_insert(0) += 1;
        }
        assert_eq!(counts.len(), 62);
        assert!(
            counts.values().all(|n| (800..1200).contains(n)),
            "{counts:?}"
        );
    }
}
