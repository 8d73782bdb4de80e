// Loads the schema the way GraphQL tooling does (GraphiQL, Apollo,
// graphql-codegen): graphql-js's standard introspection query over POST
// /graphql, then buildClientSchema. The result must be the schema in
// schema.graphql: no breaking or dangerous change either way, and the same
// printed schema once both are sorted.
//
// Usage: node introspection.mjs <base URL> [--print] [--schema=FILE]
// (FILE defaults to the repository's schema.graphql)
// Exits 0 when the served schema matches; prints the differences otherwise.
import { readFileSync } from 'node:fs';
import {
  GraphQLSchema,
  buildClientSchema,
  buildSchema,
  findBreakingChanges,
  findDangerousChanges,
  getIntrospectionQuery,
  isSpecifiedDirective,
  lexicographicSortSchema,
  printSchema,
  specifiedDirectives,
} from 'graphql';

const base = process.argv[2];
if (!base) {
  console.error('usage: node introspection.mjs <base URL> [--print] [--schema=FILE]');
  process.exit(2);
}

async function introspect(options) {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      // What GraphiQL's fetcher sends.
      accept: 'application/graphql-response+json, application/json, multipart/mixed',
    },
    body: JSON.stringify({ query: getIntrospectionQuery(options), operationName: 'IntrospectionQuery' }),
  });
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`introspection answered ${response.status} with a body that is not JSON: ${text.slice(0, 500)}`);
  }
  if (response.status !== 200 || body.errors || !body.data) {
    throw new Error(`introspection failed (${response.status}): ${JSON.stringify(body.errors ?? body).slice(0, 1000)}`);
  }
  return buildClientSchema(body.data);
}

// Compared without what the server library builds in rather than this
// schema declares: async-graphql 7 serves the built-in @deprecated without
// the DIRECTIVE_DEFINITION location graphql-js 16.15 gives it. Both sides
// get graphql-js's built-in directives. The schema's description is
// compared where the query asks for it (`schemaDescription`):
// schema.graphql carries the one introspection serves.
function normalize(schema, withDescription = true) {
  const config = schema.toConfig();
  return new GraphQLSchema({
    ...config,
    description: withDescription ? config.description : undefined,
    directives: [...specifiedDirectives, ...config.directives.filter((directive) => !isSpecifiedDirective(directive))],
  });
}

const sorted = (schema) => printSchema(lexicographicSortSchema(schema));

const schemaArg = process.argv.find((arg) => arg.startsWith('--schema='));
const schemaFile = schemaArg ? schemaArg.slice('--schema='.length) : new URL('../../schema.graphql', import.meta.url);
const fileSchema = buildSchema(readFileSync(schemaFile, 'utf8'));
const problems = [];

// The default query (graphql-codegen, Apollo) and the one with every option.
const variants = {
  default: undefined,
  'all options': {
    descriptions: true,
    specifiedByUrl: true,
    directiveIsRepeatable: true,
    schemaDescription: true,
    inputValueDeprecation: true,
  },
};
let served;
for (const [name, options] of Object.entries(variants)) {
  const expected = normalize(fileSchema, Boolean(options?.schemaDescription));
  let schema;
  try {
    schema = normalize(await introspect(options));
  } catch (error) {
    problems.push(`${name}: ${error.message}`);
    continue;
  }
  served ??= schema;
  for (const [label, changes] of [
    ['breaking (schema.graphql -> served)', findBreakingChanges(expected, schema)],
    ['breaking (served -> schema.graphql)', findBreakingChanges(schema, expected)],
    ['dangerous (schema.graphql -> served)', findDangerousChanges(expected, schema)],
    ['dangerous (served -> schema.graphql)', findDangerousChanges(schema, expected)],
  ]) {
    for (const change of changes) problems.push(`${name}: ${label}: ${change.type}: ${change.description}`);
  }
  if (sorted(schema) !== sorted(expected)) {
    const a = sorted(expected).split('\n');
    const b = sorted(schema).split('\n');
    const first = a.findIndex((line, index) => line !== b[index]);
    problems.push(
      `${name}: the printed schemas differ from line ${first + 1}:\n  schema.graphql: ${a[first]}\n  served:         ${b[first]}`,
    );
  }
}

if (problems.length > 0) {
  console.error(`the served schema does not match schema.graphql:\n${problems.join('\n')}`);
  process.exit(1);
}
if (process.argv.includes('--print')) {
  console.log(printSchema(served));
}
const types = Object.keys(served.getTypeMap()).filter((name) => !name.startsWith('__')).length;
console.log(`introspection ok: ${types} types, the same schema as schema.graphql`);
process.exit(0);
