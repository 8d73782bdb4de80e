//! The network behind a visit (design §18): `ASN_DB_PATH` as MaxMind-format
//! files and as ip-location-db CSV, built here; a company's network makes an
//! account until an identify names a better one, an ISP's makes none, a
//! hosting provider's traffic is bot traffic; the address is never stored.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{
    Client, TestApp, apps_with,
    traffic::{DESKTOP_UA, pageview},
};
use serde_json::{Value, json};

/// Addresses of the fixtures: a company, an ISP, a cloud, a company on IPv6.
const OFFICE: &str = "198.51.100.7";
const HOME: &str = "203.0.113.20";
const CLOUD: &str = "192.0.2.44";
const OFFICE_V6: &str = "2001:db8:5::9";

fn mmdb_pair(dir: &Path) -> String {
    use maxminddb_writer::{Database, metadata::IpVersion, paths::IpAddrWithMask};
    let write = |version: IpVersion, name: &str, nets: &[(&str, u8, u32, &str)]| {
        let mut db = Database::default();
        db.metadata.ip_version = version;
        db.metadata.database_type = "GeoLite2-ASN".to_owned();
        db.metadata.languages = vec!["en".to_owned()];
        db.metadata.binary_format_major_version = 2;
        for (net, mask, asn, org) in nets {
            let value = db
                .insert_value(json!({ "autonomous_system_number": asn, "autonomous_system_organization": org }))
                .unwrap();
            db.insert_node(IpAddrWithMask::new(net.parse().unwrap(), *mask), value);
        }
        let path = dir.join(name);
        db.write_to(std::fs::File::create(&path).unwrap()).unwrap();
        path.display().to_string()
    };
    let v4 = write(
        IpVersion::V4,
        "asn-ipv4.mmdb",
        &[
            ("198.51.100.0", 24, 64500, "Acme <Networks> & Co"),
            ("203.0.113.0", 24, 7922, "Comcast Cable"),
            ("192.0.2.0", 24, 16509, "Amazon.com, Inc."),
        ],
    );
    let v6 = write(IpVersion::V6, "asn-ipv6.mmdb", &[("2001:db8:5::", 48, 64501, "Beta GmbH")]);
    format!("{v4},{v6}")
}

fn csv_pair(dir: &Path) -> String {
    let v4 = dir.join("asn-ipv4.csv");
    std::fs::write(
        &v4,
        "198.51.100.0,198.51.100.255,64500,\"Acme <Networks> & Co\"\n\
         203.0.113.0,203.0.113.255,7922,Comcast Cable\n\
         192.0.2.0,192.0.2.255,16509,\"Amazon.com, Inc.\"\n",
    )
    .unwrap();
    let v6 = dir.join("asn-ipv6.csv");
    std::fs::write(&v6, "2001:db8:5::,2001:db8:5:ffff:ffff:ffff:ffff:ffff,64501,Beta GmbH\n").unwrap();
    format!("{},{}", v4.display(), v6.display())
}

async fn visit(app: &TestApp, site: i64, vid: &str, ip: &str) {
    let xff = [("x-forwarded-for", ip)];
    app.collect_with(pageview(site, vid, "https://net.example/pricing"), DESKTOP_UA, &xff).await.expect(202);
}

async fn account(client: &Client, site: i64, vid: &str) -> Value {
    let answer = client
        .graphql(
            "query($s: Int!, $v: ID!) { visitor(siteId: $s, id: $v) { account { key name source } } }",
            json!({ "s": site, "v": vid }),
        )
        .await;
    answer["data"]["visitor"]["account"].clone()
}

