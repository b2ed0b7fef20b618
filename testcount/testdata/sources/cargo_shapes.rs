#[derive(Debug, PartialEq)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

pub fn mid(a: &Point, b: &Point) -> Point {
    Point { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 }
}

pub fn first(v: &[i32]) -> i32 {
    v[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mid_rounds() {
        let got = mid(&Point { x: 1, y: 1 }, &Point { x: 2, y: 4 });
        assert_eq!(got, Point { x: 2, y: 3 }, "mid of {:#?}", got);
    }

    #[test]
    fn first_of_empty() {
        assert_eq!(first(&[]), 0);
    }

    #[test]
    fn mid_same() {
        assert_eq!(mid(&Point { x: 1, y: 1 }, &Point { x: 1, y: 1 }), Point { x: 1, y: 1 });
    }
}
