//! Users: sign-up, sign-in, and changes to the signed-in account.

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    TransactionTrait,
};

use entity::user;

use super::{delivery::Delivery, email, is_unique_violation, orgs, sessions};
use crate::{
    auth::{RequestMeta, password},
    cluster::{AccessRevoked, Changed, Cluster},
    error::{AppError, AppResult, ErrorCode},
    time::{DAY_MS, now_ms},
};

pub const MAX_NAME_LEN: usize = 100;
pub const MAX_EMAIL_LEN: usize = 254;
pub const MAX_URL_LEN: usize = 2048;
/// Deleting an account without re-entering the password needs a fresh sign-in.
const FRESH_SESSION_MS: i64 = DAY_MS;

pub struct SignedIn {
    pub token: String,
    pub user: user::Model,
    pub persistent: bool,
}

/// A valid address, trimmed; `field` names it in the error.
pub fn validate_email(field: &str, email: &str) -> AppResult<String> {
    let email = email.trim();
    if email.len() > MAX_EMAIL_LEN || !email_address::EmailAddress::is_valid(email) {
        return Err(AppError::validation(field, "must be a valid email address"));
    }
    Ok(email.to_owned())
}

/// Sign-in addresses are compared lower-case.
pub fn normalize_email(field: &str, email: &str) -> AppResult<String> {
    Ok(validate_email(field, email)?.to_lowercase())
}

/// Names are shown in lists and notifications: no control characters, and
/// the length counts what was sent, before trimming.
fn validate_name(name: &str) -> AppResult<String> {
    if name.chars().count() > MAX_NAME_LEN {
        return Err(AppError::validation("name", format!("must be at most {MAX_NAME_LEN} characters")));
    }
    if name.chars().any(char::is_control) {
        return Err(AppError::validation("name", "must not contain control characters"));
    }
    let name = name.trim();
    if name.is_empty() {
        return Err(AppError::validation("name", "must not be empty"));
    }
    Ok(name.to_owned())
}

/// An avatar address: an http(s) URL. Empty clears it. It is only ever
/// handed back, never fetched, so its host is not checked.
fn validate_image(image: &str) -> AppResult<Option<String>> {
    if image.is_empty() {
        return Ok(None);
    }
    let rest = image.strip_prefix("https://").or_else(|| image.strip_prefix("http://"));
    let clean = |c: char| !c.is_control() && !c.is_whitespace();
    match rest {
        Some(rest) if !rest.is_empty() && rest.chars().all(clean) && image.chars().count() <= MAX_URL_LEN => {
            Ok(Some(image.to_owned()))
        }
        _ => Err(AppError::validation(
            "image",
            format!("must be an http(s) URL of at most {MAX_URL_LEN} characters without spaces"),
        )),
    }
}

/// Where a client may be sent after signing in: a path on this site, or an
/// absolute URL of BASE_URL's origin. Anything else could send a freshly
/// signed-in user to a look-alike page (an open redirect), so it is refused.
pub fn callback_url(raw: &str, base_origin: &str) -> AppResult<String> {
    let refuse = || AppError::validation("callbackURL", "must be a path on this site, such as /dashboard");
    // Browsers drop tabs and newlines inside URLs and read a backslash as a
    // slash, so `/` + backslash + `evil.example`, or `/` + tab + `/evil.example`,
    // would name another host.
    if raw.chars().count() > MAX_URL_LEN || raw.chars().any(|c| c.is_control() || c.is_whitespace() || c == '\\') {
        return Err(refuse());
    }
    if raw.starts_with('/') {
        return if raw.starts_with("//") { Err(refuse()) } else { Ok(raw.to_owned()) };
    }
    let url = url::Url::parse(raw).map_err(|_| refuse())?;
    let same_origin = matches!(url.scheme(), "http" | "https")
        && url.username().is_empty()
        && url.password().is_none()
        && url.origin().ascii_serialization() == base_origin;
    if same_origin { Ok(url.to_string()) } else { Err(refuse()) }
}

fn email_in_use(field: &str) -> AppError {
    AppError::invalid(ErrorCode::EmailInUse, field, "an account with this email already exists")
}

pub async fn find(db: &impl ConnectionTrait, user_id: i64) -> AppResult<user::Model> {
    user::Entity::find_by_id(user_id).one(db).await?.ok_or_else(|| AppError::not_found("user"))
}

