//! What the copies read from the rows: a site's visits and events in
//! order, the print of its tail, and the edge pieces of cut visits.

use sea_orm::{ConnectionTrait, DbBackend, DbErr, QueryResult};

use super::{
    events::{EventTable, Kind, StoredEvent},
    table::{Column, Pieces, Table, Visit},
};
use crate::{
    service::explore::{
        range::{Buckets, Span},
        sql::Sql,
    },
    time::start_of_day,
};

/// What has begun since `until`: how many visits, their last id and the
/// sums of their starts and ends (after `until`), and how many events and
/// the highest id one of them may have (`events_since`, `stored_since`).
/// Every event is stored under a new id and never changed, and every write
/// to a visit either stores an event of it or, an engagement ping's, moves
/// its end or start (and its length with them); what removes rows or
/// recounts a visit (an erasure, retention) moves the settled generation,
/// and with it the whole copy. So while the print stands, the tail is the
/// one read. The visits are read on their start index alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TailPrint {
    visits: VisitsPrint,
    events: (i64, i64),
}

/// A tail's visits as its print counts them: (count, last id, starts, ends).
type VisitsPrint = (i64, i64, i64, i64);

/// Visits read per statement while a copy is loaded.
const LOAD_CHUNK: u64 = 20_000;

/// Events read per statement while a copy of them is loaded.
const EVENT_CHUNK: u64 = 50_000;

/// The tail's print on this snapshot. `earlier`, a print of the same copy
/// on an earlier snapshot, lets SQLite count only the events stored since
/// (`events_since`).
pub(super) async fn tail_print(
    db: &impl ConnectionTrait,
    site_id: i64,
    until: i64,
    earlier: Option<TailPrint>,
) -> Result<TailPrint, DbErr> {
    let backend = db.get_database_backend();
    let mut sql = Sql::new(backend);
    // Offsets from `until` keep the sums small (two days of ms a visit).
    sql.push("SELECT CAST(COUNT(*) AS BIGINT) AS n, CAST(COALESCE(MAX(id), 0) AS BIGINT) AS last, ")
        .push("CAST(COALESCE(SUM(started_at - ")
        .bind(until)
        .push("), 0) AS BIGINT) AS starts, CAST(COALESCE(SUM(ended_at - ")
        .bind(until)
        .push("), 0) AS BIGINT) AS ends FROM tracked_sessions WHERE site_id = ")
        .bind(site_id)
        .push(" AND started_at >= ")
        .bind(until);
    let mut visits = (0, 0, 0, 0);
    if let Some(row) = db.query_one_raw(sql.statement()).await? {
        visits =
            (row.try_get("", "n")?, row.try_get("", "last")?, row.try_get("", "starts")?, row.try_get("", "ends")?);
    }
    if let Some(events) = events_since(db, (site_id, until), earlier).await? {
        return Ok(TailPrint { visits, events });
    }
    if backend == DbBackend::Postgres && until == start_of_day(until) {
        return Ok(TailPrint { visits, events: stored_since(db, (site_id, until), earlier).await? });
    }
    let mut sql = Sql::new(backend);
    sql.push("SELECT CAST(COUNT(*) AS BIGINT) AS n, CAST(COALESCE(MAX(id), 0) AS BIGINT) AS last FROM events ")
        .push("WHERE site_id = ")
        .bind(site_id)
        .push(" AND timestamp >= ")
        .bind(until);
    let mut events = (0, 0);
    if let Some(row) = db.query_one_raw(sql.statement()).await? {
        events = (row.try_get("", "n")?, row.try_get("", "last")?);
    }
    Ok(TailPrint { visits, events })
}

