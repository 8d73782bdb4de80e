//! The links pages over HTTP: every form for its owner, with bad values,
//! signed out, for another tenant, and hostile labels.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps, apps_with, scenario,
    web::{LINK_FIELDS, expect_page, link_id, location, post_form, short_status, site_slug},
};
use leadtrail::config::TrustProxy;
use serde_json::json;

fn cloudflare(config: &mut leadtrail::config::Config) {
    config.trust_proxy = TrustProxy::Cloudflare;
}

#[tokio::test]
async fn a_link_is_created_edited_turned_off_and_deleted_through_the_forms() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Lena", "shop.example").await;
        let slug = site_slug(&client, site).await;
        let page = expect_page(&client.get("/links").await, 200);
        assert!(page.contains("New link") && page.contains("No links match."), "{page}");

        let created = post_form(&client, "/links", &LINK_FIELDS, &[]).await;
        let id = link_id(&client, site, "spring").await;
        assert_eq!(location(&created), format!("/links/{id}?done=link-created"));
        let stored = client.graphql(
            "query($id: ID!) { link(id: $id) { campaign source medium content notes linkType tags isActive maxClicks } }",
            json!({ "id": id }),
        ).await;
        assert_eq!(
            stored["data"]["link"],
            json!({ "campaign": "spring-sale", "source": "newsletter", "medium": "email", "content": "hero",
                    "notes": "for the April mailing", "linkType": "ad", "tags": ["q2", "email"], "isActive": true,
                    "maxClicks": null })
        );
        let shown = expect_page(&client.get(&format!("/links/{id}?done=link-created")).await, 200);
        assert!(shown.contains("The link was created."), "{shown}");
        assert!(shown.contains(&format!("/l/{slug}/spring</code>")), "{shown}");
        assert!(shown.contains(&format!(r#"src="/links/{id}/qr.svg""#)));

        // The list shows it with its labels, and filters narrow it.
        let list = expect_page(&client.get("/links").await, 200);
        assert!(list.contains(">spring</a>") && list.contains("spring-sale · newsletter · email · ad"), "{list}");
        for (query, found) in [
            ("?q=SPRING", true),
            ("?q=nothing-like-it", false),
            ("?campaign=spring-sale", true),
            ("?campaign=other", false),
            ("?source=newsletter&tag=q2", true),
            ("?tag=q3", false),
            ("?active=on", true),
            ("?active=off", false),
        ] {
            let html = expect_page(&client.get(&format!("/links{query}")).await, 200);
            assert_eq!(html.contains(">spring</a>"), found, "{query}");
        }
        expect_page(&client.get("/links?active=maybe").await, 400);

        // A click counts on the link's page.
        assert_eq!(short_status(&app, &format!("/l/{slug}/spring")).await, 302);
        let analytics = expect_page(&client.get(&format!("/links/{id}?range=30d")).await, 200);
        assert!(analytics.contains("Clicks by day, last 30 days: 1 click"), "{analytics}");

        // Edit: at most one click, and the link has had one, so the next is 410.
        let mut edit: Vec<(&str, &str)> = LINK_FIELDS.to_vec();
        edit[0] = ("action", "update");
        edit.push(("max_clicks", "1"));
        let saved = post_form(&client, &format!("/links/{id}"), &edit, &[]).await;
        assert_eq!(location(&saved), format!("/links/{id}?done=link-saved"));
        assert_eq!(short_status(&app, &format!("/l/{slug}/spring")).await, 410);
        // Raised again, and then turned off: 410 while off, 302 when on.
        let mut raised = edit.clone();
        *raised.last_mut().unwrap() = ("max_clicks", "");
        location(&post_form(&client, &format!("/links/{id}"), &raised, &[]).await);
        let off = post_form(&client, &format!("/links/{id}"), &[("action", "toggle"), ("active", "0")], &[]).await;
        assert_eq!(location(&off), format!("/links/{id}?done=link-off"));
        assert_eq!(short_status(&app, &format!("/l/{slug}/spring")).await, 410);
        let on = post_form(&client, &format!("/links/{id}"), &[("action", "toggle"), ("active", "1")], &[]).await;
        assert_eq!(location(&on), format!("/links/{id}?done=link-on"));
        assert_eq!(short_status(&app, &format!("/l/{slug}/spring")).await, 302);

        // The QR code, shown and downloaded.
        let qr = client.get(&format!("/links/{id}/qr.svg")).await;
        assert_eq!(qr.status.as_u16(), 200);
        assert_eq!(qr.headers["content-type"], "image/svg+xml");
        assert!(qr.text.contains("<svg"), "{}", qr.text);
        let download = client.get(&format!("/links/{id}/qr.svg?download=1")).await;
        assert_eq!(download.headers["content-disposition"], "attachment; filename=\"qr-spring.svg\"");

        // Delete asks for confirmation first.
        let unconfirmed = post_form(&client, &format!("/links/{id}"), &[("action", "delete")], &[]).await;
        let html = expect_page(&unconfirmed, 400);
        assert!(html.contains("Confirmation: tick the box to confirm"), "{html}");
        let deleted = post_form(&client, &format!("/links/{id}"), &[("action", "delete"), ("confirm", "1")], &[]).await;
        assert_eq!(location(&deleted), "/links?done=link-deleted");
        expect_page(&client.get(&format!("/links/{id}")).await, 404);
        assert_eq!(short_status(&app, &format!("/l/{slug}/spring")).await, 404);
    }
}

#[tokio::test]
async fn link_forms_show_the_api_errors_beside_their_fields() {
    for app in apps().await {
        let (client, _) = app.user_with_site("Lena", "shop.example").await;
        location(&post_form(&client, "/links", &LINK_FIELDS, &[]).await);
        let cases: [(&str, &str, u16, &str); 6] = [
            ("slug", "bad slug!", 400, r#"id="create-slug-error">Slug: must be 1 to"#),
            ("slug", "spring", 409, r#"id="create-slug-error">Slug: this slug is already used on this site"#),
            ("destination", "ftp://files.example/", 400, r#"id="create-destination-error">Destination URL: "#),
            ("max_clicks", "many", 400, r#"id="create-max_clicks-error">Most clicks: must be a whole number"#),
            ("max_clicks", "0", 400, r#"id="create-max_clicks-error">Most clicks: must be at least 1"#),
            ("expires_at", "soon", 400, r#"id="create-expires_at-error">Expires (UTC): must be a date and time"#),
        ];
        for (field, value, status, shows) in cases {
            let mut fields: Vec<(&str, &str)> =
                LINK_FIELDS.iter().filter(|(name, _)| *name != field).copied().collect();
            if field != "slug" {
                fields.retain(|(name, _)| *name != "slug");
            }
            fields.push((field, value));
            let html = expect_page(&post_form(&client, "/links", &fields, &[]).await, status);
            assert!(html.contains(shows), "{field}={value}: {html}");
            // What was typed is kept.
            assert!(html.contains("value=\"spring-sale\""), "{field}={value}");
        }
        let html = expect_page(&post_form(&client, "/links", &[("action", "explode")], &[]).await, 400);
        assert!(html.contains("Action: must be one of create"), "{html}");
    }
}

#[tokio::test]
async fn link_pages_refuse_the_signed_out_strangers_and_unknown_ids() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let id = link_id(&s.client, s.site, "promo").await;
        // The owner sees the click tied to bob.
        let html = expect_page(&s.client.get(&format!("/links/{id}")).await, 200);
        assert!(html.contains(&format!(r#"href="/visitor/bob?site={}""#, s.site)), "{html}");
        assert!(html.contains("Paris, France"), "{html}");

        let signed_out = app.client();
        for path in ["/links".to_owned(), format!("/links/{id}"), format!("/links/{id}/qr.svg")] {
            assert!(location(&signed_out.get(&path).await).starts_with("/login?next="), "{path}");
        }
        let post = post_form(&signed_out, &format!("/links/{id}"), &[("action", "toggle"), ("active", "0")], &[]).await;
        assert!(location(&post).starts_with("/login"));

        let (stranger, own_site) = app.user_with_site("Mallory", "mallory.example").await;
        for path in [
            format!("/links/{id}"),
            format!("/links/{id}?site={own_site}"),
            format!("/links/{id}/qr.svg"),
            format!("/links?site={}", s.site),
            "/links/lnk_999999".to_owned(),
            "/links/not-a-link".to_owned(),
        ] {
            expect_page(&stranger.get(&path).await, 404);
        }
        for (path, fields) in [
            (format!("/links/{id}"), vec![("action", "toggle"), ("active", "0")]),
            (format!("/links/{id}"), vec![("action", "delete"), ("confirm", "1")]),
            (format!("/links?site={}", s.site), LINK_FIELDS.to_vec()),
        ] {
            expect_page(&post_form(&stranger, &path, &fields, &[]).await, 404);
        }
        assert_eq!(short_status(&app, "/l/shop-example/promo").await, 302, "the owner's link still works");
        // A bad range is a 400 page for the owner.
        expect_page(&s.client.get(&format!("/links/{id}?range=1y")).await, 400);
    }
}

#[tokio::test]
async fn collected_and_typed_text_is_escaped_on_the_link_pages() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Lena", "shop.example").await;
        let evil = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>";
        let fields = [
            ("action", "create"),
            ("destination", "https://shop.example/?q=<script>alert(3)</script>"),
            ("slug", "evil"),
            ("campaign", evil),
            ("source", evil),
            ("notes", evil),
            ("tags", "<b>bold</b>, \"quoted\""),
            ("active", "1"),
        ];
        location(&post_form(&client, "/links", &fields, &[]).await);
        let id = link_id(&client, site, "evil").await;
        for path in ["/links".to_owned(), format!("/links/{id}"), "/links?q=%3Cscript%3E".to_owned()] {
            let html = expect_page(&client.get(&path).await, 200);
            assert!(!html.contains("<script>alert"), "{path}");
            assert!(!html.contains("<img src=x"), "{path}");
            assert!(!html.contains("<b>bold"), "{path}");
            assert!(html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"), "{path}: {html}");
        }
    }
}
