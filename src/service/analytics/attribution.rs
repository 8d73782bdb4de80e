//! First touch, last touch and the touchpoints between, from a visitor's
//! sessions. Each session has one source: its referrer, channel and UTM labels.

use entity::tracked_session;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    pub referrer: Option<String>,
    pub channel: String,
    pub utm_source: Option<String>,
    pub utm_medium: Option<String>,
    pub utm_campaign: Option<String>,
    pub utm_content: Option<String>,
    pub utm_term: Option<String>,
}

/// Sessions that came from the same source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touchpoint {
    pub referrer: Option<String>,
    pub channel: String,
    pub utm_source: Option<String>,
    pub utm_medium: Option<String>,
    pub utm_campaign: Option<String>,
    pub first_seen: i64,
    pub last_seen: i64,
    /// Sessions from this source.
    pub touches: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attribution {
    pub first_touch: Option<Touch>,
    pub last_touch: Option<Touch>,
    /// Ordered by first contact.
    pub touchpoints: Vec<Touchpoint>,
}

fn touch(session: &tracked_session::Model) -> Touch {
    Touch {
        referrer: session.referrer.clone(),
        channel: session.channel.clone(),
        utm_source: session.utm_source.clone(),
        utm_medium: session.utm_medium.clone(),
        utm_campaign: session.utm_campaign.clone(),
        utm_content: session.utm_content.clone(),
        utm_term: session.utm_term.clone(),
    }
}

/// Builds the attribution of one visitor from all of their sessions, in any order.
pub fn attribute(sessions: &[tracked_session::Model]) -> Attribution {
    let mut ordered: Vec<&tracked_session::Model> = sessions.iter().collect();
    ordered.sort_by_key(|s| (s.started_at, s.id));
    let mut touchpoints: Vec<Touchpoint> = Vec::new();
    for session in &ordered {
        let same_source = |t: &&mut Touchpoint| {
            t.referrer == session.referrer
                && t.channel == session.channel
                && t.utm_source == session.utm_source
                && t.utm_medium == session.utm_medium
                && t.utm_campaign == session.utm_campaign
        };
        match touchpoints.iter_mut().find(same_source) {
            Some(point) => {
                point.touches += 1;
                point.last_seen = point.last_seen.max(session.ended_at);
            }
            None => touchpoints.push(Touchpoint {
                referrer: session.referrer.clone(),
                channel: session.channel.clone(),
                utm_source: session.utm_source.clone(),
                utm_medium: session.utm_medium.clone(),
                utm_campaign: session.utm_campaign.clone(),
                first_seen: session.started_at,
                last_seen: session.ended_at,
                touches: 1,
            }),
        }
    }
    Attribution {
        first_touch: ordered.first().map(|s| touch(s)),
        last_touch: ordered.last().map(|s| touch(s)),
        touchpoints,
    }
}