/// The events part of the print from `earlier`'s, on SQLite: its count
/// plus those of the site since `until` stored under higher ids. SQLite
/// writes one transaction at a time and gives each row the next id, so
/// ids are visible in the order they were given: this snapshot holds every
/// event up to its highest id, and, when that is at least `earlier`'s last,
/// every event `earlier` counted (none is removed but with the copy). The
/// site's tail holds hundreds of thousands of events at 10M (a count of
/// them took 44 ms a query); those since are a few. `None` where it cannot
/// tell: on PostgreSQL (a sequence can commit out of order), without an
/// earlier print, on an older snapshot, or past `REFRESH_SPAN` ids.
async fn events_since(
    db: &impl ConnectionTrait,
    (site_id, until): (i64, i64),
    earlier: Option<TailPrint>,
) -> Result<Option<(i64, i64)>, DbErr> {
    let Some(earlier) = earlier.filter(|_| db.get_database_backend() == DbBackend::Sqlite) else { return Ok(None) };
    let (count, last) = earlier.events;
    // The table's last row: one step down its b-tree.
    let mut sql = Sql::new(DbBackend::Sqlite);
    sql.push("SELECT MAX(id) AS latest FROM events");
    let latest: Option<i64> = match db.query_one_raw(sql.statement()).await? {
        Some(row) => row.try_get("", "latest")?,
        None => None,
    };
    let Some(latest) = latest.filter(|latest| *latest >= last && latest - last <= REFRESH_SPAN) else {
        return Ok(None);
    };
    let mut sql = Sql::new(DbBackend::Sqlite);
    sql.push("SELECT CAST(COUNT(*) AS BIGINT) AS n, CAST(COALESCE(MAX(id), 0) AS BIGINT) AS last FROM events e WHERE e.id > ")
        .bind(last)
        .push(" AND e.id <= ")
        .bind(latest)
        .push(" AND +e.site_id = ")
        .bind(site_id)
        .push(" AND +e.timestamp >= ")
        .bind(until);
    let Some(row) = db.query_one_raw(sql.statement()).await? else { return Ok(None) };
    let (since, since_last): (i64, i64) = (row.try_get("", "n")?, row.try_get("", "last")?);
    Ok(Some((count + since, if since > 0 { since_last } else { last })))
}

/// The events part of the print on PostgreSQL: the site's events stored
/// with a time from `until` (a day's start) on, as the writer counts them
/// by day in the transactions that store them (`stored_event_days`: two
/// rows, where the tail holds 75k events at 1M and counting them took 7 ms
/// a query), and the table's highest id. The counts start when the table
/// was made and nothing takes them out, so only two prints' difference
/// means anything: the events stored between their snapshots, which
/// `TailPrint::written_since` reads above the earlier's id. A sequence can
/// commit out of order, so one of them may be under that id: then fewer
/// are read than the difference, and the tail is read whole. When the
/// count is `earlier`'s, nothing was stored for the tail since, and
/// `earlier`'s id stands: other sites' writes move the table's highest id,
/// and would otherwise move a quiet site's print with every one.
async fn stored_since(
    db: &impl ConnectionTrait,
    (site_id, until): (i64, i64),
    earlier: Option<TailPrint>,
) -> Result<(i64, i64), DbErr> {
    let mut sql = Sql::new(DbBackend::Postgres);
    sql.push("SELECT CAST(COALESCE((SELECT SUM(events) FROM stored_event_days WHERE site_id = ")
        .bind(site_id)
        .push(" AND day >= ")
        .bind(until)
        .push("), 0) AS BIGINT) AS n, CAST(COALESCE((SELECT MAX(id) FROM events), 0) AS BIGINT) AS last");
    let (count, last): (i64, i64) = match db.query_one_raw(sql.statement()).await? {
        Some(row) => (row.try_get("", "n")?, row.try_get("", "last")?),
        None => (0, 0),
    };
    match earlier {
        Some(TailPrint { events: (earlier_count, earlier_last), .. }) if earlier_count == count => {
            Ok((count, earlier_last))
        }
        _ => Ok((count, last)),
    }
}

/// The stored columns a visit is copied from, in `Column` order after the
/// eight counts and instants.
const COLUMNS: &str = "id, visitor_id, started_at, ended_at, human_event_count, human_pageview_count, \
     event_count, duration_seconds, entry_page, exit_page, source, referrer, channel, utm_source, utm_medium, \
     utm_campaign, utm_content, utm_term, device_type, browser, os, country, region, city";

