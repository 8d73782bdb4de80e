//! `leadtrail seed`: synthetic but realistic traffic for demos and
//! benchmarks. Events, clicks and identifies are built by the same code as
//! the collect, redirect and identify endpoints and stored by the same batch
//! write path; only the HTTP hop is skipped.

use std::sync::Arc;

use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend};
use serde_json::{Map, Value, json};

use entity::{link, site};

use crate::{
    auth::Viewer,
    enrich::{
        Geo,
        network::{self, Network},
        user_agent,
    },
    error::{AppError, AppResult},
    ingest::{collect, redirect, wire::WireEvent},
    service::{
        links::{self, NewLink},
        tracking::{self, ClickCommand, Client, CollectedEvent, IdentifyCommand, WriteOp},
    },
    time::{DAY_MS, HOUR_MS, MINUTE_MS, now_ms},
};

pub struct SeedOptions {
    pub site_id: i64,
    pub visitors: usize,
    /// Traffic spreads over this many days before now.
    pub days: i64,
    /// The same seed makes the same traffic (relative to now).
    pub seed: u64,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SeedReport {
    pub visitors: u64,
    pub bots: u64,
    pub sessions: u64,
    pub events: u64,
    /// Sessions and events of human visitors, as the statistics count them.
    pub human_sessions: u64,
    pub human_events: u64,
    pub clicks: u64,
    pub identified: u64,
}

/// Events per write transaction.
const BATCH_EVENTS: usize = 4000;

const PLACES: [(&str, &str, &str, f64, f64); 8] = [
    ("US", "New York", "NY", 40.71, -74.01),
    ("US", "San Francisco", "CA", 37.77, -122.42),
    ("DE", "Berlin", "BE", 52.52, 13.40),
    ("GB", "London", "ENG", 51.51, -0.13),
    ("FR", "Paris", "IDF", 48.86, 2.35),
    ("IN", "Bengaluru", "KA", 12.97, 77.59),
    ("BR", "São Paulo", "SP", -23.55, -46.63),
    ("JP", "Tokyo", "13", 35.68, 139.69),
];
const USER_AGENTS: [&str; 4] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
];
const BOT_AGENTS: [&str; 2] = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
];
const PAGES: [&str; 10] =
    ["/", "/", "/blog", "/blog/launch", "/docs", "/features", "/about", "/pricing", "/demo", "/contact"];
/// Relative traffic per UTC hour: quiet nights, busy afternoons.
const HOURLY_WEIGHT: [u32; 24] = [2, 1, 1, 1, 1, 2, 3, 5, 7, 9, 10, 10, 10, 11, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2];
/// Seeded links: slug, link type, source, medium, campaign.
const LINKS: [(&str, &str, &str, &str, &str); 3] = [
    ("seed-ad", "ad", "facebook", "cpc", "spring-sale"),
    ("seed-bio", "bio", "instagram", "social", "profile"),
    ("seed-mail", "content", "newsletter", "email", "weekly"),
];

const PLANS: [&str; 3] = ["free", "pro", "team"];
/// Company names are a first word and a second: 128 companies.
const COMPANY_FIRST: [&str; 16] = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Wonka",
    "Soylent",
    "Tyrell",
    "Cyberdyne",
    "Aperture",
    "Vandelay",
    "Dunder",
    "Pied Piper",
    "Massive",
];
const COMPANY_SECOND: [&str; 8] = ["Corp", "Labs", "Systems", "Group", "Industries", "Logistics", "Health", "Capital"];

/// The company of visitor `index`: its name and web domain. Derived from
/// the index, not the random stream, so seeds before accounts stay the same.
fn company(index: usize) -> (String, String) {
    let n = index.wrapping_mul(7_919) % (COMPANY_FIRST.len() * COMPANY_SECOND.len());
    let name = format!("{} {}", COMPANY_FIRST[n % COMPANY_FIRST.len()], COMPANY_SECOND[n / COMPANY_FIRST.len()]);
    let domain = format!("{}.example", name.to_lowercase().replace(' ', "-"));
    (name, domain)
}

