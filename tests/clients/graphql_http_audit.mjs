// graphql-http's GraphQL-over-HTTP conformance audit against POST/GET /graphql.
//
// Usage: node graphql_http_audit.mjs <base URL> [--strict] [--allow=ID,ID...]
// Prints every result that is not ok. Exits 1 when a MUST audit fails
// ('error'); with --strict, also when a SHOULD or MAY audit fails ('warn',
// 'notice') unless its id is in --allow.
import { auditServer } from 'graphql-http';

const base = process.argv[2];
if (!base) {
  console.error('usage: node graphql_http_audit.mjs <base URL> [--strict] [--allow=ID,...]');
  process.exit(2);
}
const strict = process.argv.includes('--strict');
const allowed = new Set(
  process.argv
    .filter((arg) => arg.startsWith('--allow='))
    .flatMap((arg) => arg.slice('--allow='.length).split(','))
    .filter(Boolean),
);

const results = await auditServer({ url: `${base}/graphql` });
const failed = results.filter((result) => result.status !== 'ok');
const counts = { ok: 0, notice: 0, warn: 0, error: 0 };
for (const result of results) counts[result.status] += 1;

for (const result of failed) {
  const note = allowed.has(result.id) ? ' (allowed)' : '';
  console.log(`${result.status.toUpperCase()} ${result.id} ${result.name}${note}: ${result.reason}`);
}
console.log(
  `${results.length} audits: ${counts.ok} ok, ${counts.error} errors (MUST), ` +
    `${counts.warn} warnings (SHOULD), ${counts.notice} notices (MAY)`,
);

const blocking = failed.filter(
  (result) => result.status === 'error' || (strict && !allowed.has(result.id)),
);
if (blocking.length > 0) {
  console.error(`failing: ${blocking.map((result) => result.id).join(', ')}`);
  process.exit(1);
}
// Unread audit bodies keep sockets open; do not wait for them.
process.exit(0);