fn visit_of(row: &QueryResult) -> Result<Visit, DbErr> {
    let mut values: [Option<String>; Column::COUNT] = Default::default();
    for (at, value) in values.iter_mut().enumerate() {
        *value = row.try_get_by_index::<Option<String>>(8 + at)?;
    }
    Ok(Visit {
        id: row.try_get_by_index(0)?,
        visitor: row.try_get_by_index(1)?,
        started: row.try_get_by_index(2)?,
        ended: row.try_get_by_index(3)?,
        human_events: row.try_get_by_index(4)?,
        human_pageviews: row.try_get_by_index(5)?,
        events: row.try_get_by_index(6)?,
        seconds: row.try_get_by_index(7)?,
        values,
    })
}

/// The site's visits begun in `[from, to)`, in order of start, read in
/// chunks on the site's start index.
pub(super) async fn load(db: &impl ConnectionTrait, site_id: i64, from: i64, to: i64) -> Result<Table, DbErr> {
    let backend = db.get_database_backend();
    let mut table = Table::new();
    // Where the last chunk ended, in the start index's order: (start, end, id).
    let mut after: Option<(i64, i64, i64)> = None;
    loop {
        let mut sql = Sql::new(backend);
        sql.push(&format!("SELECT {COLUMNS} FROM tracked_sessions WHERE site_id = "))
            .bind(site_id)
            .push(" AND started_at < ")
            .bind(to);
        match after {
            None => sql.push(" AND started_at >= ").bind(from),
            // A row value: both databases search the index from it.
            Some((started, ended, id)) => sql
                .push(" AND (started_at, ended_at, id) > (")
                .bind(started)
                .push(", ")
                .bind(ended)
                .push(", ")
                .bind(id)
                .push(")"),
        };
        sql.push(&format!(" ORDER BY started_at, ended_at, id LIMIT {LOAD_CHUNK}"));
        let rows = db.query_all_raw(sql.statement()).await?;
        let read = rows.len() as u64;
        for row in &rows {
            let visit = visit_of(row)?;
            after = Some((visit.started, visit.ended, visit.id));
            table.push(visit);
        }
        if read < LOAD_CHUNK {
            break;
        }
    }
    table.seal();
    Ok(table)
}

/// The human events and pageviews in `span`, per bucket, of the visits
/// `ids` (those an edge cuts), looked up by visit: a month's edges and
/// midnights cut a few in a hundred.
pub(super) async fn cut_pieces(
    db: &impl ConnectionTrait,
    site_id: i64,
    (span, buckets): (Span, Option<&Buckets>),
    ids: Vec<i64>,
) -> Result<Pieces, DbErr> {
    let mut pieces = Pieces::new();
    if ids.is_empty() {
        return Ok(pieces);
    }
    let bucket = match buckets {
        Some(buckets) => buckets.sql("e.timestamp"),
        None => "CAST(0 AS BIGINT)".to_owned(),
    };
    let mut sql = Sql::new(db.get_database_backend());
    sql.push(&format!(
        "SELECT e.session_id AS sid, {bucket} AS t, COUNT(*) AS n_events, \
         SUM(CASE WHEN e.event_type = 'pageview' THEN 1 ELSE 0 END) AS n_pageviews FROM events e WHERE e.session_id IN "
    ));
    // `+` keeps the site's time index out: SQLite would read the span's
    // every event through it (0.74 s at 1M events, not 7 ms by visit).
    sql.in_ids(ids)
        .push(" AND +e.site_id = ")
        .bind(site_id)
        .push(" AND e.is_bot = ")
        .bind(false)
        .push(" AND e.timestamp >= ")
        .bind(span.from)
        .push(" AND e.timestamp < ")
        .bind(span.to)
        .push(" GROUP BY 1, 2");
    for row in db.query_all_raw(sql.statement()).await? {
        let n_events: i64 = row.try_get("", "n_events")?;
        let n_pageviews: Option<i64> = row.try_get("", "n_pageviews")?;
        let piece = (row.try_get::<i64>("", "t")?, n_events, n_pageviews.unwrap_or(0));
        pieces.entry(row.try_get::<i64>("", "sid")?).or_default().push(piece);
    }
    Ok(pieces)
}

