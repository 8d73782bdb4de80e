// Better Auth's own client against /api/auth: sign up, read the session, sign
// out and in again, change the name, image, email and password, delete the
// account. Every answer is checked for an error and for the fields apps read.
//
// Usage: node better_auth.mjs <base URL>
// Prints one line per step; exits 1 on the first failed check.
import { createAuthClient } from 'better-auth/client';

const base = process.argv[2];
if (!base) {
  console.error('usage: node better_auth.mjs <base URL>');
  process.exit(2);
}

// Node's fetch keeps no cookies: this jar holds the `session` cookie the
// server sets and sends it back, as a browser would. Node sends no Origin,
// like any server-side caller.
let session = null;
async function fetchWithJar(input, init = {}) {
  const headers = new Headers(init.headers);
  if (session) headers.set('cookie', `session=${session}`);
  const response = await fetch(input, { ...init, headers });
  for (const cookie of response.headers.getSetCookie()) {
    const [pair, ...attributes] = cookie.split(';');
    const [name, value] = pair.split('=');
    if (name.trim() !== 'session') continue;
    const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute));
    session = expired || value === '' ? null : value;
  }
  return response;
}

const auth = createAuthClient({
  baseURL: base,
  basePath: '/api/auth',
  fetchOptions: { customFetchImpl: fetchWithJar },
});

function check(condition, message, detail) {
  if (!condition) {
    console.error(`FAILED: ${message}`, detail === undefined ? '' : JSON.stringify(detail));
    process.exit(1);
  }
}

// Runs one client call, requires success, and returns its data.
async function step(name, call) {
  const { data, error } = await call();
  check(!error, `${name} answered an error`, error);
  console.log(`ok ${name}`);
  return data;
}

function checkUser(user, expected, where) {
  for (const field of ['id', 'name', 'email', 'createdAt', 'updatedAt']) {
    check(user && user[field] !== undefined && user[field] !== null, `${where}: user.${field}`, user);
  }
  check(user.emailVerified === false, `${where}: user.emailVerified is false`, user);
  check('image' in user, `${where}: user.image is present`, user);
  for (const [field, value] of Object.entries(expected)) {
    check(user[field] === value, `${where}: user.${field} is ${value}`, user);
  }
}

const email = `ba-${process.pid}-${Date.now()}@example.com`;
const password = 'better auth 1';

const signedUp = await step('signUp.email', () => auth.signUp.email({ name: 'Ada', email, password }));
check(typeof signedUp.token === 'string' && signedUp.token === session, 'sign-up token is the cookie', signedUp);
checkUser(signedUp.user, { name: 'Ada', email, image: null }, 'sign-up');

let current = await step('getSession', () => auth.getSession());
check(current && current.session && current.user, 'getSession has session and user', current);
for (const field of ['id', 'token', 'userId', 'expiresAt', 'createdAt', 'updatedAt']) {
  check(current.session[field], `session.${field}`, current.session);
}
check(current.session.token === session, 'session.token is the cookie', current.session);
check(current.session.userId === current.user.id, 'session.userId is the user', current);
checkUser(current.user, { email }, 'get-session');

await step('signOut', () => auth.signOut());
check(session === null, 'sign-out cleared the cookie');
current = await step('getSession (signed out)', () => auth.getSession());
check(current === null, 'no session after sign-out', current);

const signedIn = await step('signIn.email', () => auth.signIn.email({ email, password, callbackURL: '/dashboard' }));
check(signedIn.token === session, 'sign-in token is the cookie', signedIn);
check(signedIn.redirect === true && signedIn.url === '/dashboard', 'callbackURL answered', signedIn);
checkUser(signedIn.user, { email }, 'sign-in');

const image = 'https://images.example/ada.png';
await step('updateUser', () => auth.updateUser({ name: 'Ada Lovelace', image }));
current = await step('getSession (updated)', () => auth.getSession());
checkUser(current.user, { name: 'Ada Lovelace', image }, 'after update-user');

const newEmail = `ba-new-${process.pid}-${Date.now()}@example.com`;
await step('changeEmail', () => auth.changeEmail({ newEmail }));
current = await step('getSession (email)', () => auth.getSession());
checkUser(current.user, { email: newEmail }, 'after change-email');

const changed = await step('changePassword', () =>
  auth.changePassword({ currentPassword: password, newPassword: 'better auth 2', revokeOtherSessions: true }),
);
check(changed.token === session, 'a new session replaced the revoked ones', changed);
checkUser(changed.user, { email: newEmail }, 'change-password');
const wrong = await auth.changePassword({ currentPassword: password, newPassword: 'better auth 3' });
check(wrong.error && wrong.error.status === 400, 'the old password is refused', wrong.error);

const deleted = await step('deleteUser', () => auth.deleteUser({ password: 'better auth 2' }));
check(deleted.success === true, 'deleteUser succeeded', deleted);
const gone = await auth.signIn.email({ email: newEmail, password: 'better auth 2' });
check(gone.error && gone.error.status === 401, 'the deleted account cannot sign in', gone.error);
console.log('better-auth client: all steps passed');
process.exit(0);
