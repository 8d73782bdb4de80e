//! An event tail brought up to date with the events stored since it was
//! read (`super::super::tails`): they are merged into its run by time, and
//! the events it held are copied as they are, codes and all. Stored events
//! never change, and a new one's id is above every one the tail holds, so
//! among events of the same instant the held come first: the order of a
//! full read (time, then id).

use super::{EventTable, Ids, StoredEvent, Texts};

impl Ids {
    /// The same ids, each keeping its code, ready for more.
    fn reopened(&self) -> Ids {
        let lookup = self.ids.iter().enumerate().map(|(code, id)| (*id, code as u32)).collect();
        Ids { ids: self.ids.clone(), lookup, by_id: Vec::new() }
    }
}

impl Texts {
    /// The same texts, each keeping its code, ready for more.
    fn reopened(&self) -> Texts {
        let lookup = self.distinct.iter().enumerate().map(|(code, text)| (text.clone(), code as u32)).collect();
        Texts { distinct: self.distinct.clone(), lookup }
    }
}

impl EventTable {
    /// This table with `fresh` (events and their ids, all stored after
    /// this table's) merged in, in the order they happened.
    pub fn extended(&self, mut fresh: Vec<(i64, StoredEvent)>) -> EventTable {
        fresh.sort_unstable_by_key(|(id, event)| (event.at, *id));
        let capacity = self.at.len() + fresh.len();
        let mut table = EventTable {
            at: Vec::with_capacity(capacity),
            visitor: Vec::with_capacity(capacity),
            visit: Vec::with_capacity(capacity),
            kind: Vec::with_capacity(capacity),
            page: Vec::with_capacity(capacity),
            name: Vec::with_capacity(capacity),
            visitors: self.visitors.reopened(),
            visits: self.visits.reopened(),
            pages: self.pages.reopened(),
            names: self.names.reopened(),
        };
        let mut fresh = fresh.into_iter().map(|(_, event)| event).peekable();
        for at in 0..self.at.len() {
            while let Some(event) = fresh.next_if(|event| event.at < self.at[at]) {
                table.push(event);
            }
            table.at.push(self.at[at]);
            table.visitor.push(self.visitor[at]);
            table.visit.push(self.visit[at]);
            table.kind.push(self.kind[at]);
            table.page.push(self.page[at]);
            table.name.push(self.name[at]);
        }
        fresh.for_each(|event| table.push(event));
        table.seal();
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::explore::visit_copy::events::Kind;

    /// An event: (id, at, visitor, visit, page).
    type Event = (i64, i64, i64, i64, &'static str);

    fn stored((_, at, visitor, visit, page): Event) -> StoredEvent {
        let kind = if page == "signup" { Kind::Custom } else { Kind::Pageview };
        let name = if kind == Kind::Custom { page } else { "pageview" };
        StoredEvent { at, visitor, visit, kind, page: page.to_owned(), name: name.to_owned() }
    }

    /// The table a full read gives: by time, then id.
    fn table_of(mut events: Vec<Event>) -> EventTable {
        events.sort_by_key(|(id, at, ..)| (*at, *id));
        let mut table = EventTable::new();
        events.into_iter().for_each(|event| table.push(stored(event)));
        table.seal();
        table
    }

    /// An event as its columns read, codes named: (at, visitor, visit, kind, page, name).
    type Row = (i64, i64, i64, Kind, String, String);

    /// Every event as its columns read; and the visitors by id.
    fn rows(table: &EventTable) -> (Vec<Row>, Vec<i64>) {
        let events = (0..table.at.len())
            .map(|at| {
                (
                    table.at[at],
                    table.visitor_id(table.visitor_code(at)),
                    table.visit_id(table.visit_code(at)),
                    table.kind[at],
                    table.pages.distinct[table.page[at] as usize].clone(),
                    table.names.distinct[table.name[at] as usize].clone(),
                )
            })
            .collect();
        let by_id = table.visitors.by_id.iter().map(|code| table.visitor_id(*code as usize)).collect();
        (events, by_id)
    }

    #[test]
    fn an_extended_tail_is_the_table_a_full_read_gives() {
        let kept: [Event; 4] =
            [(1, 100, 7, 70, "/"), (2, 200, 7, 70, "/a"), (3, 200, 8, 80, "/"), (4, 300, 8, 80, "/b")];
        // events stored since (ids above the kept ones) -> what a full read now holds
        let cases: Vec<(&str, Vec<Event>)> = vec![
            ("nothing stored", vec![]),
            ("after the last", vec![(5, 400, 7, 70, "/c"), (6, 350, 9, 90, "signup")]),
            ("late, between kept ones", vec![(5, 150, 8, 80, "/late")]),
            ("the same instant as kept ones: after them", vec![(6, 200, 9, 90, "/"), (5, 200, 7, 70, "/x")]),
            ("before the first, a new visitor", vec![(5, 50, 1, 10, "/first")]),
        ];
        for (label, fresh) in cases {
            let before = table_of(kept.to_vec());
            let mut now = kept.to_vec();
            now.extend(fresh.clone());
            let extended = before.extended(fresh.into_iter().map(|event| (event.0, stored(event))).collect());
            assert_eq!(rows(&extended), rows(&table_of(now)), "{label}");
        }
    }
}