/// The site's human events in `[from, to)`, in the order they happened,
/// read in chunks on the site's time index (whose order, on both
/// databases, is time and then id).
pub(super) async fn load_events(
    db: &impl ConnectionTrait,
    site_id: i64,
    from: i64,
    to: i64,
) -> Result<EventTable, DbErr> {
    let backend = db.get_database_backend();
    let mut table = EventTable::new();
    // The last event read: (time, id).
    let mut after: Option<(i64, i64)> = None;
    loop {
        let mut sql = Sql::new(backend);
        sql.push(&format!("SELECT {EVENT_COLUMNS} FROM events e WHERE e.site_id = "))
            .bind(site_id)
            .push(" AND e.is_bot = ")
            .bind(false)
            .push(" AND e.timestamp < ")
            .bind(to);
        match after {
            None => sql.push(" AND e.timestamp >= ").bind(from),
            // The bound on time alone lets both databases search the index.
            Some((at, id)) => sql
                .push(" AND e.timestamp >= ")
                .bind(at)
                .push(" AND (e.timestamp > ")
                .bind(at)
                .push(" OR e.id > ")
                .bind(id)
                .push(")"),
        };
        sql.push(&format!(" ORDER BY e.timestamp, e.id LIMIT {EVENT_CHUNK}"));
        let rows = db.query_all_raw(sql.statement()).await?;
        let read = rows.len() as u64;
        for row in &rows {
            let (id, event) = stored_event_of(row)?;
            after = Some((event.at, id));
            table.push(event);
        }
        if read < EVENT_CHUNK {
            break;
        }
    }
    table.seal();
    Ok(table)
}

/// What an event of the copies is read as, in the order `stored_event_of`
/// takes it.
const EVENT_COLUMNS: &str = "e.id, e.timestamp, e.visitor_id, e.session_id, \
     CAST(CASE e.event_type WHEN 'pageview' THEN 0 WHEN 'custom_event' THEN 1 ELSE 2 END AS INTEGER) AS kind, \
     e.page, CASE WHEN e.event_type = 'pageview' THEN 'pageview' ELSE e.event_name END AS name";

/// An event row of `EVENT_COLUMNS`, and its id.
fn stored_event_of(row: &QueryResult) -> Result<(i64, StoredEvent), DbErr> {
    let event = StoredEvent {
        at: row.try_get_by_index(1)?,
        visitor: row.try_get_by_index(2)?,
        visit: row.try_get_by_index(3)?,
        kind: Kind::of_code(row.try_get_by_index(4)?),
        page: row.try_get_by_index(5)?,
        name: row.try_get_by_index(6)?,
    };
    Ok((row.try_get_by_index(0)?, event))
}

/// An event stored since a tail was read, bots' included: each names a
/// visit it may have changed.
pub(super) struct Written {
    pub id: i64,
    pub is_bot: bool,
    pub event: StoredEvent,
}

/// Ids a tail's refresh may walk past its print's last event: every
/// event stored since, of every site, is one id (or a gap), so this bounds
/// its work; past it the tail is read again whole.
pub(super) const REFRESH_SPAN: i64 = 50_000;

