//! Accounts as a list shows them, pure: the writer's rows and the admins'
//! settings in, folded accounts out. A network linked to a domain counts in
//! that domain's account, a renamed account shows its new name, an excluded
//! one (the site owner's own company) is left out unless asked for.

use std::collections::HashMap;

use entity::{account, account_setting};

use super::score::{self, AccountFigures, Reason};

/// An account with everything folded into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub key: String,
    pub name: String,
    pub figures: AccountFigures,
    pub sessions: i64,
    pub first_seen: i64,
    /// Networks (`asn:<number>`) linked to it.
    pub networks: Vec<String>,
    pub excluded: bool,
    pub renamed: bool,
    pub score: i32,
    pub reasons: Vec<Reason>,
    pub hot: bool,
}

/// The keys whose visitors count in `key`'s account: itself and the
/// networks linked to it.
pub fn member_keys(key: &str, settings: &[account_setting::Model]) -> Vec<String> {
    let mut keys = vec![key.to_owned()];
    keys.extend(
        settings
            .iter()
            .filter(|setting| setting.merged_into.as_deref() == Some(key))
            .map(|setting| setting.account_key.clone()),
    );
    keys
}

/// Where a key's visitors count: the account a network is linked to, else itself.
pub fn home_key<'a>(key: &'a str, settings: &'a [account_setting::Model]) -> &'a str {
    settings
        .iter()
        .find(|setting| setting.account_key == key)
        .and_then(|setting| setting.merged_into.as_deref())
        .unwrap_or(key)
}

/// Folds the writer's rows into accounts, scored at `now`; rows with no
/// visitor left (all erased or moved) are dropped. Unordered.
pub fn fold(
    rows: Vec<account::Model>,
    settings: &[account_setting::Model],
    hot_threshold: i32,
    now: i64,
) -> Vec<Account> {
    let by_key: HashMap<&str, &account_setting::Model> =
        settings.iter().map(|setting| (setting.account_key.as_str(), setting)).collect();
    let mut folded: HashMap<String, Account> = HashMap::new();
    for row in rows.into_iter().filter(|row| row.visitors > 0) {
        let home = home_key(&row.account_key, settings).to_owned();
        let merged = home != row.account_key;
        let account = folded.entry(home.clone()).or_insert_with(|| Account {
            key: home.clone(),
            // A domain linked before any of its own visitors came is named by itself.
            name: if merged { home.clone() } else { row.name.clone() },
            figures: AccountFigures::default(),
            sessions: 0,
            first_seen: i64::MAX,
            networks: Vec::new(),
            excluded: false,
            renamed: false,
            score: 0,
            reasons: Vec::new(),
            hot: false,
        });
        if !merged {
            account.name = row.name.clone();
        } else {
            account.networks.push(row.account_key.clone());
        }
        let figures = &mut account.figures;
        figures.people += row.people;
        figures.visitors += row.visitors;
        figures.pageviews += row.pageviews;
        figures.high_value_views += row.high_value_views;
        figures.form_submits += row.form_submits;
        figures.engaged_seconds += row.engaged_seconds;
        figures.last_seen = figures.last_seen.max(row.last_seen);
        account.sessions += row.sessions;
        account.first_seen = account.first_seen.min(row.first_seen);
    }
    folded
        .into_values()
        .map(|mut account| {
            if let Some(setting) = by_key.get(account.key.as_str()) {
                account.excluded = setting.excluded;
                if let Some(name) = setting.display_name.clone() {
                    account.name = name;
                    account.renamed = true;
                }
            }
            if account.name.is_empty() {
                account.name = account.key.clone();
            }
            account.networks.sort();
            let (total, reasons) = score::score(&account.figures, now);
            account.score = total;
            account.reasons = reasons;
            account.hot = total >= hot_threshold;
            account
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn row(key: &str, name: &str, visitors: i64, people: i64, pageviews: i64, last_seen: i64) -> account::Model {
        account::Model {
            id: 0,
            site_id: 1,
            account_key: key.to_owned(),
            name: name.to_owned(),
            visitors,
            people,
            sessions: visitors,
            pageviews,
            engaged_seconds: 0,
            high_value_views: 0,
            form_submits: 0,
            first_seen: last_seen - 1_000,
            last_seen,
        }
    }

    fn setting(key: &str, name: Option<&str>, excluded: bool, merged_into: Option<&str>) -> account_setting::Model {
        account_setting::Model {
            id: 0,
            site_id: 1,
            account_key: key.to_owned(),
            display_name: name.map(str::to_owned),
            excluded,
            merged_into: merged_into.map(str::to_owned),
            updated_at: 0,
        }
    }

    #[test]
    fn networks_fold_into_their_domain_and_settings_apply() {
        let rows = vec![
            row("acme.com", "Acme", 2, 2, 10, NOW - 5_000),
            row("asn:64500", "Acme Networks", 3, 0, 7, NOW - 1_000),
            row("asn:64501", "Beta GmbH", 1, 0, 1, NOW - 9_000),
            row("gone.example", "Gone", 0, 0, 0, NOW),
            row("ours.example", "Us", 4, 4, 40, NOW),
            row("linked-only.example", "", 0, 0, 0, NOW),
            row("asn:64502", "Gamma", 1, 0, 2, NOW - 7_000),
        ];
        let settings = vec![
            setting("asn:64500", None, false, Some("acme.com")),
            setting("acme.com", Some("ACME Corp"), false, None),
            setting("ours.example", None, true, None),
            setting("asn:64502", None, false, Some("new.example")),
        ];
        let mut folded = fold(rows, &settings, 60, NOW);
        folded.sort_by(|a, b| a.key.cmp(&b.key));
        type Summary<'a> = (&'a str, &'a str, i64, i64, i64, bool, Vec<String>);
        let summary: Vec<Summary> = folded
            .iter()
            .map(|a| {
                (
                    a.key.as_str(),
                    a.name.as_str(),
                    a.figures.visitors,
                    a.figures.pageviews,
                    a.figures.last_seen,
                    a.excluded,
                    a.networks.clone(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("acme.com", "ACME Corp", 5, 17, NOW - 1_000, false, vec!["asn:64500".to_owned()]),
                ("asn:64501", "Beta GmbH", 1, 1, NOW - 9_000, false, vec![]),
                ("new.example", "new.example", 1, 2, NOW - 7_000, false, vec!["asn:64502".to_owned()]),
                ("ours.example", "Us", 4, 40, NOW, true, vec![]),
            ]
        );
        let acme = &folded[0];
        assert_eq!(acme.score, acme.reasons.iter().map(|r| r.points).sum::<i32>());
        assert!(acme.renamed);
        assert_eq!(member_keys("acme.com", &settings), ["acme.com", "asn:64500"]);
        assert_eq!(home_key("asn:64500", &settings), "acme.com");
        assert_eq!(home_key("asn:64501", &settings), "asn:64501");
    }
}