async fn networks_make_accounts(setting: String) {
    for app in apps_with(|config| {
        config.asn_db_path = Some(setting.clone());
        config.trust_proxy = leadtrail::config::TrustProxy::Xff;
    })
    .await
    {
        let (client, site) = app.user_with_site("Net", "net.example").await;
        visit(&app, site, "office", OFFICE).await;
        visit(&app, site, "home", HOME).await;
        visit(&app, site, "cloud", CLOUD).await;
        visit(&app, site, "office-v6", OFFICE_V6).await;
        app.state.writer.flush().await;

        // A company's network: its account, named by the organisation.
        let office = app.visitor(site, "office").await;
        assert_eq!((office.asn, office.network.as_deref()), (Some(64500), Some("Acme <Networks> & Co")));
        assert_eq!(
            account(&client, site, "office").await,
            json!({ "key": "asn:64500", "name": "Acme <Networks> & Co", "source": "network" })
        );
        assert_eq!(account(&client, site, "office-v6").await["key"], "asn:64501", "IPv6");
        // An ISP's: the network is known, but it is no company.
        let home = app.visitor(site, "home").await;
        assert_eq!((home.asn, home.account_key), (Some(7922), None));
        // A hosting provider's: bot traffic, out of the lists and the stats.
        assert!(app.visitor(site, "cloud").await.is_bot);
        let list = client.get(&format!("/api/visitor?siteId={site}&timeRange=all")).await.expect(200).clone();
        let listed: Vec<&str> =
            list["visitors"].as_array().unwrap().iter().map(|v| v["tracker_vid"].as_str().unwrap()).collect();
        assert!(!listed.contains(&"cloud") && listed.contains(&"office"), "{listed:?}");
        let stats = client.get(&format!("/api/stats?siteId={site}&timeRange=24h")).await.expect(200).clone();
        assert_eq!(stats["overview"]["unique_visitors"], 3, "{stats}");
        let bots =
            client.get(&format!("/api/visitor?siteId={site}&timeRange=all&filter=bot")).await.expect(200).clone();
        assert_eq!(bots["total"], 1);

        // The leads list filters by the network's account.
        let acme = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&account=asn:64500")).await;
        assert_eq!(acme.expect(200)["total"], 1);

        // An identify with a work email moves the visitor to that company; a
        // later visit from the office network does not move it back. A
        // gmail.com identify leaves an ISP visitor without an account.
        client.identify(json!({ "siteId": site, "tracker_vid": "office", "email": "pat@acme.com" })).await.expect(200);
        client.identify(json!({ "siteId": site, "tracker_vid": "home", "email": "pat@gmail.com" })).await.expect(200);
        app.state.writer.flush().await;
        visit(&app, site, "office", OFFICE).await;
        app.state.writer.flush().await;
        assert_eq!(
            account(&client, site, "office").await,
            json!({ "key": "acme.com", "name": "acme.com", "source": "email" })
        );
        assert_eq!(app.visitor(site, "office").await.asn, Some(64500), "the network is still kept");
        assert_eq!(account(&client, site, "home").await, Value::Null);

        // A click keeps its network too.
        client.create_link(json!({ "siteId": site, "destinationUrl": "https://net.example/", "slug": "go" })).await;
        let location = app.click("/l/net-example/go", &[("x-forwarded-for", OFFICE)]).await;
        let key =
            url::Url::parse(&location).unwrap().query_pairs().find(|(k, _)| k == "lt_click").unwrap().1.into_owned();
        let landing = pageview(site, "office", &format!("https://net.example/?lt_click={key}"));
        app.collect_with(landing, DESKTOP_UA, &[("x-forwarded-for", OFFICE)]).await.expect(202);
        let clicks = app.clicks().await;
        assert_eq!(clicks[0].tracker_vid.as_deref(), Some("office"));
        assert_eq!((clicks[0].asn, clicks[0].network.as_deref()), (Some(64500), Some("Acme <Networks> & Co")));

        // Markup in an organisation's name is escaped on the pages.
        let page = client.get(&format!("/leads?range=all&site={site}&account=asn:64501")).await;
        assert_eq!(page.status.as_u16(), 200);
        assert!(!page.text.contains("<Networks>"), "escaped");
        let profile = client.get(&format!("/visitor/office?site={site}")).await;
        assert_eq!(profile.status.as_u16(), 200);
        assert!(profile.text.contains("Acme &#60;Networks&#62; &#38; Co (AS64500)"), "the network on the profile");
        assert!(profile.text.contains("acme.com"), "the account on the profile");
        assert!(!profile.text.contains("<Networks>"), "escaped");

        // No address is stored anywhere: not in the SQLite file, nor its log.
        if app.backend == "sqlite" {
            let path =
                app.state.config.database_url.trim_start_matches("sqlite://").split('?').next().unwrap().to_owned();
            for file in [path.clone(), format!("{path}-wal")] {
                let bytes = std::fs::read(&file).unwrap_or_default();
                for ip in [OFFICE, HOME, CLOUD, OFFICE_V6] {
                    assert!(!bytes.windows(ip.len()).any(|w| w == ip.as_bytes()), "{ip} in {file}");
                }
            }
        }

        // Erasure takes the network with the person, from the click too.
        client.delete(&format!("/api/visitor/office?siteId={site}")).await.expect(200);
        let clicks = app.clicks().await;
        assert_eq!((clicks[0].asn, clicks[0].network.as_deref()), (None, None));
    }
}

#[tokio::test]
async fn mmdb_networks_make_accounts_and_bots() {
    let dir = tempfile::tempdir().unwrap();
    networks_make_accounts(mmdb_pair(dir.path())).await;
}

#[tokio::test]
async fn csv_networks_make_accounts_and_bots() {
    let dir = tempfile::tempdir().unwrap();
    networks_make_accounts(csv_pair(dir.path())).await;
}

/// A changed file is read again without a restart; a broken one leaves the
/// last good one in use.
#[tokio::test]
async fn the_database_reloads_when_its_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("asn.csv");
    std::fs::write(&path, "198.51.100.0,198.51.100.255,64500,Acme\n").unwrap();
    let asn = leadtrail::enrich::network::AsnDb::open(&path.display().to_string()).unwrap();
    let office: std::net::IpAddr = OFFICE.parse().unwrap();
    assert_eq!(asn.lookup(office).map(|n| n.org), Some("Acme".to_owned()));
    std::fs::write(&path, "198.51.100.0,198.51.100.255,64502,Acme Renamed\n").unwrap();
    asn.reload();
    assert_eq!(asn.lookup(office).map(|n| (n.asn, n.org)), Some((64502, "Acme Renamed".to_owned())));
    std::fs::write(&path, "garbage,row\n1,2\n").unwrap();
    asn.reload();
    assert_eq!(asn.lookup(office).map(|n| n.asn), Some(64502), "the last good file stays");
}

