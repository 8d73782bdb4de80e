//! Page numbers for a long list: the first and last page, the pages
//! around the current one, and gaps between.

use crate::web::format;

/// A link of the pager: a page number, or a gap.
pub struct PageLink {
    pub label: String,
    pub href: Option<String>,
    pub current: bool,
}

/// Page numbers around the current one, with the first and the last, and
/// gaps between ("1 … 4 5 6 7 8 … 20").
pub fn pager(current: u64, last: u64, href: impl Fn(u64) -> String) -> Vec<PageLink> {
    let mut numbers: Vec<u64> = vec![1, last];
    numbers.extend(current.saturating_sub(2).max(1)..=(current + 2).min(last));
    numbers.sort_unstable();
    numbers.dedup();
    let mut links = Vec::new();
    let mut previous = 0;
    for number in numbers.into_iter().filter(|n| *n >= 1) {
        if number > previous + 1 {
            links.push(PageLink { label: "…".to_owned(), href: None, current: false });
        }
        links.push(PageLink {
            label: format::number(number as i64),
            href: (number != current).then(|| href(number)),
            current: number == current,
        });
        previous = number;
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pager_shows_the_ends_and_the_neighbourhood() {
        let labels = |current, last| -> Vec<String> {
            pager(current, last, |n| n.to_string())
                .into_iter()
                .map(|link| if link.current { format!("[{}]", link.label) } else { link.label })
                .collect()
        };
        assert_eq!(labels(1, 1), ["[1]"]);
        assert_eq!(labels(1, 3), ["[1]", "2", "3"]);
        assert_eq!(labels(6, 20), ["1", "…", "4", "5", "[6]", "7", "8", "…", "20"]);
        assert_eq!(labels(20, 20), ["1", "…", "18", "19", "[20]"]);
        assert_eq!(labels(3, 7), ["1", "2", "[3]", "4", "5", "…", "7"]);
    }
}
