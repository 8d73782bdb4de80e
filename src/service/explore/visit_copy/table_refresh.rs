//! A visit tail brought up to date from the visits written since it was
//! read (`super::super::tails`): the rows of the visits written to are
//! replaced by their new ones, new visits join, and every other row is
//! copied as it is, codes and all, so the table is the one a full read
//! would give without reading the unchanged visits again.

use std::cmp::Ordering;

use super::{Table, Values, Visit};

impl Values {
    /// The same distinct values, each keeping its code, ready for more.
    fn reopened(&self) -> Values {
        let lookup = self.distinct.iter().enumerate().map(|(code, value)| (value.clone(), code as u32)).collect();
        Values { distinct: self.distinct.clone(), codes: Vec::with_capacity(self.codes.len()), lookup }
    }
}

impl Table {
    /// Its visits as a tail's print counts them: how many, the largest id
    /// (0 when none), and the sums of their starts and ends after `until`.
    pub fn print(&self, until: i64) -> (i64, i64, i64, i64) {
        let sum = |instants: &[i64]| instants.iter().map(|instant| instant - until).sum();
        (self.len() as i64, self.id.iter().copied().max().unwrap_or(0), sum(&self.started), sum(&self.ended))
    }

    /// The ids (sorted, once) of the visits a refresh must read again:
    /// those `written` to, and those whose start or end in `keys` (every
    /// visit now begun in the tail's range: id, start, end) is not this
    /// table's, new ones and gone ones included.
    pub fn changed(&self, mut keys: Vec<(i64, i64, i64)>, mut written: Vec<i64>) -> Vec<i64> {
        let mut held: Vec<(i64, i64, i64)> =
            (0..self.len()).map(|at| (self.id[at], self.started[at], self.ended[at])).collect();
        held.sort_unstable();
        keys.sort_unstable();
        let (mut held, mut keys) = (held.into_iter().peekable(), keys.into_iter().peekable());
        loop {
            match (held.peek(), keys.peek()) {
                (None, None) => break,
                (Some(old), Some(now)) if old.0 == now.0 => {
                    if old != now {
                        written.push(now.0);
                    }
                    held.next();
                    keys.next();
                }
                (Some(old), Some(now)) if old.0 < now.0 => {
                    written.push(old.0);
                    held.next();
                }
                (Some(old), None) => {
                    written.push(old.0);
                    held.next();
                }
                (_, Some(now)) => {
                    written.push(now.0);
                    keys.next();
                }
            }
        }
        written.sort_unstable();
        written.dedup();
        written
    }

    /// The visit at `at` in load order: by start, end, then id.
    fn order_at(&self, at: usize) -> (i64, i64, i64) {
        (self.started[at], self.ended[at], self.id[at])
    }

    /// This table with the visits of `touched` (sorted ids) replaced by
    /// `fresh`, their rows as they are now (a touched visit that no longer
    /// begins in the tail's range is not among them, and goes), in load
    /// order.
    pub fn refreshed(&self, touched: &[i64], mut fresh: Vec<Visit>) -> Table {
        fresh.sort_unstable_by_key(|visit| (visit.started, visit.ended, visit.id));
        let mut table = Table {
            id: Vec::with_capacity(self.len() + fresh.len()),
            columns: self.columns.iter().map(Values::reopened).collect(),
            ..Table::default()
        };
        let mut fresh = fresh.into_iter().peekable();
        for at in (0..self.len()).filter(|at| touched.binary_search(&self.id[*at]).is_err()) {
            while let Some(visit) =
                fresh.next_if(|visit| (visit.started, visit.ended, visit.id).cmp(&self.order_at(at)) == Ordering::Less)
            {
                table.push(visit);
            }
            table.copy_row(self, at);
        }
        fresh.for_each(|visit| table.push(visit));
        table.seal();
        table
    }

