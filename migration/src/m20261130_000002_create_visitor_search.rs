use sea_orm_migration::{prelude::*, sea_orm::DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The lead desk's search (design §19) on SQLite: a trigram full-text
/// index over each visitor's words (visitor id, email, user id, account
/// name, and every identity's name, company and email), so a search for
/// any part of them reads the index instead of every visitor. Triggers keep
/// it as the rows change, whoever writes them. It keeps no copy of the text
/// (contentless) and removes a deleted row's entries at once
/// (`secure-delete`), so an erased person's words do not stay in the file.
/// PostgreSQL keeps searching the columns themselves.
const WORDS: &str = "v.tracker_vid || char(31) || COALESCE(v.email, '') || char(31) \
    || COALESCE(v.identified_user_id, '') || char(31) || COALESCE(v.account_name, '') \
    || COALESCE((SELECT group_concat(char(31) || COALESCE(i.name, '') || char(31) || COALESCE(i.company, '') \
    || char(31) || COALESCE(i.email, ''), '') FROM identities i WHERE i.visitor_id = v.id), '')";

/// Rewrites one visitor's row of the index: `{id}` names the visitor.
fn rewrite(id: &str) -> String {
    format!(
        "DELETE FROM visitor_search WHERE rowid = {id}; \
         INSERT INTO visitor_search (rowid, words) SELECT v.id, {WORDS} FROM visitors v WHERE v.id = {id};"
    )
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() != DbBackend::Sqlite {
            return Ok(());
        }
        db.execute_unprepared(
            "CREATE VIRTUAL TABLE visitor_search USING fts5(words, tokenize = 'trigram', content = '', \
             contentless_delete = 1)",
        )
        .await?;
        db.execute_unprepared("INSERT INTO visitor_search (visitor_search, rank) VALUES ('secure-delete', 1)").await?;
        db.execute_unprepared(&format!(
            "INSERT INTO visitor_search (rowid, words) SELECT v.id, {WORDS} FROM visitors v"
        ))
        .await?;
        let triggers = [
            format!("CREATE TRIGGER visitor_search_insert AFTER INSERT ON visitors BEGIN {} END", rewrite("new.id")),
            format!(
                "CREATE TRIGGER visitor_search_update AFTER UPDATE OF tracker_vid, email, identified_user_id, \
                 account_name ON visitors WHEN old.tracker_vid IS NOT new.tracker_vid OR old.email IS NOT new.email \
                 OR old.identified_user_id IS NOT new.identified_user_id OR old.account_name IS NOT new.account_name \
                 BEGIN {} END",
                rewrite("new.id")
            ),
            "CREATE TRIGGER visitor_search_delete AFTER DELETE ON visitors BEGIN \
             DELETE FROM visitor_search WHERE rowid = old.id; END"
                .to_owned(),
            format!(
                "CREATE TRIGGER visitor_search_identity_insert AFTER INSERT ON identities BEGIN {} END",
                rewrite("new.visitor_id")
            ),
            format!(
                "CREATE TRIGGER visitor_search_identity_update AFTER UPDATE ON identities BEGIN {} {} END",
                rewrite("old.visitor_id"),
                rewrite("new.visitor_id")
            ),
            format!(
                "CREATE TRIGGER visitor_search_identity_delete AFTER DELETE ON identities BEGIN {} END",
                rewrite("old.visitor_id")
            ),
        ];
        for trigger in triggers {
            db.execute_unprepared(&trigger).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() != DbBackend::Sqlite {
            return Ok(());
        }
        for trigger in [
            "visitor_search_insert",
            "visitor_search_update",
            "visitor_search_delete",
            "visitor_search_identity_insert",
            "visitor_search_identity_update",
            "visitor_search_identity_delete",
        ] {
            db.execute_unprepared(&format!("DROP TRIGGER IF EXISTS {trigger}")).await?;
        }
        db.execute_unprepared("DROP TABLE IF EXISTS visitor_search").await?;
        Ok(())
    }
}
