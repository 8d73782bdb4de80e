//! A page pattern, as the lead desk's `visited` filter and goals read it.

use sea_orm::{
    DbBackend,
    sea_query::{Expr, ExprTrait, IntoColumnRef, LikeExpr, SimpleExpr},
};

use crate::error::{AppError, AppResult};

/// A page pattern: a path where `*` stands for any run of characters, and
/// every other character stands for itself, case and all (paths are
/// case-sensitive). Matched with GLOB on SQLite, whose LIKE ignores case,
/// and with LIKE on PostgreSQL; both read a literal prefix from an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern(String);

impl PathPattern {
    /// `typed` as a pattern; refused as `field` unless it starts with `/` or `*`.
    pub fn parse(field: &str, typed: String) -> AppResult<Self> {
        if !typed.starts_with('/') && !typed.starts_with('*') {
            return Err(AppError::validation(field, "must be a path starting with / (use * for any characters)"));
        }
        Ok(PathPattern(typed))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The pattern as SQLite's GLOB reads it: `*` stays, and `?`, `[` and
    /// `]` are put in brackets so they match themselves.
    pub fn glob(&self) -> String {
        let mut glob = String::new();
        for c in self.0.chars() {
            match c {
                '?' | '[' | ']' => {
                    glob.push('[');
                    glob.push(c);
                    glob.push(']');
                }
                _ => glob.push(c),
            }
        }
        glob
    }

    /// The pattern as LIKE reads it with `ESCAPE '!'`: `*` becomes `%`, and
    /// `%`, `_` and `!` are escaped.
    pub fn like(&self) -> String {
        let mut like = String::new();
        for c in self.0.chars() {
            match c {
                '*' => like.push('%'),
                '%' | '_' | '!' => {
                    like.push('!');
                    like.push(c);
                }
                _ => like.push(c),
            }
        }
        like
    }

    /// `column` matches the pattern, on `backend`.
    pub fn matches(&self, backend: DbBackend, column: impl IntoColumnRef) -> SimpleExpr {
        match backend {
            DbBackend::Sqlite => Expr::col(column).binary(sea_orm::sea_query::BinOper::Custom("GLOB"), self.glob()),
            _ => Expr::col(column).like(LikeExpr::new(self.like()).escape('!')),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_patterns_read_the_same_on_both_backends() {
        // typed, GLOB (SQLite), LIKE with ESCAPE '!' (PostgreSQL)
        let table = [
            ("/pricing", "/pricing", "/pricing"),
            ("/blog/*", "/blog/*", "/blog/%"),
            ("*/demo", "*/demo", "%/demo"),
            ("/50%_off!", "/50%_off!", "/50!%!_off!!"),
            ("/what?[x]", "/what[?][[]x[]]", "/what?[x]"),
        ];
        for (typed, glob, like) in table {
            let pattern = PathPattern::parse("visited", typed.to_owned()).unwrap();
            assert_eq!((pattern.glob().as_str(), pattern.like().as_str()), (glob, like), "{typed}");
        }
    }
}
