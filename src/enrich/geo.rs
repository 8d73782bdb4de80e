//! Geolocation: a trusted proxy's headers, else a GeoIP2/GeoLite2 City
//! database, else unknown (null, never a guess).

use std::net::IpAddr;

use axum::http::HeaderMap;
use maxminddb::{Reader, geoip2};

use crate::config::TrustProxy;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Geo {
    /// ISO 3166-1 alpha-2 code.
    pub country: Option<String>,
    pub city: Option<String>,
    pub region: Option<String>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
}

/// An open GeoIP2/GeoLite2 City database.
pub struct GeoIp {
    reader: Reader<Vec<u8>>,
}

impl GeoIp {
    pub fn open(path: &str) -> Result<Self, maxminddb::MaxMindDbError> {
        Ok(Self { reader: Reader::open_readfile(path)? })
    }

    pub fn lookup(&self, ip: IpAddr) -> Geo {
        let city = self.reader.lookup(ip).ok().and_then(|found| found.decode::<geoip2::City>().ok().flatten());
        let Some(city) = city else {
            return Geo::default();
        };
        Geo {
            country: city.country.iso_code.map(str::to_owned),
            city: city.city.names.english.map(str::to_owned),
            region: city.subdivisions.first().and_then(|region| region.names.english).map(str::to_owned),
            lat: city.location.latitude,
            lon: city.location.longitude,
        }
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    let value = headers.get(name)?.to_str().ok()?.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// Vercel percent-encodes non-ASCII city names.
fn decoded_header(headers: &HeaderMap, name: &str) -> Option<String> {
    header(headers, name).map(|value| {
        url::form_urlencoded::parse(format!("v={value}").as_bytes())
            .next()
            .map(|(_, decoded)| decoded.into_owned())
            .unwrap_or(value)
    })
}

fn coordinate(headers: &HeaderMap, name: &str) -> Option<f64> {
    header(headers, name)?.parse().ok().filter(|value: &f64| value.is_finite())
}

/// Two letters, upper-case; Cloudflare's `XX` (unknown) and `T1` (Tor) are not countries.
fn country_code(value: Option<String>) -> Option<String> {
    value
        .map(|code| code.to_ascii_uppercase())
        .filter(|code| code.len() == 2 && code.chars().all(|c| c.is_ascii_alphabetic()) && code != "XX")
}

/// Geo from the headers of the proxy that TRUST_PROXY names, if it sent any.
pub fn from_headers(trust: TrustProxy, headers: &HeaderMap) -> Option<Geo> {
    let geo = match trust {
        TrustProxy::Cloudflare => Geo {
            country: country_code(header(headers, "cf-ipcountry")),
            city: header(headers, "cf-ipcity"),
            region: header(headers, "cf-region"),
            lat: coordinate(headers, "cf-iplatitude"),
            lon: coordinate(headers, "cf-iplongitude"),
        },
        TrustProxy::Vercel => Geo {
            country: country_code(header(headers, "x-vercel-ip-country")),
            city: decoded_header(headers, "x-vercel-ip-city"),
            region: header(headers, "x-vercel-ip-country-region"),
            lat: coordinate(headers, "x-vercel-ip-latitude"),
            lon: coordinate(headers, "x-vercel-ip-longitude"),
        },
        TrustProxy::None | TrustProxy::Xff => return None,
    };
    (geo != Geo::default()).then_some(geo)
}

/// Proxy headers first, then the database, then unknown.
pub fn locate(trust: TrustProxy, headers: &HeaderMap, ip: IpAddr, geoip: Option<&GeoIp>) -> Geo {
    from_headers(trust, headers).or_else(|| geoip.map(|db| db.lookup(ip))).unwrap_or_default()
}
