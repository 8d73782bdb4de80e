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

/// A proxy header's text, trimmed; `None` when absent or blank.
///
/// Cloudflare sends place names such as `São Paulo` as raw UTF-8, which
/// `HeaderValue::to_str` refuses (it admits visible ASCII only), so the bytes are
/// decoded here. Bytes that are not UTF-8 are read as ISO-8859-1, the charset HTTP
/// historically gave header text (RFC 9110 §5.5): every byte maps to a character,
/// so a real place name is never dropped and decoding cannot fail.
fn header_text(bytes: &[u8]) -> Option<String> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.iter().copied().map(char::from).collect(),
    };
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    header_text(headers.get(name)?.as_bytes())
}

fn hex_digit(byte: u8) -> Option<u8> {
    char::from(byte).to_digit(16).and_then(|digit| u8::try_from(digit).ok())
}

/// RFC 3986 percent-decoding. `+` stays `+` (it means a space only in form bodies),
/// and a value that is not well-formed percent-encoded UTF-8 is kept as sent rather
/// than lost, since a stray `%` is likelier part of a name than an encoding. So is
/// one that decodes to control characters: no place name has them, and PostgreSQL
/// refuses a NUL in text, which would fail the write of an event already accepted.
fn percent_decoded(value: String) -> String {
    let bytes = value.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some((&byte, tail)) = rest.split_first() {
        if byte != b'%' {
            decoded.push(byte);
            rest = tail;
            continue;
        }
        let [high, low, after @ ..] = tail else {
            return value;
        };
        let (Some(high), Some(low)) = (hex_digit(*high), hex_digit(*low)) else {
            return value;
        };
        decoded.push(high << 4 | low);
        rest = after;
    }
    match String::from_utf8(decoded) {
        Ok(text) if !text.chars().any(char::is_control) => text.trim().to_owned(),
        _ => value,
    }
}

/// Vercel percent-encodes the city (RFC 3986); its region is an ISO 3166-2 code.
fn decoded_header(headers: &HeaderMap, name: &str) -> Option<String> {
    header(headers, name).map(percent_decoded).filter(|value| !value.is_empty())
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use axum::http::{HeaderName, HeaderValue};

    use super::*;

    #[test]
    fn header_bytes_become_text() {
        for (bytes, expected) in [
            (&b"Berlin"[..], Some("Berlin")),
            ("São Paulo".as_bytes(), Some("São Paulo")),
            ("  Zürich\t".as_bytes(), Some("Zürich")),
            ("東京".as_bytes(), Some("東京")),
            // ISO-8859-1 "São Paulo": not UTF-8, read as Latin-1.
            (&b"S\xe3o Paulo"[..], Some("São Paulo")),
            // A truncated UTF-8 sequence still yields text, never a panic.
            (&b"S\xc3"[..], Some("SÃ")),
            (&b""[..], None),
            (&b"   "[..], None),
        ] {
            assert_eq!(header_text(bytes).as_deref(), expected, "{bytes:?}");
        }
    }

    #[test]
    fn percent_encoding_is_decoded_and_malformed_input_kept() {
        for (raw, expected) in [
            ("S%C3%A3o%20Paulo", "São Paulo"),
            ("T%C5%8Dky%C5%8D", "Tōkyō"),
            ("s%c3%a3o%20paulo", "são paulo"),
            ("New York", "New York"),
            ("São Paulo", "São Paulo"),
            // RFC 3986, not a form body: `+` is a plus sign.
            ("A+B", "A+B"),
            ("%20Lisboa%20", "Lisboa"),
            // Malformed: kept as sent.
            ("100%", "100%"),
            ("50%zz", "50%zz"),
            ("%+f", "%+f"),
            ("%C3", "%C3"),
            ("%FF%FE", "%FF%FE"),
            ("Rio%00", "Rio%00"),
            ("A%0AB", "A%0AB"),
        ] {
            assert_eq!(percent_decoded(raw.to_owned()), expected, "{raw}");
        }
    }

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_bytes(value).unwrap())
            })
            .collect()
    }

    #[test]
    fn proxies_report_non_ascii_places() {
        let sao_paulo = "São Paulo".as_bytes();
        for (trust, sent, expected) in [
            (
                TrustProxy::Cloudflare,
                headers(&[("cf-ipcountry", b"br"), ("cf-ipcity", sao_paulo), ("cf-region", sao_paulo)]),
                Some(("BR", Some("São Paulo"), Some("São Paulo"))),
            ),
            (
                TrustProxy::Vercel,
                headers(&[
                    ("x-vercel-ip-country", b"BR"),
                    ("x-vercel-ip-city", b"S%C3%A3o%20Paulo"),
                    ("x-vercel-ip-country-region", b"SP"),
                ]),
                Some(("BR", Some("São Paulo"), Some("SP"))),
            ),
            (TrustProxy::Vercel, headers(&[("x-vercel-ip-city", sao_paulo)]), Some(("", Some("São Paulo"), None))),
            (TrustProxy::Cloudflare, headers(&[("cf-ipcity", b" "), ("cf-ipcountry", b"XX")]), None),
            (TrustProxy::None, headers(&[("cf-ipcity", sao_paulo)]), None),
        ] {
            let found = from_headers(trust, &sent);
            let found = found
                .as_ref()
                .map(|geo| (geo.country.as_deref().unwrap_or_default(), geo.city.as_deref(), geo.region.as_deref()));
            assert_eq!(found, expected, "{trust:?} {sent:?}");
        }
    }
}

/// Names people use where ISO 3166's English short name is formal or
/// inverted ("Korea (Republic of)").
const COMMON_NAMES: [(&str, &str); 18] = [
    ("BO", "Bolivia"),
    ("CD", "DR Congo"),
    ("FM", "Micronesia"),
    ("GB", "United Kingdom"),
    ("IR", "Iran"),
    ("KP", "North Korea"),
    ("KR", "South Korea"),
    ("LA", "Laos"),
    ("MD", "Moldova"),
    ("MK", "North Macedonia"),
    ("PS", "Palestine"),
    ("RU", "Russia"),
    ("SY", "Syria"),
    ("TW", "Taiwan"),
    ("TZ", "Tanzania"),
    ("US", "United States"),
    ("VE", "Venezuela"),
    ("VN", "Vietnam"),
];

/// The English name of an ISO 3166 alpha-2 code ("DE" → "Germany"); a code
/// that names no country is shown as it is.
pub fn country_name(code: &str) -> &str {
    let upper = code.trim().to_ascii_uppercase();
    if let Some((_, name)) = COMMON_NAMES.iter().find(|(known, _)| *known == upper) {
        return name;
    }
    isocountry::CountryCode::for_alpha2(&upper).map(|country| country.name()).unwrap_or(code)
}

#[cfg(test)]
mod names {
    use super::country_name;

    #[test]
    fn codes_read_as_country_names() {
        let table = [
            ("DE", "Germany"),
            ("de", "Germany"),
            ("GB", "United Kingdom"),
            ("US", "United States"),
            ("KR", "South Korea"),
            ("JP", "Japan"),
            ("XX", "XX"),
            ("", ""),
        ];
        for (code, name) in table {
            assert_eq!(country_name(code), name, "{code}");
        }
    }
}
