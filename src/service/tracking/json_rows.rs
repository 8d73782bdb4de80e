//! Multi-row statements whose rows travel as one JSON array parameter.
//!
//! A statement with a placeholder per value has a different text for every
//! row count, so the database prepares it again for most batches, and
//! building and binding thousands of values costs more than the rows' own
//! insert. Here the text is the same for every batch (one prepared statement
//! per table) and the rows are one text value, each row a JSON array in
//! column order. Both databases read it as binary JSON (`jsonb_each` on
//! SQLite, `jsonb_array_elements` on PostgreSQL): taking an element of a
//! binary row is a lookup, where the text forms parse the row again up to
//! the element for every column (on SQLite `json_each` cost 18% of the
//! redirect's CPU, `jsonb_each` 5.6%).

use sea_orm::{
    ActiveModelTrait, ColumnTrait, DbBackend, EntityName, EntityTrait, IdenStatic, Iterable, Value,
    sea_query::ColumnType,
};
use serde::{Serialize, Serializer, ser::Error as _, ser::SerializeSeq};

/// A column and its PostgreSQL type, which the JSON text is cast to there
/// (SQLite's `->>` already answers integers, reals and text as they are).
pub(super) type Column = (&'static str, &'static str);

/// `INSERT INTO table (columns) SELECT … FROM` the rows parameter, ending in
/// `WHERE true` so an `ON CONFLICT` clause may follow (SQLite would otherwise
/// read it as a join constraint).
pub(super) fn insert_select(backend: DbBackend, table: &str, columns: &[Column]) -> String {
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let values: Vec<String> =
        columns.iter().enumerate().map(|(index, (_, pg_type))| element(backend, index, pg_type, "value")).collect();
    format!("INSERT INTO {table} ({}) SELECT {} FROM {} WHERE true", names.join(", "), values.join(", "), rows(backend))
}

/// The table-valued source of the rows parameter, with one `value` per row.
pub(super) fn rows(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => "jsonb_array_elements($1::jsonb)",
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

/// An insert of entity rows that all set the same columns (those the first
/// row sets), followed by `tail`: its SQL and its one parameter. None when
/// there are no rows.
pub(super) fn insert_models<A: ActiveModelTrait>(
    backend: DbBackend,
    rows: Vec<A>,
    tail: &str,
) -> Result<Option<(String, String)>, serde_json::Error> {
    let Some(first) = rows.first() else { return Ok(None) };
    let set: Vec<<A::Entity as EntityTrait>::Column> =
        <A::Entity as EntityTrait>::Column::iter().filter(|&column| !first.get(column).is_not_set()).collect();
    let columns: Vec<Column> =
        set.iter().map(|column| (column.as_str(), pg_type(column.def().get_column_type()))).collect();
    let table = A::Entity::default().table_name();
    let sql = format!("{} {tail}", insert_select(backend, table, &columns));
    let cells: Vec<Cells> = rows
        .into_iter()
        .map(|mut row| Cells(set.iter().map(|&column| row.take(column).into_value()).collect()))
        .collect();
    Ok(Some((sql, serde_json::to_string(&cells)?)))
}

fn pg_type(column_type: &ColumnType) -> &'static str {
    match column_type {
        ColumnType::SmallInteger => "smallint",
        ColumnType::Integer => "integer",
        ColumnType::BigInteger => "bigint",
        ColumnType::Boolean => "boolean",
        ColumnType::Float => "real",
        ColumnType::Double => "double precision",
        ColumnType::Json => "json",
        ColumnType::JsonBinary => "jsonb",
        _ => "text",
    }
}

/// One row's values, a JSON array. A value the row does not set is `null`.
struct Cells(Vec<Option<Value>>);

impl Serialize for Cells {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_seq(Some(self.0.len()))?;
        for value in &self.0 {
            match value {
                None => row.serialize_element(&None::<()>)?,
                Some(Value::Bool(v)) => row.serialize_element(v)?,
                Some(Value::SmallInt(v)) => row.serialize_element(v)?,
                Some(Value::Int(v)) => row.serialize_element(v)?,
                Some(Value::BigInt(v)) => row.serialize_element(v)?,
                Some(Value::Float(v)) => row.serialize_element(v)?,
                Some(Value::Double(v)) => row.serialize_element(v)?,
                Some(Value::String(v)) => row.serialize_element(v)?,
                Some(other) => return Err(S::Error::custom(format!("no JSON form for {other:?}"))),
            }
        }
        row.end()
    }
}

/// `ON CONFLICT (key) DO UPDATE SET` each of `columns` to the new row's value.
pub(super) fn on_conflict_replace(key: &[&str], columns: &[&str]) -> String {
    let set: Vec<String> = columns.iter().map(|column| format!("{column} = excluded.{column}")).collect();
    format!("ON CONFLICT ({}) DO UPDATE SET {}", key.join(", "), set.join(", "))
}

/// `ON CONFLICT (key) DO UPDATE SET` each of `sums` to the stored value plus
/// the new row's.
pub(super) fn on_conflict_add(table: &str, key: &[&str], sums: &[&str]) -> String {
    let set: Vec<String> =
        sums.iter().map(|column| format!("{column} = {table}.{column} + excluded.{column}")).collect();
    format!("ON CONFLICT ({}) DO UPDATE SET {}", key.join(", "), set.join(", "))
}
