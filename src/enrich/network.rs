//! Which network an IP address belongs to (design §18): its autonomous
//! system number and the organisation that holds it, from an ASN database
//! the operator supplies (`ASN_DB_PATH`): MaxMind-format `.mmdb` files
//! (GeoLite2-ASN, DB-IP ASN Lite, IPinfo Lite, ip-location-db's) or
//! ip-location-db's `start,end,asn,org` CSV files, read into a sorted range
//! table. The address is looked up and forgotten; only the network is kept.
//!
//! Shipped lists say what kind of network it is: hosting and cloud
//! providers (their traffic is bot traffic) and ISPs and mobile carriers
//! (their visitors are people at home, not a company).

use std::{
    collections::{HashMap, HashSet},
    net::IpAddr,
    path::{Path, PathBuf},
    sync::{Arc, LazyLock, RwLock},
    time::{Duration, SystemTime},
};

use maxminddb::Reader;
use serde::Deserialize;

/// A network's kind, from the shipped lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkKind {
    /// A hosting or cloud provider: a data centre, not a person.
    Hosting,
    /// An ISP or mobile carrier: a person, but no company.
    Isp,
    /// Anything else: an organisation's own network.
    Organisation,
}

/// The network behind an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    pub asn: u32,
    pub org: String,
    pub kind: NetworkKind,
}

impl Network {
    /// The network as a site sees it: its own lists (ASNs it marks as
    /// hosting or as ISPs) come before the shipped ones.
    pub fn for_site(&self, hosting: &[u32], isps: &[u32]) -> Network {
        let kind = if hosting.contains(&self.asn) {
            NetworkKind::Hosting
        } else if isps.contains(&self.asn) {
            NetworkKind::Isp
        } else {
            self.kind
        };
        Network { kind, ..self.clone() }
    }

    /// The account a network makes (`asn:<number>`, named by its
    /// organisation), unless it is a provider's.
    pub fn account_key(&self) -> Option<String> {
        (self.kind == NetworkKind::Organisation).then(|| format!("asn:{}", self.asn))
    }
}

/// Parses one of the shipped lists: `<asn> <name>` per line, `#` comments.
fn asn_list(text: &str) -> HashSet<u32> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_whitespace().next()?.trim_start_matches("AS").parse().ok())
        .collect()
}

static HOSTING: LazyLock<HashSet<u32>> = LazyLock::new(|| asn_list(include_str!("../../data/hosting_asns.txt")));
static ISPS: LazyLock<HashSet<u32>> = LazyLock::new(|| asn_list(include_str!("../../data/isp_asns.txt")));

/// The kind of network `asn` is, by the shipped lists.
pub fn kind_of(asn: u32) -> NetworkKind {
    if HOSTING.contains(&asn) {
        NetworkKind::Hosting
    } else if ISPS.contains(&asn) {
        NetworkKind::Isp
    } else {
        NetworkKind::Organisation
    }
}

/// The longest organisation name kept.
const MAX_ORG_CHARS: usize = 200;

fn network(asn: u32, org: &str) -> Option<Network> {
    if asn == 0 {
        return None;
    }
    let org: String = org.trim().chars().filter(|c| !c.is_control()).take(MAX_ORG_CHARS).collect();
    let org = if org.is_empty() { format!("AS{asn}") } else { org };
    Some(Network { asn, org, kind: kind_of(asn) })
}

/// What the MMDB formats in use call the fields: GeoLite2-ASN and DB-IP
/// (`autonomous_system_*`), IPinfo Lite (`asn` as `AS13335`, `as_name`).
#[derive(Deserialize)]
struct MmdbAsn<'a> {
    // Writers store it as uint32 or uint64.
    autonomous_system_number: Option<u64>,
    autonomous_system_organization: Option<&'a str>,
    asn: Option<&'a str>,
    as_name: Option<&'a str>,
}

/// One address range of a CSV file, its ends inclusive, as numbers.
#[derive(Clone, Copy, Debug)]
struct Range {
    start: u128,
    end: u128,
    network: u32,
}

/// A CSV file's ranges, IPv4 and IPv6 apart, sorted by start.
#[derive(Default)]
struct RangeTable {
    v4: Vec<Range>,
    v6: Vec<Range>,
    networks: Vec<Network>,
}

fn address_number(text: &str, v6_file: bool) -> Option<(bool, u128)> {
    let text = text.trim();
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(match ip {
            IpAddr::V4(v4) => (false, u128::from(u32::from(v4))),
            IpAddr::V6(v6) => (true, u128::from(v6)),
        });
    }
    // The `-num` files: a plain number, IPv6 when the file's name says so
    // or the number does not fit IPv4.
    let number: u128 = text.parse().ok()?;
    Some((v6_file || number > u128::from(u32::MAX), number))
}

