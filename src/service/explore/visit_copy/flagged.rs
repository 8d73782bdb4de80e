//! The identified and hot among the visitors a whole-visit query counts:
//! looked up by id when they are few, else the site's flagged visitors
//! read as two lists and kept if among them.

use sea_orm::{ConnectionTrait, DbBackend, DbErr};

use crate::service::explore::sql::Sql;

/// How a query counts its identified and hot visitors: the site's hot
/// threshold and the score's SQL at the query's instant.
pub struct Flagged {
    pub site_id: i64,
    pub threshold: i32,
    pub score: String,
}

/// Visitors up to which the identified and hot among them are looked up
/// by id; above it, the site's identified visitors and those near enough
/// the threshold to be hot are read from their indexes instead (at 1M
/// events, 36k visitors by id took 23 ms), and kept if among them.
pub(super) const FLAGGED_BY_ID: usize = 2_000;

impl Flagged {
    /// Those of `visitors` (in order, each once) identified, and those
    /// hot, each in order.
    pub(super) async fn of(&self, db: &impl ConnectionTrait, visitors: Vec<i64>) -> Result<Flags, DbErr> {
        if visitors.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        if visitors.len() <= FLAGGED_BY_ID {
            return self.by_id(db, visitors).await;
        }
        Ok(self.site_wide(db).await?.among(&visitors))
    }

    /// Those of `visitors` identified and hot, looked up by id.
    async fn by_id(&self, db: &impl ConnectionTrait, visitors: Vec<i64>) -> Result<Flags, DbErr> {
        let (mut identified, mut hot) = (Vec::new(), Vec::new());
        // By id: `+` keeps the site's visitor index out.
        let mut sql = Sql::new(db.get_database_backend());
        sql.push(&format!(
            "SELECT v.id AS id, CASE WHEN v.status = 'identified' THEN 1 ELSE 0 END AS identified, \
             CASE WHEN {} >= {} THEN 1 ELSE 0 END AS hot FROM visitors v",
            self.score, self.threshold
        ));
        sql.push(" WHERE v.id IN ").in_ids(visitors).push(" AND +v.site_id = ").bind(self.site_id);
        sql.push(&format!(" AND (v.status = 'identified' OR {} >= {})", self.score, self.threshold));
        for row in db.query_all_raw(sql.statement()).await? {
            let id: i64 = row.try_get("", "id")?;
            if row.try_get::<i32>("", "identified")? == 1 {
                identified.push(id);
            }
            if row.try_get::<i32>("", "hot")? == 1 {
                hot.push(id);
            }
        }
        identified.sort_unstable();
        hot.sort_unstable();
        Ok((identified, hot))
    }

    /// The site's identified visitors and its hot ones, whoever they are:
    /// what any list of visitors is flagged from when it is too long to
    /// look up by id.
    pub(super) async fn site_wide(&self, db: &impl ConnectionTrait) -> Result<SiteFlagged, DbErr> {
        let backend = db.get_database_backend();
        // The site's identified visitors, ids only: the partial index holds
        // them all (SQLite otherwise walks a wider covering index over every
        // visitor of the site: 19 ms against 1 ms at 130k visitors).
        let pinned =
            if backend == DbBackend::Sqlite { format!(" INDEXED BY {IDENTIFIED_INDEX}") } else { String::new() };
        let mut sql = Sql::new(backend);
        open_id_list(&mut sql, 0);
        sql.push(&format!("SELECT v.id AS id FROM visitors v{pinned} WHERE v.site_id = ")).bind(self.site_id);
        sql.push(" AND v.status = 'identified') listed UNION ALL ");
        // The stored score plus the most recency can give is the most a
        // visitor can score, so only those within that reach can be hot.
        open_id_list(&mut sql, 1);
        sql.push("SELECT v.id AS id FROM visitors v WHERE v.site_id = ").bind(self.site_id);
        sql.push(" AND v.is_bot IN (").bind(false).push(", ").bind(true).push(") AND v.score >= ");
        sql.bind(self.threshold.saturating_sub(crate::service::scoring::RECENCY_MAX));
        sql.push(&format!(" AND {} >= {}) listed", self.score, self.threshold));
        let mut flagged = SiteFlagged { identified: Vec::new(), hot: Vec::new() };
        for row in db.query_all_raw(sql.statement()).await? {
            let ids = id_list_of(row.try_get("", "ids")?)?;
            match row.try_get::<i32>("", "list")? {
                0 => flagged.identified = ids,
                _ => flagged.hot = ids,
            }
        }
        Ok(flagged)
    }
}

/// A site's identified and hot visitors, by id.
pub(super) struct SiteFlagged {
    identified: Vec<i64>,
    hot: Vec<i64>,
}

impl SiteFlagged {
    /// Those of `visitors` (sorted) among them, each in order.
    pub(super) fn among(&self, visitors: &[i64]) -> Flags {
        let among = |ids: &[i64]| {
            let mut found: Vec<i64> = ids.iter().copied().filter(|id| visitors.binary_search(id).is_ok()).collect();
            found.sort_unstable();
            found
        };
        (among(&self.identified), among(&self.hot))
    }
}

/// The identified visitors and the hot ones, each in order, once.
pub(super) type Flags = (Vec<i64>, Vec<i64>);

/// The site's partial index of identified visitors (migration m20261222_000001).
const IDENTIFIED_INDEX: &str = "idx_visitors_identified";

/// Opens a statement that joins the ids its inner statement selects (as
/// `id`) into one text, `ids`, tagged `list`; the inner statement follows,
/// then `) listed`. The site's identified visitors are thousands of rows,
/// and each row handed over from the database costs more than its part of
/// the statement.
fn open_id_list(sql: &mut Sql, list: i32) {
    let joined =
        if sql.backend() == DbBackend::Postgres { "string_agg(CAST(id AS TEXT), ',')" } else { "group_concat(id)" };
    sql.push(&format!("SELECT {list} AS list, {joined} AS ids FROM ("));
}

/// The ids of a list `open_id_list` joined (none when it selected none).
fn id_list_of(joined: Option<String>) -> Result<Vec<i64>, DbErr> {
    let Some(joined) = joined.filter(|joined| !joined.is_empty()) else { return Ok(Vec::new()) };
    joined.split(',').map(|id| id.parse().map_err(|_| DbErr::Custom(format!("not an id: {id}")))).collect()
}