/// A missing or corrupt file stops the binary at start with a message that
/// names the setting and the file, never a panic.
#[test]
fn a_bad_file_is_a_clear_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.mmdb");
    std::fs::write(&corrupt, b"not a maxmind database").unwrap();
    let missing = dir.path().join("missing.csv");
    for path in [corrupt, missing] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_leadtrail"))
            .env("DATABASE_URL", format!("sqlite://{}?mode=rwc", dir.path().join("db.sqlite").display()))
            .env("PORT", common::process::free_port().to_string())
            .env("ASN_DB_PATH", &path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{stderr}");
        assert!(stderr.contains("ASN_DB_PATH") && stderr.contains(&path.display().to_string()), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// The running binary logs no address, at the most talkative level.
#[tokio::test]
async fn no_log_line_holds_an_address() {
    let dir = tempfile::tempdir().unwrap();
    let setting = csv_pair(dir.path());
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let port = common::process::free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_leadtrail"))
        .env("DATABASE_URL", format!("sqlite://{}?mode=rwc", dir.path().join("db.sqlite").display()))
        .env("HOST", "127.0.0.1")
        .env("PORT", port.to_string())
        .env("BASE_URL", &base)
        .env("ASN_DB_PATH", &setting)
        .env("TRUST_PROXY", "xff")
        .env("RUST_LOG", "trace")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    let mut ready = false;
    for _ in 0..200 {
        if http.get(format!("{base}/health/ready")).send().await.is_ok_and(|r| r.status().is_success()) {
            ready = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(ready, "the binary started");
    // Unknown site: refused after the lookup; the address must not be in the refusal either.
    for ip in [OFFICE, OFFICE_V6] {
        http.post(format!("{base}/api/collect"))
            .header("x-forwarded-for", ip)
            .header("user-agent", DESKTOP_UA)
            .body(pageview(999, "v", "https://net.example/").to_string())
            .send()
            .await
            .unwrap();
    }
    child.kill().ok();
    child.wait().ok();
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(text.len() > 100, "the log was written: {text}");
    for ip in [OFFICE, OFFICE_V6] {
        assert!(!text.contains(ip), "{ip} in the log:\n{text}");
    }
}

/// A site's own network lists come before the shipped ones: its hosting
/// networks are bot traffic, its ISPs make no account; bad numbers are
/// refused beside their field, in the API and on the settings page.
#[tokio::test]
async fn a_site_extends_the_network_lists() {
    use common::web::{expect_page, post_form};
    let dir = tempfile::tempdir().unwrap();
    let setting = csv_pair(dir.path());
    for app in apps_with(|config| {
        config.asn_db_path = Some(setting.clone());
        config.trust_proxy = leadtrail::config::TrustProxy::Xff;
    })
    .await
    {
        let (client, site) = app.user_with_site("Lists", "net.example").await;
        let saved = client
            .put(&format!("/api/sites/{site}"), json!({ "hostingAsns": [64501], "ispAsns": [64500, 64500] }))
            .await;
        saved.expect(200);
        let shown = client.graphql(&format!("{{ site(id: {site}) {{ hostingAsns ispAsns }} }}"), json!({})).await;
        assert_eq!(shown["data"]["site"], json!({ "hostingAsns": [64501], "ispAsns": [64500] }));
        visit(&app, site, "office", OFFICE).await;
        visit(&app, site, "office-v6", OFFICE_V6).await;
        app.state.writer.flush().await;
        let office = app.visitor(site, "office").await;
        assert_eq!((office.asn, office.account_key, office.is_bot), (Some(64500), None, false), "an ISP here");
        assert!(app.visitor(site, "office-v6").await.is_bot, "a hosting network here");

        for (body, field) in [
            (json!({ "hostingAsns": [0] }), "hostingAsns"),
            (json!({ "ispAsns": [4_294_967_296_i64] }), "ispAsns"),
            (json!({ "ispAsns": (1..=1001).collect::<Vec<i64>>() }), "ispAsns"),
        ] {
            let reply = client.put(&format!("/api/sites/{site}"), body).await;
            reply.expect_error(400, "VALIDATION_ERROR");
            assert_eq!(reply.body["field"], field, "{}", reply.text);
        }
        let page = expect_page(&client.get("/settings").await, 200);
        assert!(page.contains("value=\"AS64501\""), "the site's list in the form");
        let refused = post_form(
            &client,
            "/settings",
            &[
                ("action", "save"),
                ("name", "Lists"),
                ("domain", "net.example"),
                ("tracking_mode", "cookie"),
                ("hot_threshold", "70"),
                ("hosting_asns", "AS64501, nonsense"),
            ],
            &[],
        )
        .await;
        let refused = expect_page(&refused, 400);
        assert!(refused.contains("id=\"site-hosting_asns-error\""), "the refusal beside its field");
    }
}