impl RangeTable {
    fn read(path: &Path) -> Result<Self, String> {
        let v6_file = path.file_name().and_then(|name| name.to_str()).is_some_and(|name| name.contains("ipv6"));
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_path(path)
            .map_err(|err| err.to_string())?;
        let mut table = RangeTable::default();
        let mut interned: HashMap<(u32, String), u32> = HashMap::new();
        for (line, record) in reader.records().enumerate() {
            let record = record.map_err(|err| format!("line {}: {err}", line + 1))?;
            let field = |i: usize| record.get(i).unwrap_or_default();
            let (Some((start_v6, start)), Some((end_v6, end))) =
                (address_number(field(0), v6_file), address_number(field(1), v6_file))
            else {
                // A header row is skipped; any other unreadable row is an error.
                if line == 0 {
                    continue;
                }
                return Err(format!("line {}: not an address range", line + 1));
            };
            if start_v6 != end_v6 || end < start {
                return Err(format!("line {}: not an address range", line + 1));
            }
            let asn: u32 = field(2)
                .trim_start_matches("AS")
                .parse()
                .map_err(|_| format!("line {}: the network number is not a number", line + 1))?;
            let Some(found) = network(asn, field(3)) else { continue };
            let next = table.networks.len() as u32;
            let index = *interned.entry((found.asn, found.org.clone())).or_insert_with(|| {
                table.networks.push(found);
                next
            });
            let range = Range { start, end, network: index };
            if start_v6 { table.v6.push(range) } else { table.v4.push(range) }
        }
        for ranges in [&mut table.v4, &mut table.v6] {
            ranges.sort_by_key(|range| range.start);
        }
        if table.v4.is_empty() && table.v6.is_empty() {
            return Err("no address ranges".to_owned());
        }
        Ok(table)
    }

    fn lookup(&self, ip: IpAddr) -> Option<&Network> {
        let (ranges, number) = match ip {
            IpAddr::V4(v4) => (&self.v4, u128::from(u32::from(v4))),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => (&self.v4, u128::from(u32::from(v4))),
                None => (&self.v6, u128::from(v6)),
            },
        };
        // The last range starting at or before the address, if it reaches it.
        let after = ranges.partition_point(|range| range.start <= number);
        let range = ranges.get(after.checked_sub(1)?)?;
        (number <= range.end).then(|| &self.networks[range.network as usize])
    }
}

/// One opened file.
enum Source {
    Mmdb(Reader<Vec<u8>>),
    Csv(RangeTable),
}

impl Source {
    fn open(path: &Path) -> Result<Self, String> {
        let is_mmdb = path.extension().and_then(|ext| ext.to_str()).is_some_and(|ext| ext.eq_ignore_ascii_case("mmdb"));
        if is_mmdb {
            Reader::open_readfile(path).map(Source::Mmdb).map_err(|err| err.to_string())
        } else {
            RangeTable::read(path).map(Source::Csv)
        }
    }

    fn lookup(&self, ip: IpAddr) -> Option<Network> {
        match self {
            Source::Mmdb(reader) => {
                let found = reader.lookup(ip).ok()?.decode::<MmdbAsn>().ok()??;
                let asn = found
                    .autonomous_system_number
                    .and_then(|asn| u32::try_from(asn).ok())
                    .or_else(|| found.asn.and_then(|asn| asn.trim_start_matches("AS").parse().ok()))?;
                network(asn, found.autonomous_system_organization.or(found.as_name).unwrap_or_default())
            }
            Source::Csv(table) => table.lookup(ip).cloned(),
        }
    }
}

/// The files of `ASN_DB_PATH`, opened; each is asked in turn.
struct Loaded {
    sources: Vec<Source>,
    modified: Vec<Option<SystemTime>>,
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|meta| meta.modified()).ok()
}

fn load(paths: &[PathBuf]) -> Result<Loaded, String> {
    let mut sources = Vec::with_capacity(paths.len());
    for path in paths {
        sources.push(Source::open(path).map_err(|err| format!("{}: {err}", path.display()))?);
    }
    Ok(Loaded { sources, modified: paths.iter().map(|path| modified(path)).collect() })
}

/// The ASN database, reloaded when its files change or on SIGHUP.
pub struct AsnDb {
    paths: Vec<PathBuf>,
    loaded: RwLock<Arc<Loaded>>,
}

/// How often the files' modification times are compared.
const WATCH_EVERY: Duration = Duration::from_secs(5);

impl AsnDb {
    /// Opens `ASN_DB_PATH`: one file or several separated by commas (the
    /// IPv4 and IPv6 files of a pair). A file that is missing or unreadable
    /// is an error naming it.
    pub fn open(setting: &str) -> Result<Arc<Self>, String> {
        let paths: Vec<PathBuf> =
            setting.split(',').map(str::trim).filter(|path| !path.is_empty()).map(PathBuf::from).collect();
        if paths.is_empty() {
            return Err("names no file".to_owned());
        }
        let loaded = load(&paths)?;
        Ok(Arc::new(Self { paths, loaded: RwLock::new(Arc::new(loaded)) }))
    }

    /// The network behind `ip`, from the first file that knows it.
    pub fn lookup(&self, ip: IpAddr) -> Option<Network> {
        let loaded = self.loaded.read().map(|loaded| loaded.clone()).ok()?;
        loaded.sources.iter().find_map(|source| source.lookup(ip))
    }

