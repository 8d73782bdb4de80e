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

    /// `path` matches the pattern, as GLOB and LIKE read it above: the
    /// parts between stars in order, the first at the start and the last
    /// at the end unless a star stands there.
    pub fn matches_path(&self, path: &str) -> bool {
        let mut parts = self.0.split('*');
        let Some(first) = parts.next() else { return true };
        let Some(mut rest) = path.strip_prefix(first) else { return false };
        let middle: Vec<&str> = parts.collect();
        let Some((last, between)) = middle.split_last() else { return rest.is_empty() };
        for part in between {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.len() >= last.len() && rest.ends_with(last)
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

    #[test]
    fn page_patterns_match_paths_as_the_databases_do() {
        // pattern, path, matches
        let table = [
            ("/pricing", "/pricing", true),
            ("/pricing", "/pricing/", false),
            ("/pricing", "/Pricing", false),
            ("/docs*", "/docs", true),
            ("/docs*", "/docs/start", true),
            ("/docs*", "/doc", false),
            ("*/demo", "/demo", true),
            ("*/demo", "/a/b/demo", true),
            ("*/demo", "/demo/x", false),
            ("/a*b*c", "/abc", true),
            ("/a*b*c", "/aXbYc", true),
            ("/a*b*c", "/acb", false),
            ("/a*bc", "/abc", true),
            ("/ab*bc", "/abc", false),
            ("/x**y", "/xy", true),
            ("*", "", true),
            ("/what?[x]", "/what?[x]", true),
            ("/what?[x]", "/whatA[x]", false),
            ("/50%_off!", "/50%_off!", true),
            ("/50%_off!", "/50x-off!", false),
        ];
        for (typed, path, matches) in table {
            let pattern = PathPattern::parse("visited", typed.to_owned()).unwrap();
            assert_eq!(pattern.matches_path(path), matches, "{typed} on {path}");
        }
    }
}
