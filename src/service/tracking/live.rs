//! The live stream across instances: every stored event reaches this
//! instance's `liveVisitors` subscribers, and, through the cluster's `LIVE`
//! channel, every other instance's. Messages stay under PostgreSQL's NOTIFY
//! limit, several events to a message.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use super::{Activity, EventKind};
use crate::cluster::{Cluster, MAX_PAYLOAD};

/// One stored event as one instance tells the others: (site, visitor, user
/// id, event type, page, time, event name). A tuple, so the JSON is an array
/// and a NOTIFY payload holds as many as it can.
type SignalEvent = (i64, String, Option<String>, String, String, i64, String);

#[derive(Serialize, Deserialize)]
struct LiveSignal {
    origin: u64,
    events: Vec<SignalEvent>,
}

/// Hands committed events to the subscribers here and on other instances.
#[derive(Clone)]
pub struct LiveStream {
    local: broadcast::Sender<Activity>,
    cluster: Arc<Cluster>,
}

impl LiveStream {
    /// The stream on `local`; events other instances store arrive on it too.
    pub fn connect(cluster: Arc<Cluster>, local: broadcast::Sender<Activity>) -> Self {
        let (relay, origin) = (local.clone(), cluster.origin());
        cluster.on_live(move |payload| relay_live(origin, &relay, payload));
        LiveStream { local, cluster }
    }

    /// Events just committed on this instance.
    pub fn publish(&self, activities: Vec<Activity>) {
        if self.cluster.shared() {
            self.cluster.send_live(live_payloads(self.cluster.origin(), &activities));
        }
        for activity in activities {
            // No subscriber is no error.
            self.local.send(activity).ok();
        }
    }
}

/// Splits the events into payloads under PostgreSQL's size limit.
fn live_payloads(origin: u64, activities: &[Activity]) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut signal = LiveSignal { origin, events: Vec::new() };
    let mut size = 0;
    for activity in activities {
        let mut entry = (
            activity.site_id,
            activity.tracker_vid.clone(),
            activity.identified_user_id.clone(),
            activity.event_type.to_owned(),
            activity.page.clone(),
            activity.timestamp,
            activity.event_name.clone(),
        );
        // Measured as sent: escaping can make a page up to six times longer.
        let mut entry_size = serialized_len(&entry);
        if entry_size > MAX_PAYLOAD {
            // A shortened page still shows the event on the other instances.
            entry.4 = entry.4.chars().take(256).collect();
            entry_size = serialized_len(&entry);
            if entry_size > MAX_PAYLOAD {
                continue;
            }
        }
        if size + entry_size > MAX_PAYLOAD && !signal.events.is_empty() {
            payloads.extend(serde_json::to_string(&signal).ok());
            signal.events.clear();
            size = 0;
        }
        size += entry_size;
        signal.events.push(entry);
    }
    if !signal.events.is_empty() {
        payloads.extend(serde_json::to_string(&signal).ok());
    }
    payloads
}

fn serialized_len(entry: &impl Serialize) -> usize {
    // Room for the comma between entries.
    serde_json::to_string(entry).map_or(usize::MAX, |json| json.len() + 1)
}

/// Another instance's events, to this instance's subscribers.
fn relay_live(origin: u64, live: &broadcast::Sender<Activity>, payload: &str) {
    let Ok(signal) = serde_json::from_str::<LiveSignal>(payload) else {
        return;
    };
    if signal.origin == origin {
        return;
    }
    for (site_id, tracker_vid, identified_user_id, event_type, page, timestamp, event_name) in signal.events {
        let Some(kind) = EventKind::parse(&event_type) else { continue };
        let event_type = kind.as_str();
        live.send(Activity { site_id, tracker_vid, identified_user_id, event_type, event_name, page, timestamp }).ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(page: String) -> Activity {
        Activity {
            site_id: 1,
            tracker_vid: "v".repeat(36),
            identified_user_id: None,
            event_type: "pageview",
            event_name: String::new(),
            page,
            timestamp: 1,
        }
    }

    #[test]
    fn live_payloads_stay_under_the_notify_limit_and_keep_every_event() {
        // (events, page): control characters are escaped to six bytes each.
        let cases = [
            (0, "/".to_owned()),
            (1, "/".to_owned()),
            (500, "/".repeat(40)),
            (50, "/".repeat(2000)),
            (3, "/".repeat(5000)),
            (20, "\u{1}".repeat(2000)),
            (20, "é".repeat(1500)),
        ];
        for (count, page) in cases {
            let activities: Vec<Activity> = (0..count).map(|_| activity(page.clone())).collect();
            let payloads = live_payloads(7, &activities);
            assert!(payloads.iter().all(|p| p.len() < 8000), "{count} x {page:.10}");
            let signals: Vec<LiveSignal> = payloads.iter().map(|p| serde_json::from_str(p).unwrap()).collect();
            let pages: Vec<&String> = signals.iter().flat_map(|s| s.events.iter().map(|e| &e.4)).collect();
            assert_eq!(pages.len(), count, "every event is sent: {count} x {page:.10}");
            assert!(pages.iter().all(|sent| page.starts_with(sent.as_str())), "a page is sent whole or shortened");
        }
    }

    #[test]
    fn an_instance_ignores_its_own_messages() {
        let (sender, mut receiver) = broadcast::channel(8);
        let payloads = live_payloads(7, &[activity("/a".to_owned())]);
        relay_live(7, &sender, &payloads[0]);
        assert!(receiver.try_recv().is_err());
        relay_live(8, &sender, &payloads[0]);
        assert_eq!(receiver.try_recv().unwrap().page, "/a");
    }
}