/// The network visitor `index` browses from, as an ASN database would say:
/// a quarter from their company's own network (a private-use ASN named by
/// the company), a quarter from a cable ISP, the rest unknown.
fn network(index: usize) -> Option<Network> {
    match index % 4 {
        0 => {
            let asn = 4_200_000_000 + (index.wrapping_mul(7_919) % 128) as u32;
            Some(Network { asn, org: format!("{} Networks", company(index).0), kind: network::kind_of(asn) })
        }
        1 => Some(Network { asn: 7922, org: "Comcast Cable".to_owned(), kind: network::kind_of(7922) }),
        _ => None,
    }
}

/// Where a session comes from.
enum Arrival {
    Direct,
    Referrer(&'static str),
    Campaign(&'static str),
    Link(usize),
}

struct Generator<'a> {
    rng: StdRng,
    site: &'a site::Model,
    links: Vec<Arc<link::Model>>,
    now: i64,
    days: i64,
}

impl Generator<'_> {
    /// A start time in the window, following the diurnal curve, at least two
    /// hours before now so whole sessions fit.
    fn session_start(&mut self) -> i64 {
        let day = self.rng.random_range(0..self.days.max(1));
        let total: u32 = HOURLY_WEIGHT.iter().sum();
        let mut pick = self.rng.random_range(0..total);
        let hour = HOURLY_WEIGHT.iter().position(|&w| {
            if pick < w {
                return true;
            }
            pick -= w;
            false
        });
        let midnight = (self.now - day * DAY_MS).div_euclid(DAY_MS) * DAY_MS;
        let start = midnight + hour.unwrap_or(12) as i64 * HOUR_MS + self.rng.random_range(0..HOUR_MS);
        start.min(self.now - 2 * HOUR_MS)
    }

    fn arrival(&mut self) -> Arrival {
        match self.rng.random_range(0..100) {
            0..35 => Arrival::Direct,
            35..55 => Arrival::Referrer("https://www.google.com/"),
            55..62 => Arrival::Referrer("https://news.ycombinator.com/"),
            62..70 => Arrival::Referrer("https://twitter.com/"),
            70..78 => Arrival::Campaign("utm_source=google&utm_medium=cpc&utm_campaign=brand"),
            78..84 => Arrival::Campaign("utm_source=partner&utm_medium=referral&utm_campaign=integration"),
            _ if self.links.is_empty() => Arrival::Direct,
            _ => Arrival::Link(self.rng.random_range(0..self.links.len())),
        }
    }

    fn wire(&self, vid: &str, url: String, ts: i64) -> WireEvent {
        WireEvent {
            site: self.site.id,
            kind: "pageview".to_owned(),
            tracker_vid: Some(vid.to_owned()),
            url,
            title: None,
            referrer: None,
            event_name: None,
            props: None,
            ts: Some(crate::ingest::wire::WireTime::Millis(ts)),
            engaged_ms: None,
            lt_click: None,
            revenue: None,
        }
    }

    fn event(&self, wire: WireEvent, vid: &str, client: &Arc<Client>) -> AppResult<CollectedEvent> {
        collect::build(wire, self.site, vid.to_owned(), client.clone(), self.now, &|name: &str| name.to_owned())
    }

