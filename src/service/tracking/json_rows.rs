//! Multi-row statements whose rows travel as one JSON array parameter.
//!
//! A statement with a placeholder per value has a different text for every
//! row count, so SQLite prepares it again for most batches, and building and
//! binding thousands of values costs more than the rows' own insert. Here the
//! text is the same for every batch (one prepared statement per table) and
//! the rows are one text value: SQLite reads it with `json_each`, PostgreSQL
//! with `json_array_elements`. Each row is a JSON array in column order.

use sea_orm::DbBackend;

/// A column and its PostgreSQL type, which the JSON text is cast to there
/// (SQLite's `->>` already answers integers, reals and text as they are).
pub(super) type Column = (&'static str, &'static str);

/// `INSERT INTO table (columns) SELECT … FROM` the rows parameter, ending in
/// `WHERE true` so an `ON CONFLICT` clause may follow (SQLite would otherwise
/// read it as a join constraint).
pub(super) fn insert_select(backend: DbBackend, table: &str, columns: &[Column]) -> String {
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let values: Vec<String> = (0..columns.len()).map(|i| element(backend, i, columns[i].1, "value")).collect();
    format!("INSERT INTO {table} ({}) SELECT {} FROM {} WHERE true", names.join(", "), values.join(", "), rows(backend))
}

/// The table-valued source of the rows parameter, with one `value` per row.
pub(super) fn rows(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => "json_array_elements($1::json)",
        _ => "jsonb_each(?)",
    }
}

/// Element `index` of the row `row`, as SQL of the column's type.
pub(super) fn element(backend: DbBackend, index: usize, pg_type: &str, row: &str) -> String {
    match backend {
        DbBackend::Postgres => format!("({row} ->> {index})::{pg_type}"),
        _ => format!("{row} ->> {index}"),
    }
}
