/// Adds.
///
/// ```
/// assert_eq!(sample::add(1, 1), 2);
/// ```
pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    #[test]
    fn passes() { assert_eq!(super::add(2, 2), 4); }
    #[test]
    fn fails() { assert_eq!(super::add(2, 2), 5); }
    #[test]
    #[ignore]
    fn ignored() {}
    #[test]
    #[ignore = "slow"]
    fn ignored_reason() {}
}