    /// One visitor's whole history: the operations to store, in time order.
    fn visitor(&mut self, index: usize, report: &mut SeedReport) -> AppResult<Vec<WriteOp>> {
        let vid = format!("seed-{:x}-{index}", self.rng.random::<u32>());
        let is_bot = self.rng.random_range(0..100) < 5;
        let agent = if is_bot {
            *BOT_AGENTS.choose(&mut self.rng).unwrap_or(&BOT_AGENTS[0])
        } else {
            USER_AGENTS[self.rng.random_range(0..USER_AGENTS.len())]
        };
        let (country, city, region, lat, lon) = PLACES[self.rng.random_range(0..PLACES.len())];
        let client = Arc::new(Client {
            info: user_agent::classify_cached(agent),
            geo: Geo {
                country: Some(country.to_owned()),
                city: Some(city.to_owned()),
                region: Some(region.to_owned()),
                lat: Some(lat),
                lon: Some(lon),
            },
            network: network(index),
        });
        // Most visitors come once; some return, a few often.
        let sessions = match self.rng.random_range(0..100) {
            0..60 => 1,
            60..85 => 2,
            85..95 => 3,
            _ => self.rng.random_range(4..9),
        };
        let mut starts: Vec<i64> = (0..sessions).map(|_| self.session_start()).collect();
        starts.sort_unstable();
        // A visit lasts under half an hour; 90 minutes apart, each is its own session.
        starts.dedup_by(|later, earlier| *later - *earlier < 90 * MINUTE_MS);
        report.visitors += 1;
        report.bots += u64::from(is_bot);
        report.sessions += starts.len() as u64;
        if !is_bot {
            report.human_sessions += starts.len() as u64;
        }

        let base = format!("https://{}", self.site.domain);
        let mut ops = Vec::new();
        let mut last_ts = 0;
        for start in starts {
            let mut events = Vec::new();
            let mut ts = start;
            let arrival = if is_bot { Arrival::Direct } else { self.arrival() };
            let mut landing = self.wire(&vid, format!("{base}/"), ts);
            match arrival {
                Arrival::Direct => {}
                Arrival::Referrer(referrer) => landing.referrer = Some(referrer.to_owned()),
                Arrival::Campaign(query) => landing.url = format!("{base}/?{query}"),
                Arrival::Link(which) => {
                    let link = self.links[which].clone();
                    let click_key = redirect::click_key(ts);
                    landing.url = format!(
                        "{base}/?utm_source={}&utm_medium={}&utm_campaign={}&lt_click={click_key}",
                        link.source, link.medium, link.campaign
                    );
                    ops.push(WriteOp::Click(Box::new(ClickCommand {
                        link,
                        click_key,
                        referrer: None,
                        is_bot: false,
                        counted: false,
                        client: client.clone(),
                        created_at: ts - 1000,
                    })));
                    report.clicks += 1;
                }
            }
            events.push(self.event(landing, &vid, &client)?);
            for _ in 1..self.rng.random_range(1..9) {
                ts += self.rng.random_range(10_000..180_000);
                let page = PAGES[self.rng.random_range(0..PAGES.len())];
                events.push(self.event(self.wire(&vid, format!("{base}{page}"), ts), &vid, &client)?);
            }
            if !is_bot && self.rng.random_range(0..100) < 8 {
                ts += self.rng.random_range(5_000..60_000);
                let mut form = self.wire(&vid, format!("{base}/contact"), ts);
                form.kind = "custom_event".to_owned();
                form.event_name = Some("form_submit".to_owned());
                let props: Map<String, Value> = json!({ "form": "contact" }).as_object().cloned().unwrap_or_default();
                form.props = Some(props);
                events.push(self.event(form, &vid, &client)?);
            }
            report.events += events.len() as u64;
            if !is_bot {
                report.human_events += events.len() as u64;
            }
            last_ts = ts;
            ops.push(WriteOp::Events(events));
        }
        if !is_bot && self.rng.random_range(0..100) < 10 {
            report.identified += 1;
            ops.push(WriteOp::Identify(Box::new(IdentifyCommand {
                site_id: self.site.id,
                tracker_vid: vid.clone(),
                user_id: Some(format!("user-{index}")),
                email: Some(format!("person{index}@{}", company(index).1)),
                name: Some(format!("Person {index}")),
                company: Some(company(index).0),
                phone: None,
                traits: json!({ "plan": PLANS[index % PLANS.len()] }).to_string(),
                source: "seed".to_owned(),
                source_detail: None,
                identified_at: last_ts + 1000,
            })));
        }
        Ok(ops)
    }
}

/// Links the seed clicks through; existing ones with the same slug are reused.
async fn seed_links(db: &DatabaseConnection, site: &site::Model) -> AppResult<Vec<Arc<link::Model>>> {
    let viewer = Viewer::ApiKey { org_id: site.org_id, key_id: 0 };
    let mut existing = links::list(db, site.id).await?;
    let mut found = Vec::new();
    for (slug, link_type, source, medium, campaign) in LINKS {
        if let Some(index) = existing.iter().position(|l| l.slug == slug) {
            found.push(Arc::new(existing.swap_remove(index)));
            continue;
        }
        let new = NewLink {
            site_id: site.id,
            destination_url: format!("https://{}/", site.domain),
            slug: Some(slug.to_owned()),
            campaign: Some(campaign.to_owned()),
            source: Some(source.to_owned()),
            medium: Some(medium.to_owned()),
            content: None,
            notes: Some("created by leadtrail seed".to_owned()),
            link_type: Some(link_type.to_owned()),
            is_active: None,
            expires_at: None,
            max_clicks: None,
            tags: None,
        };
        found.push(Arc::new(links::create(db, &viewer, new).await?.0));
    }
    Ok(found)
}