    /// Appends the row `at` of `from`, whose columns' codes are this
    /// table's (it was reopened from `from`).
    fn copy_row(&mut self, from: &Table, at: usize) {
        self.id.push(from.id[at]);
        self.visitor.push(from.visitor[at]);
        self.started.push(from.started[at]);
        self.ended.push(from.ended[at]);
        self.human_events.push(from.human_events[at]);
        self.human_pageviews.push(from.human_pageviews[at]);
        self.events.push(from.events[at]);
        self.seconds.push(from.seconds[at]);
        for (column, source) in self.columns.iter_mut().zip(&from.columns) {
            column.codes.push(source.codes[at]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::explore::visit_copy::table::Column;

    /// A visit: (id, start, end, events, exit page).
    fn visit((id, started, ended, events, exit): (i64, i64, i64, i32, &str)) -> Visit {
        let mut values: [Option<String>; Column::COUNT] = Default::default();
        values[Column::EntryPage as usize] = Some("/".to_owned());
        values[Column::ExitPage as usize] = Some(exit.to_owned());
        values[Column::Source as usize] = (id % 2 == 0).then(|| "Google".to_owned());
        Visit {
            id,
            visitor: id * 10,
            started,
            ended,
            human_events: events,
            human_pageviews: events,
            events,
            seconds: (ended - started) / 1000,
            values,
        }
    }

    fn table_of(mut visits: Vec<Visit>) -> Table {
        visits.sort_by_key(|visit| (visit.started, visit.ended, visit.id));
        let mut table = Table::new();
        visits.into_iter().for_each(|visit| table.push(visit));
        table.seal();
        table
    }

    type Row = (i64, i64, i64, i64, i32, i32, i32, i64, Vec<Option<String>>);

    /// Every row as its values read, codes named.
    fn rows(table: &Table) -> Vec<Row> {
        (0..table.len())
            .map(|at| {
                let values = table.columns.iter().map(|column| column.distinct[column.codes[at] as usize].clone());
                (
                    table.id[at],
                    table.visitor[at],
                    table.started[at],
                    table.ended[at],
                    table.human_events[at],
                    table.human_pageviews[at],
                    table.events[at],
                    table.seconds[at],
                    values.collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_refreshed_tail_is_the_table_a_full_read_gives() {
        let kept = [(1, 100, 200, 2, "/a"), (2, 150, 150, 1, "/b"), (3, 300, 400, 3, "/c"), (4, 300, 350, 1, "/a")];
        // what was written since (touched ids, their rows now) -> what a full read now holds
        type Case = (&'static str, Vec<i64>, Vec<(i64, i64, i64, i32, &'static str)>);
        let cases: Vec<Case> = vec![
            ("nothing written", vec![], vec![]),
            ("a new visit at the end", vec![9], vec![(9, 500, 500, 1, "/new")]),
            ("a new visit among the kept, by start", vec![9], vec![(9, 160, 170, 1, "/a")]),
            ("a visit grows, a page never seen", vec![2], vec![(2, 150, 900, 2, "/pricing")]),
            ("a visit that begins earlier moves up", vec![3], vec![(3, 50, 400, 4, "/c")]),
            ("a visit left the range", vec![1], vec![]),
            ("same start: by end, then id", vec![4, 5], vec![(4, 300, 420, 2, "/d"), (5, 300, 400, 1, "/e")]),
        ];
        for (label, touched, fresh) in cases {
            let before = table_of(kept.map(visit).to_vec());
            let fresh: Vec<Visit> = fresh.into_iter().map(visit).collect();
            let mut now: Vec<Visit> =
                kept.map(visit).into_iter().filter(|visit| !touched.contains(&visit.id)).collect();
            now.extend(fresh.clone());
            let refreshed = before.refreshed(&touched, fresh);
            assert_eq!(rows(&refreshed), rows(&table_of(now.clone())), "{label}");
            let print = |visits: &[Visit]| {
                let sum = |of: fn(&Visit) -> i64| visits.iter().map(|visit| of(visit) - 40).sum::<i64>();
                let last = visits.iter().map(|visit| visit.id).max().unwrap_or(0);
                (visits.len() as i64, last, sum(|visit| visit.started), sum(|visit| visit.ended))
            };
            assert_eq!(refreshed.print(40), print(&now), "{label}");
        }
    }

    #[test]
    fn a_refresh_reads_again_every_visit_written_to_or_moved() {
        let kept =
            table_of([(1, 100, 200, 2, "/a"), (2, 150, 150, 1, "/b"), (3, 300, 400, 3, "/c")].map(visit).to_vec());
        let keys = |keys: &[(i64, i64, i64)]| keys.to_vec();
        // the tail's keys now, the visits events were written to -> read again
        let cases = [
            ("nothing moved", keys(&[(1, 100, 200), (2, 150, 150), (3, 300, 400)]), vec![], vec![]),
            ("written to", keys(&[(1, 100, 200), (2, 150, 150), (3, 300, 400)]), vec![2, 2], vec![2]),
            ("a ping moved an end", keys(&[(1, 100, 260), (2, 150, 150), (3, 300, 400)]), vec![], vec![1]),
            ("a ping moved a start", keys(&[(1, 100, 200), (2, 120, 150), (3, 300, 400)]), vec![3], vec![2, 3]),
            ("a new visit", keys(&[(1, 100, 200), (2, 150, 150), (3, 300, 400), (7, 500, 500)]), vec![], vec![7]),
            ("a visit gone", keys(&[(1, 100, 200), (3, 300, 400)]), vec![], vec![2]),
            ("the first and the last gone", keys(&[(2, 150, 150)]), vec![], vec![1, 3]),
            ("all new", keys(&[(8, 1, 2), (9, 3, 4)]), vec![], vec![1, 2, 3, 8, 9]),
        ];
        for (label, keys, written, expected) in cases {
            assert_eq!(kept.changed(keys, written), expected, "{label}");
        }
    }
}
