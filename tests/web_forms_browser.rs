//! The form refusals of `web_forms.rs`, in headless Chromium: each form is
//! filled and sent as a person would (the browser's own checks bypassed, so
//! the server's refusal is what shows), and the message must appear beside
//! its input, start with that input's visible label, and be tied to it for
//! screen readers (`aria-invalid` with `aria-describedby` or
//! `aria-errormessage`).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    apps,
    browser::{FLAGS, browser_missing, sign_in, start_browser},
    web::refusals,
};
use serde_json::{Value, json};

/// Fills the form whose `action` field is `action` and submits it without the
/// browser's own validation; a value a select does not offer is added to it.
const FILL_AND_SUBMIT: &str = r#"
const [action, fields] = arguments;
const form = [...document.forms].find(f => f.querySelector(`input[name=action][value="${action}"]`));
if (!form) return `no form for ${action}`;
for (const [name, value] of fields) {
  let input = form.querySelector(`[name="${name}"]`);
  if (!input) {
    input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    form.appendChild(input);
  }
  if (input.type === "checkbox") { input.checked = value === "1" || value === "on"; continue; }
  if (input.tagName === "SELECT" && ![...input.options].some(o => o.value === value)) {
    input.add(new Option(value, value));
  }
  input.value = value;
}
HTMLFormElement.prototype.submit.call(form);
return "sent";
"#;

/// What the refused page shows about `id`: its text, whether it is visible,
/// and the input it describes with that input's label.
const DESCRIBE: &str = r#"
const id = arguments[0];
const error = document.getElementById(id);
if (!error) return null;
const input = document.querySelector(`[aria-describedby~="${id}"], [aria-errormessage="${id}"]`);
const label = input && input.id ? document.querySelector(`label[for="${input.id}"]`) : null;
return {
  text: error.textContent.trim(),
  visible: error.offsetParent !== null,
  invalid: input ? input.getAttribute("aria-invalid") : null,
  label: label ? label.textContent.trim() : null,
  beside: !!input && (input.parentElement.contains(error) || error.parentElement.contains(input)),
};
"#;

#[tokio::test]
async fn every_refusal_shows_beside_its_input_in_the_browser() {
    if browser_missing() {
        return;
    }
    for app in apps().await {
        let (client, site) = app.user_with_site("Forms", "forms.example").await;
        let email = client.graphql("{ viewer { email } }", json!({})).await["data"]["viewer"]["email"]
            .as_str()
            .unwrap()
            .to_owned();
        let cases = refusals(&app, &client, site).await;
        let (_driver, browser) = start_browser(&FLAGS).await;
        sign_in(&browser, &app.base, &email).await;

        for case in cases {
            browser.goto(&format!("{}{}", app.base, case.path)).await.unwrap();
            let action = case.fields.iter().find(|(name, _)| *name == "action").map(|(_, v)| v.clone()).unwrap();
            let fields: Vec<Value> = case.fields.iter().map(|(name, value)| json!([name, value])).collect();
            let sent = browser.execute(FILL_AND_SUBMIT, vec![json!(action), json!(fields)]).await.unwrap();
            assert_eq!(sent, "sent", "{} {action}", case.path);
            let mut shown = Value::Null;
            for _ in 0..50 {
                shown = browser.execute(DESCRIBE, vec![json!(case.error_id)]).await.unwrap();
                if !shown.is_null() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let what = format!("{} {action} #{}: {shown}", case.path, case.error_id);
            assert!(!shown.is_null(), "{what}: no refusal shown");
            let text = shown["text"].as_str().unwrap();
            assert!(text.starts_with(case.label), "{what}");
            assert!(text.len() > case.label.len() + 3, "{what}: the problem is said");
            assert_eq!(shown["visible"], true, "{what}");
            assert_eq!(shown["invalid"], "true", "{what}: the input is marked invalid");
            assert_eq!(shown["beside"], true, "{what}: the message sits beside its input");
            let label = shown["label"].as_str().unwrap_or_default();
            assert!(
                case.label.trim_end_matches(": ").starts_with(label.trim_end_matches(['*', ' ']))
                    || label.starts_with(case.label.trim_end_matches(": ")),
                "{what}: the input's label is {label:?}"
            );
        }
    }
}