/// Generates and stores the traffic; `progress` hears how many visitors are done.
pub async fn run(db: &DatabaseConnection, options: SeedOptions, progress: impl Fn(u64)) -> AppResult<SeedReport> {
    if options.days < 1 || options.days > 365 {
        return Err(AppError::validation("days", "must be between 1 and 365"));
    }
    // Seeding is an operator's command, like collection it names the site by id.
    let site = crate::service::sites::public_by_ids(db, [options.site_id])
        .await?
        .remove(&options.site_id)
        .ok_or_else(|| AppError::not_found("site"))?;
    let links = seed_links(db, &site).await?;
    let mut generator =
        Generator { rng: StdRng::seed_from_u64(options.seed), site: &site, links, now: now_ms(), days: options.days };
    let mut report = SeedReport::default();
    let mut pending: Vec<WriteOp> = Vec::new();
    let mut pending_events = 0;
    let mut done = 0;
    // The seed writes as the writer does; it hears no cluster signals, so a
    // destination created meanwhile is believed absent for half a minute.
    let quiet = tracking::quiet_sites::QuietSites::default();
    let written = tracking::visitor_values::WrittenValues::default();
    for index in 0..options.visitors {
        let ops = generator.visitor(index, &mut report)?;
        pending_events += ops.iter().map(WriteOp::event_count).sum::<usize>();
        pending.extend(ops);
        done += 1;
        if pending_events >= BATCH_EVENTS || index + 1 == options.visitors {
            let batch: Vec<&WriteOp> = pending.iter().collect();
            tracking::batch::apply(db, &batch, &quiet, &written).await?;
            pending.clear();
            pending_events = 0;
            progress(done);
            done = 0;
        }
    }
    // A bulk load leaves PostgreSQL without planner statistics or a
    // visibility map until autovacuum comes round: the first reads plan
    // blind and visit the heap for every index entry. Give it both now.
    if db.get_database_backend() == DbBackend::Postgres {
        db.execute_unprepared("VACUUM (ANALYZE)").await?;
    }
    Ok(report)
}

pub const DEMO_EMAIL: &str = "demo@leadtrail.example";
pub const DEMO_DOMAIN: &str = "demo.example";

/// The demo account's sign-in and the site its traffic goes to.
pub struct DemoAccount {
    pub email: String,
    pub password: String,
    pub site_id: i64,
}

/// Creates the demo account with a fresh password, or gives the existing one
/// a fresh password, and makes sure it has a site.
pub async fn demo_account(db: &DatabaseConnection, max_sites: u32) -> AppResult<DemoAccount> {
    use crate::service::{sites, users};
    let password = crate::auth::token::random_token()[..20].to_owned();
    let meta = crate::auth::RequestMeta {
        client_ip: std::net::IpAddr::from([127, 0, 0, 1]),
        user_agent: Some("leadtrail seed".to_owned()),
    };
    let user = match users::by_email(db, DEMO_EMAIL).await? {
        Some(user) => users::set_password(db, user.id, password.clone()).await?,
        None => {
            let new = users::NewAccount { name: "Demo", email: DEMO_EMAIL, password: password.clone(), image: None };
            users::sign_up(db, None, false, new, &meta).await?.user
        }
    };
    let viewer = Viewer::User { user_id: user.id, session_id: 0, session_created_at: now_ms() };
    let site_id = match crate::service::access::sites(db, &viewer).await?.into_iter().next() {
        Some(site) => site.id,
        None => {
            let new = sites::NewSite { org_id: None, domain: DEMO_DOMAIN.to_owned(), name: Some("Demo".to_owned()) };
            sites::create(db, &viewer, max_sites, new).await?.id
        }
    };
    Ok(DemoAccount { email: user.email, password, site_id })
}