async fn find_by_email(db: &impl ConnectionTrait, email: &str) -> AppResult<Option<user::Model>> {
    Ok(user::Entity::find().filter(user::Column::Email.eq(email)).one(db).await?)
}

/// What sign-up is given.
pub struct NewAccount<'a> {
    pub name: &'a str,
    pub email: &'a str,
    pub password: String,
    pub image: Option<&'a str>,
}

/// Creates the user, their personal org (with them as owner) and a session.
pub async fn sign_up(
    db: &DatabaseConnection,
    // Where the verification mail goes; none for accounts made by the CLI.
    sending: Option<&Delivery>,
    registration_disabled: bool,
    account: NewAccount<'_>,
    meta: &RequestMeta,
) -> AppResult<SignedIn> {
    let NewAccount { name, email, password, image } = account;
    if registration_disabled {
        return Err(AppError::forbidden("registration is disabled on this server"));
    }
    let name = validate_name(name)?;
    let email = normalize_email("email", email)?;
    let image = image.map(validate_image).transpose()?.flatten();
    password::validate("password", &password)?;
    if find_by_email(db, &email).await?.is_some() {
        return Err(email_in_use("email"));
    }
    let password_hash = password::hash(password).await?;
    let txn = db.begin().await?;
    let now = now_ms();
    let user = user::ActiveModel {
        name: Set(name),
        email: Set(email),
        password_hash: Set(password_hash),
        image: Set(image),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await
    .map_err(|err| if is_unique_violation(&err) { email_in_use("email") } else { err.into() })?;
    orgs::create_personal(&txn, &user).await?;
    let token = sessions::create(&txn, user.id, true, meta).await?;
    let verifying = match sending {
        Some(sending) => email::verification::queue(&txn, sending, &user, None).await?.then_some(sending),
        None => None,
    };
    txn.commit().await?;
    if let Some(sending) = verifying {
        sending.email_due.notify_one();
    }
    Ok(SignedIn { token, user, persistent: true })
}

pub async fn sign_in(
    db: &DatabaseConnection,
    email: &str,
    password: String,
    remember_me: bool,
    meta: &RequestMeta,
) -> AppResult<SignedIn> {
    let rejected = || AppError::new(ErrorCode::InvalidEmailOrPassword, "invalid email or password");
    // Over-long input cannot match a stored password; refuse it before hashing.
    if password.chars().count() > password::MAX_LEN {
        return Err(rejected());
    }
    let email = email.trim().to_lowercase();
    let Some(user) = find_by_email(db, &email).await? else {
        password::burn_verify_time(password).await;
        return Err(rejected());
    };
    if !password::verify(password, user.password_hash.clone()).await? {
        return Err(rejected());
    }
    let token = sessions::create(db, user.id, remember_me, meta).await?;
    Ok(SignedIn { token, user, persistent: remember_me })
}

/// What update-user changes; `None` leaves a field as it is, and an empty
/// `image` removes the image.
pub struct UserChanges {
    pub name: Option<String>,
    pub image: Option<String>,
}

pub async fn update(db: &impl ConnectionTrait, user_id: i64, changes: UserChanges) -> AppResult<user::Model> {
    if changes.name.is_none() && changes.image.is_none() {
        return Err(AppError::validation("name", "or image is required"));
    }
    let name = changes.name.as_deref().map(validate_name).transpose()?;
    let image = changes.image.as_deref().map(validate_image).transpose()?;
    let mut active: user::ActiveModel = find(db, user_id).await?.into();
    if let Some(name) = name {
        active.name = Set(name);
    }
    if let Some(image) = image {
        active.image = Set(image);
    }
    active.updated_at = Set(now_ms());
    Ok(active.update(db).await?)
}

/// Takes effect at once (the spec). With email set up, the new address is
/// unverified until the link sent to it is followed.
pub async fn change_email(
    db: &DatabaseConnection,
    sending: &Delivery,
    user_id: i64,
    new_email: &str,
) -> AppResult<user::Model> {
    let email = normalize_email("newEmail", new_email)?;
    let user = find(db, user_id).await?;
    if user.email == email {
        return Ok(user);
    }
    if find_by_email(db, &email).await?.is_some() {
        return Err(email_in_use("newEmail"));
    }
    let mut active: user::ActiveModel = user.into();
    active.email = Set(email);
    active.email_verified = Set(false);
    active.updated_at = Set(now_ms());
    let txn = db.begin().await?;
    let changed = active
        .update(&txn)
        .await
        .map_err(|err| if is_unique_violation(&err) { email_in_use("newEmail") } else { AppError::from(err) })?;
    let verifying = email::verification::queue(&txn, sending, &changed, None).await?;
    txn.commit().await?;
    if verifying {
        sending.email_due.notify_one();
    }
    Ok(changed)
}

/// `field` names the input the password came in.
async fn check_password(field: &str, user: &user::Model, password: String) -> AppResult<()> {
    let wrong = || AppError::invalid(ErrorCode::InvalidPassword, field, "the password is not correct");
    if password.chars().count() > password::MAX_LEN {
        return Err(wrong());
    }
    if password::verify(password, user.password_hash.clone()).await? { Ok(()) } else { Err(wrong()) }
}

/// Sets a password without the current one (the `seed --demo` account).
pub async fn set_password(db: &impl ConnectionTrait, user_id: i64, new: String) -> AppResult<user::Model> {
    password::validate("password", &new)?;
    let user = find(db, user_id).await?;
    let mut active: user::ActiveModel = user.into();
    active.password_hash = Set(password::hash(new).await?);
    active.updated_at = Set(now_ms());
    Ok(active.update(db).await?)
}

/// Marks the user's address as verified (they followed a link sent to it).
pub async fn mark_verified(db: &impl ConnectionTrait, user_id: i64) -> AppResult<user::Model> {
    let mut active: user::ActiveModel = find(db, user_id).await?.into();
    active.email_verified = Set(true);
    Ok(active.update(db).await?)
}

/// The user with this (normalized) email, if any.
pub async fn by_email(db: &impl ConnectionTrait, email: &str) -> AppResult<Option<user::Model>> {
    find_by_email(db, &normalize_email("email", email)?).await
}

/// Returns a new session token when the other sessions were revoked, because
/// revoking replaces the caller's own session too.
pub async fn change_password(
    db: &DatabaseConnection,
    cluster: &Cluster,
    user_id: i64,
    current: String,
    new: String,
    revoke_other_sessions: bool,
    meta: &RequestMeta,
) -> AppResult<(Option<String>, user::Model)> {
    password::validate("newPassword", &new)?;
    let user = find(db, user_id).await?;
    check_password("currentPassword", &user, current).await?;
    let password_hash = password::hash(new).await?;
    let txn = db.begin().await?;
    let mut active: user::ActiveModel = user.into();
    active.password_hash = Set(password_hash);
    active.updated_at = Set(now_ms());
    let user = active.update(&txn).await?;
    let token = if revoke_other_sessions {
        sessions::delete_all_of_user(&txn, user_id).await?;
        Some(sessions::create(&txn, user_id, true, meta).await?)
    } else {
        None
    };
    txn.commit().await?;
    // Open sockets were opened under the old password.
    cluster.access_revoked(AccessRevoked::User { user_id }).await;
    Ok((token, user))
}

/// Removes the user, their sessions and memberships, and every org in which
/// they were the only owner, with its sites and all their data; the deleted
/// sites and links stop answering, and sockets close, on every instance.
pub async fn delete(
    db: &DatabaseConnection,
    cluster: &Cluster,
    user_id: i64,
    session_created_at: i64,
    password: Option<String>,
) -> AppResult<()> {
    let user = find(db, user_id).await?;
    match password {
        Some(password) => check_password("password", &user, password).await?,
        None if now_ms() - session_created_at > FRESH_SESSION_MS => {
            return Err(AppError::invalid(
                ErrorCode::SessionExpired,
                "password",
                "sign in again or give your password to delete the account",
            ));
        }
        None => {}
    }
    let txn = db.begin().await?;
    let deleted_orgs = orgs::delete_solely_owned(&txn, user_id).await?;
    user::Entity::delete_by_id(user_id).exec(&txn).await?;
    txn.commit().await?;
    cluster.changed(Changed::All).await;
    cluster.access_revoked(AccessRevoked::User { user_id }).await;
    for org_id in deleted_orgs {
        cluster.access_revoked(AccessRevoked::Org { org_id }).await;
    }
    Ok(())
}