    /// Reads the files again; on failure the ones in use stay.
    pub fn reload(&self) {
        match load(&self.paths) {
            Ok(loaded) => {
                if let Ok(mut current) = self.loaded.write() {
                    *current = Arc::new(loaded);
                }
                tracing::info!(files = self.paths.len(), "ASN database reloaded");
            }
            Err(err) => tracing::warn!(error = %err, "ASN database not reloaded; the previous one stays in use"),
        }
    }

    fn changed(&self) -> bool {
        let Ok(loaded) = self.loaded.read() else { return false };
        self.paths.iter().zip(&loaded.modified).any(|(path, before)| modified(path) != *before)
    }

    /// Reloads on SIGHUP and when a file's modification time changes; call
    /// it inside the Tokio runtime.
    pub fn watch(self: &Arc<Self>) {
        let db = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(WATCH_EVERY);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            #[cfg(unix)]
            let mut hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).map_err(|err| {
                tracing::warn!(error = %err, "no SIGHUP handler; the ASN database reloads on file changes only");
            });
            loop {
                #[cfg(unix)]
                let hangup = async {
                    match hangups.as_mut() {
                        Ok(signals) => {
                            signals.recv().await;
                        }
                        Err(()) => std::future::pending::<()>().await,
                    }
                };
                #[cfg(not(unix))]
                let hangup = std::future::pending::<()>();
                tokio::select! {
                    _ = ticks.tick() => {
                        if db.changed() {
                            db.reload();
                        }
                    }
                    () = hangup => db.reload(),
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv_table(text: &str, name: &str) -> Result<RangeTable, String> {
        let dir = tempfile::tempdir().map_err(|err| err.to_string())?;
        let path = dir.path().join(name);
        std::fs::write(&path, text).map_err(|err| err.to_string())?;
        RangeTable::read(&path)
    }

    #[test]
    fn csv_ranges_answer_inside_and_nothing_outside() {
        let table = csv_table(
            "ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization\n\
             10.0.0.0,10.0.0.255,64500,\"Acme, Inc.\"\n\
             10.0.2.0,10.0.2.255,16509,Amazon.com\n\
             2001:db8::,2001:db8::ffff,64501,Beta GmbH\n",
            "asn.csv",
        )
        .unwrap();
        let cases = [
            ("10.0.0.0", Some((64500, "Acme, Inc.", NetworkKind::Organisation))),
            ("10.0.0.255", Some((64500, "Acme, Inc.", NetworkKind::Organisation))),
            ("10.0.1.0", None),
            ("9.255.255.255", None),
            ("10.0.2.7", Some((16509, "Amazon.com", NetworkKind::Hosting))),
            ("::ffff:10.0.0.9", Some((64500, "Acme, Inc.", NetworkKind::Organisation))),
            ("2001:db8::1", Some((64501, "Beta GmbH", NetworkKind::Organisation))),
            ("2001:db8::1:0", None),
        ];
        for (ip, expected) in cases {
            let got = table.lookup(ip.parse().unwrap()).map(|n| (n.asn, n.org.as_str(), n.kind));
            assert_eq!(got, expected, "{ip}");
        }
    }

    #[test]
    fn numeric_files_and_bad_rows() {
        let table = csv_table("16777216,16777471,13335,Cloudflare\n", "asn-ipv4-num.csv").unwrap();
        assert_eq!(table.lookup("1.0.0.1".parse().unwrap()).map(|n| n.asn), Some(13335));
        let v6 = csv_table(
            "42540766411282592856903984951653826560,42540766411282592856903984951653826815,64501,Beta\n",
            "asn-ipv6-num.csv",
        )
        .unwrap();
        assert_eq!(v6.lookup("2001:db8::9".parse().unwrap()).map(|n| n.asn), Some(64501));
        for (text, problem) in [
            ("1.0.0.0,1.0.0.255,13335,A\nnot,an,address,row\n", "line 2"),
            ("1.0.0.9,1.0.0.1,13335,A\n", "line 1"),
            ("1.0.0.0,1.0.0.255,many,A\n", "line 1"),
            ("1.0.0.0,::1,5,A\n", "line 1"),
            ("", "no address ranges"),
        ] {
            let err = csv_table(text, "asn.csv").err().unwrap_or_default();
            assert!(err.contains(problem), "{text:?}: {err}");
        }
    }

    #[test]
    fn network_kinds_come_from_the_shipped_lists() {
        for (asn, kind) in [
            (16509, NetworkKind::Hosting),
            (14061, NetworkKind::Hosting),
            (24940, NetworkKind::Hosting),
            (7922, NetworkKind::Isp),
            (3320, NetworkKind::Isp),
            (64500, NetworkKind::Organisation),
        ] {
            assert_eq!(kind_of(asn), kind, "AS{asn}");
        }
        let acme = network(64500, " Acme\u{7}  Corp ").unwrap();
        assert_eq!(acme.org, "Acme  Corp");
        assert_eq!(acme.account_key().as_deref(), Some("asn:64500"));
        assert_eq!(network(7922, "Comcast").unwrap().account_key(), None);
        assert_eq!(network(64501, "").unwrap().org, "AS64501");
        assert!(network(0, "reserved").is_none());
    }
}
