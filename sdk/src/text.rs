//! [`StackStr`]: a fixed-capacity string on the stack, for log messages and refusal reasons without an
//! allocator.

use core::fmt;

/// A string of at most `N` bytes (`N` ≤ 65535) kept inline. Appending past the capacity truncates (at a character
/// boundary) and sets [`StackStr::is_truncated`]; nothing panics.
///
/// It implements [`core::fmt::Write`], so `write!` works; the `push_*` methods do the common cases
/// without `core::fmt` (which costs some kilobytes of code in a plugin).
///
/// ```
/// use wasmdp_sdk::StackStr;
/// let mut s = StackStr::<16>::new();
/// s.push_str("threshold=");
/// s.push_u64(256);
/// assert_eq!(s.as_str(), "threshold=256");
/// s.push_str("...and more");
/// assert_eq!(s.as_str(), "threshold=256...");
/// assert!(s.is_truncated());
/// ```
#[derive(Clone, Copy)]
pub struct StackStr<const N: usize> {
    buf: [u8; N],
    // Invariant: `len <= N` and `buf[..len]` is valid UTF-8.
    len: u16,
    truncated: bool,
}

impl<const N: usize> StackStr<N> {
    /// An empty string.
    pub const fn new() -> Self {
        const { assert!(N <= u16::MAX as usize, "StackStr holds at most 65535 bytes") };
        StackStr { buf: [0; N], len: 0, truncated: false }
    }

    /// The text so far.
    pub fn as_str(&self) -> &str {
        let bytes = self.buf.get(..self.len as usize).unwrap_or(&[]);
        // SAFETY: `buf[..len]` only ever receives whole `&str` prefixes cut at character boundaries
        // (see `push_str`), so it is valid UTF-8 (the struct invariant).
        unsafe { core::str::from_utf8_unchecked(bytes) }
    }

    /// Length in bytes.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether nothing was written.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether something did not fit.
    pub const fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// Empties the string.
    pub fn clear(&mut self) {
        self.len = 0;
        self.truncated = false;
    }

    /// Appends `s`, or the longest prefix of it that fits (cut at a character boundary).
    pub fn push_str(&mut self, s: &str) -> &mut Self {
        let len = self.len as usize;
        let room = N - len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        if take < s.len() {
            self.truncated = true;
        }
        if let (Some(dst), Some(src)) = (self.buf.get_mut(len..len + take), s.as_bytes().get(..take)) {
            dst.copy_from_slice(src);
            // `len + take <= N <= u16::MAX` (checked in `new`).
            self.len = (len + take) as u16;
        }
        self
    }

    /// Appends `n` in decimal.
    pub fn push_u64(&mut self, mut n: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut used = 0;
        // From the last digit on; no indexing, so no bounds-check panic (and no `core::fmt`) in plugins.
        for d in digits.iter_mut().rev() {
            *d = b'0' + (n % 10) as u8;
            used += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let text = digits.get(digits.len() - used..).and_then(|d| core::str::from_utf8(d).ok());
        self.push_str(text.unwrap_or("?"))
    }

    /// Appends `n` in decimal.
    pub fn push_i64(&mut self, n: i64) -> &mut Self {
        if n < 0 {
            self.push_str("-");
        }
        self.push_u64(n.unsigned_abs())
    }
}

impl<const N: usize> Default for StackStr<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Write for StackStr<N> {
    /// Never fails: what does not fit is cut off.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

impl<const N: usize> fmt::Display for StackStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<const N: usize> fmt::Debug for StackStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> PartialEq<str> for StackStr<N> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl<const N: usize> PartialEq<&str> for StackStr<N> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn truncates_at_char_boundary() {
        let mut s = StackStr::<5>::new();
        s.push_str("ab");
        s.push_str("cé€");
        // "abcé" is 5 bytes; the euro sign does not fit.
        assert_eq!(s.as_str(), "abcé");
        assert!(s.is_truncated());
        let mut t = StackStr::<4>::new();
        t.push_str("abcé");
        assert_eq!(t.as_str(), "abc");
    }

    #[test]
    fn numbers_and_fmt() {
        let mut s = StackStr::<64>::new();
        s.push_u64(0).push_str(" ").push_u64(u64::MAX).push_str(" ").push_i64(i64::MIN);
        assert_eq!(s.as_str(), "0 18446744073709551615 -9223372036854775808");
        s.clear();
        write!(s, "{}-{:04x}", 7, 0xab).unwrap();
        assert_eq!(s, "7-00ab");
        let mut z = StackStr::<0>::new();
        z.push_u64(12);
        assert!(z.is_empty() && z.is_truncated());
    }
}