impl TailPrint {
    /// The events of the site begun since `until` that `self` counts and
    /// `earlier` does not, in the order they happened, when those stored
    /// under ids above `earlier`'s last are all of them: else (fewer events
    /// than before, or one stored under a lower id after `earlier` was read,
    /// as PostgreSQL's sequence can commit out of order) `None`, and the
    /// tail is read again whole.
    pub(super) async fn written_since(
        &self,
        earlier: TailPrint,
        db: &impl ConnectionTrait,
        (site_id, until): (i64, i64),
    ) -> Result<Option<Vec<Written>>, DbErr> {
        let ((count, last), (earlier_count, earlier_last)) = (self.events, earlier.events);
        if count < earlier_count || last < earlier_last || last - earlier_last > REFRESH_SPAN {
            return Ok(None);
        }
        let mut written = Vec::new();
        if last > earlier_last {
            let mut sql = Sql::new(db.get_database_backend());
            // By id, within the ids since `earlier` (`+` keeps the site's
            // indexes out: the site's time index would walk the whole tail).
            sql.push(&format!("SELECT {EVENT_COLUMNS}, e.is_bot FROM events e WHERE e.id > "))
                .bind(earlier_last)
                .push(" AND e.id <= ")
                .bind(last)
                .push(" AND +e.site_id = ")
                .bind(site_id)
                .push(" AND +e.timestamp >= ")
                .bind(until)
                .push(" ORDER BY e.timestamp, e.id");
            for row in db.query_all_raw(sql.statement()).await? {
                let (id, event) = stored_event_of(&row)?;
                written.push(Written { id, is_bot: row.try_get_by_index(7)?, event });
            }
        }
        // Every event `self` counts and `earlier` does not was stored since
        // `earlier`'s snapshot, on SQLite above its last id, on PostgreSQL
        // nearly always; those read are all of them when there are as many.
        Ok((earlier_count + written.len() as i64 == count).then_some(written))
    }

    /// Whether this print counts more events than `other`: it was read on
    /// a later snapshot (stored events are only removed with the copy).
    pub(super) fn counts_more_than(&self, other: &TailPrint) -> bool {
        self.events.0 > other.events.0
    }

    /// Whether `table` holds the visits begun since `until` as the print
    /// counts them (how many, the last id, the sums of starts and ends):
    /// what a refreshed tail must.
    pub(super) fn counts_visits_of(&self, table: &Table, until: i64) -> bool {
        table.print(until) == self.visits
    }
}

/// Each visit begun since `until` as its start index holds it: (id, start,
/// end), read as one text (thousands of rows each handed over cost more
/// than the statement). An engagement ping moves a visit's end or start
/// without storing an event: a refresh finds those visits here.
pub(super) async fn tail_keys(
    db: &impl ConnectionTrait,
    site_id: i64,
    until: i64,
) -> Result<Vec<(i64, i64, i64)>, DbErr> {
    let backend = db.get_database_backend();
    let key = "CAST(id AS TEXT) || ',' || CAST(started_at AS TEXT) || ',' || CAST(ended_at AS TEXT)";
    let joined =
        if backend == DbBackend::Postgres { format!("string_agg({key}, ',')") } else { format!("group_concat({key})") };
    let mut sql = Sql::new(backend);
    sql.push(&format!("SELECT {joined} AS keys FROM tracked_sessions WHERE site_id = "))
        .bind(site_id)
        .push(" AND started_at >= ")
        .bind(until);
    let joined: Option<String> = match db.query_one_raw(sql.statement()).await? {
        Some(row) => row.try_get("", "keys")?,
        None => None,
    };
    let numbers = joined
        .iter()
        .flat_map(|joined| joined.split(','))
        .map(|number| number.parse::<i64>().map_err(|_| DbErr::Custom(format!("not a visit's key: {number}"))));
    let numbers = numbers.collect::<Result<Vec<i64>, DbErr>>()?;
    Ok(numbers.chunks_exact(3).map(|key| (key[0], key[1], key[2])).collect())
}

/// The site's visits of `ids` begun since `until`, as `load` reads them.
pub(super) async fn visits_by_id(
    db: &impl ConnectionTrait,
    site_id: i64,
    until: i64,
    ids: &[i64],
) -> Result<Vec<Visit>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = Sql::new(db.get_database_backend());
    sql.push(&format!("SELECT {COLUMNS} FROM tracked_sessions WHERE id IN "))
        .in_ids(ids.to_vec())
        .push(" AND +site_id = ")
        .bind(site_id)
        .push(" AND started_at >= ")
        .bind(until);
    db.query_all_raw(sql.statement()).await?.iter().map(visit_of).collect()
}
