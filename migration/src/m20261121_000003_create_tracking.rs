use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Where a visitor or session was and what it ran; shared by several tables.
fn client_columns(table: &mut TableCreateStatement) {
    table
        .col(text_null("country"))
        .col(text_null("city"))
        .col(text_null("region"))
        .col(double_null("lat"))
        .col(double_null("lon"))
        .col(text_null("device_type"))
        .col(text_null("browser"))
        .col(text_null("os"));
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One row per (site, tracker_vid) with running aggregates, so lists and
        // scores never rescan events.
        let mut visitors = Table::create();
        visitors
            .table("visitors")
            .col(big_pk_auto("id"))
            .col(big_integer("site_id"))
            .col(text("tracker_vid"))
            .col(text("status").default("anonymous"))
            .col(text_null("identified_user_id"))
            .col(text_null("email"))
            .col(big_integer("first_seen"))
            .col(big_integer("last_seen"))
            .col(integer("total_sessions").default(0))
            .col(integer("total_pageviews").default(0))
            .col(integer("total_events").default(0))
            .col(big_integer("total_time_seconds").default(0))
            .col(integer("clicks").default(0))
            .col(integer("high_value_views").default(0))
            .col(integer("form_submits").default(0))
            .col(integer("score").default(0))
            .col(boolean("is_bot").default(false))
            .col(text_null("first_referrer"))
            .col(text_null("last_referrer"))
            .col(big_integer_null("last_session_id"))
            .foreign_key(&mut cascade(("visitors", "site_id"), "sites"));
        client_columns(&mut visitors);
        manager.create_table(visitors).await?;

        let mut sessions = Table::create();
        sessions
            .table("tracked_sessions")
            .col(big_pk_auto("id"))
            .col(big_integer("site_id"))
            .col(big_integer("visitor_id"))
            .col(text("tracker_vid"))
            .col(big_integer("started_at"))
            .col(big_integer("ended_at"))
            .col(big_integer("duration_seconds").default(0))
            .col(integer("pageview_count").default(0))
            .col(integer("event_count").default(0))
            .col(text_null("entry_page"))
            .col(text_null("exit_page"))
            .col(text_null("referrer"))
            .col(text("channel").default("Direct"))
            .col(text_null("utm_source"))
            .col(text_null("utm_medium"))
            .col(text_null("utm_campaign"))
            .col(text_null("utm_content"))
            .col(text_null("utm_term"))
            .col(boolean("is_bot").default(false))
            .foreign_key(&mut cascade(("tracked_sessions", "site_id"), "sites"))
            .foreign_key(&mut cascade(("tracked_sessions", "visitor_id"), "visitors"));
        client_columns(&mut sessions);
        manager.create_table(sessions).await?;

        manager
            .create_table(
                Table::create()
                    .table("events")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("visitor_id"))
                    .col(big_integer("session_id"))
                    .col(text("event_type"))
                    .col(text("event_name").default(""))
                    .col(text("page"))
                    .col(text_null("page_title"))
                    .col(text_null("referrer"))
                    // JSON object.
                    .col(text("props").default("{}"))
                    .col(big_integer("engaged_ms").default(0))
                    .col(boolean("is_bot").default(false))
                    .col(big_integer("timestamp"))
                    .foreign_key(&mut cascade(("events", "site_id"), "sites"))
                    .foreign_key(&mut cascade(("events", "visitor_id"), "visitors"))
                    .foreign_key(&mut cascade(("events", "session_id"), "tracked_sessions"))
                    .to_owned(),
            )
            .await?;

        // Every identify call is kept; the latest one is the visitor's identity.
        manager
            .create_table(
                Table::create()
                    .table("identities")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("visitor_id"))
                    .col(text("tracker_vid"))
                    .col(text_null("user_id"))
                    .col(text_null("email"))
                    .col(text_null("name"))
                    .col(text_null("company"))
                    .col(text_null("phone"))
                    // JSON object.
                    .col(text("traits").default("{}"))
                    .col(text("source").default("api"))
                    .col(text_null("source_detail"))
                    .col(big_integer("identified_at"))
                    .foreign_key(&mut cascade(("identities", "site_id"), "sites"))
                    .foreign_key(&mut cascade(("identities", "visitor_id"), "visitors"))
                    .to_owned(),
            )
            .await?;

        create_indexes(
            manager,
            vec![
                unique_index("visitors", &["site_id", "tracker_vid"]),
                index("visitors", &["site_id", "last_seen"]),
                index("tracked_sessions", &["site_id", "started_at"]),
                index("tracked_sessions", &["visitor_id", "started_at"]),
                index("events", &["site_id", "timestamp"]),
                index("events", &["session_id", "timestamp"]),
                index("events", &["visitor_id", "timestamp"]),
                index("identities", &["site_id", "tracker_vid"]),
                index("identities", &["visitor_id", "identified_at"]),
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["identities", "events", "tracked_sessions", "visitors"]).await
    }
}
