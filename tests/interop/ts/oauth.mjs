#!/usr/bin/env node
// OAuth interop test: the official TypeScript MCP SDK client (@modelcontextprotocol/sdk
// 1.32.2) runs the OAuth 2.1 authorization-code flow with PKCE against tiny-mcp's
// `everything` example and calls tools over Streamable HTTP.
//
// Usage:
//   node oauth.mjs URL --as AS_URL [--timeout SECONDS]
//
// URL is the MCP endpoint (e.g. http://127.0.0.1:PORT/mcp) of a server started as
//   everything --http 127.0.0.1:PORT --introspect AS_URL/introspect --auth-issuer AS_URL
// and AS_URL the test authorization server of tests/interop/python/oauth.py
// (`oauth.py serve-as`: the Python SDK's authorization-server routes with an
// approve-everything provider for the subject "alice", dynamic client registration,
// RFC 7662 /introspect; every client is registered for mcp:tools and mcp:admin).
//
// The flow, with an in-memory OAuthClientProvider whose "browser"
// (redirectToAuthorization) requests the authorization URL without following the
// redirect and keeps the code from the Location header:
//   1. connect: the server answers 401, the SDK discovers the metadata (RFC 9728,
//      RFC 8414), registers (RFC 7591), sends the user agent to /authorize with PKCE
//      and the resource indicator, and the connect fails with UnauthorizedError;
//   2. transport.finishAuth(code) exchanges the code for tokens;
//   3. a fresh transport with the same provider connects (initialize, 2025-11-25:
//      this SDK has no 2026-07-28 mode) and calls test_simple_text and session_info;
//   4. admin_echo needs mcp:admin: the server answers 403 insufficient_scope. Whether
//      the SDK stepped up by itself or surfaced the 403 is printed as a note; if it
//      surfaced it, the test re-authorizes with the challenge's scope through the SDK's
//      own auth() and finishAuth(), and retries on the same connection.
//
// Output: `ok NAME` / `FAIL NAME: why` per check, `note ...` lines, and last
// `N passed, M failed`. Exit code 1 on any failure. Every await is bounded; the
// whole run is limited to --timeout seconds (default 120).

import { randomUUID } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

// ---------------------------------------------------------------------------
// Constants and limits
// ---------------------------------------------------------------------------

const SUBJECT = 'alice';
const TOOLS_SCOPE = 'mcp:tools';
const ADMIN_SCOPE = 'mcp:admin';
const V2025 = '2025-11-25';
// Nothing listens here: the "browser" reads the code from the redirect and never follows it.
const REDIRECT_URI = 'http://127.0.0.1:1/callback';
const CLIENT_NAME = 'tiny-mcp-oauth-interop-ts';

const STEP_TIMEOUT_MS = 20_000; // one connect, one flow step, one call
const REQUEST_TIMEOUT_MS = 15_000; // one MCP request (the SDK's own timeout)
const HTTP_TIMEOUT_MS = 10_000; // one raw HTTP request of the test itself
const CLOSE_TIMEOUT_MS = 5_000;

// ---------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------

let passed = 0;
let failed = 0;
let finished = false;

function pass(name) {
  passed += 1;
  console.log(`ok ${name}`);
}

function fail(name, reason) {
  failed += 1;
  const text = String(reason).replace(/\s+/g, ' ').trim() || '(no message)';
  console.log(`FAIL ${name}: ${text}`);
}

function note(text) {
  console.log(`note ${String(text).replace(/\s+/g, ' ').trim()}`);
}

function errText(e) {
  if (e && typeof e === 'object') {
    const kind = e.constructor && e.constructor.name && e.constructor.name !== 'Error' ? `${e.constructor.name}: ` : '';
    const code = 'code' in e && e.code !== undefined ? ` (code ${e.code})` : '';
    return `${kind}${e.message ?? String(e)}${code}`;
  }
  return String(e);
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

function short(value, limit = 300) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length <= limit ? text : `${text.slice(0, limit)}...`;
}

// Rejects after `ms` unless `promise` settles first.
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Runs one check under its own timeout; returns true if it passed. Never throws.
async function check(name, fn, ms = STEP_TIMEOUT_MS) {
  if (finished) return false;
  try {
    await withTimeout(Promise.resolve().then(fn), ms, name);
  } catch (e) {
    if (process.env.INTEROP_DEBUG) console.error(e);
    fail(name, errText(e));
    return false;
  }
  pass(name);
  return true;
}

function summaryAndExit(code) {
  if (finished) return;
  finished = true;
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code ?? (failed > 0 ? 1 : 0));
}

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

const usage = 'usage: node oauth.mjs URL --as AS_URL [--timeout SECONDS]';
function parseArgs(argv) {
  const out = { url: undefined, as: undefined, timeout: 120 };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--as') out.as = argv[++i];
    else if (arg === '--timeout') out.timeout = Number(argv[++i]);
    else if (!arg.startsWith('--') && out.url === undefined) out.url = arg;
    else return undefined;
  }
  if (!out.url || !out.as || !(out.timeout > 0)) return undefined;
  return out;
}
const args = parseArgs(process.argv.slice(2));
if (!args) {
  console.error(usage);
  fail('usage', usage);
  summaryAndExit(1);
}
const URL_ = args.url;
const AS_URL = args.as.replace(/\/+$/, '');
const ORIGIN = new URL(URL_).origin;
const METADATA_URL = `${ORIGIN}/.well-known/oauth-protected-resource${new URL(URL_).pathname}`;

// Overall watchdog: never hang, whatever happens.
const watchdog = setTimeout(() => {
  fail('oauth/ts: overall', `run exceeded ${args.timeout} s`);
  summaryAndExit(1);
}, args.timeout * 1000);

process.on('unhandledRejection', (reason) => {
  if (!finished) fail('oauth/ts: unhandled rejection', errText(reason));
});

process.on('exit', () => {
  if (!finished) {
    finished = true;
    failed += 1;
    console.log('FAIL oauth/ts: overall: event loop drained before the run finished');
    console.log(`${passed} passed, ${failed} failed`);
    process.exitCode = 1;
  }
});

// ---------------------------------------------------------------------------
// HTTP log: every exchange the SDK makes goes through this fetch
// ---------------------------------------------------------------------------

const exchanges = []; // {method, url (without query), status, wwwAuthenticate}

function stripQuery(url) {
  const u = new URL(String(url));
  u.search = '';
  return u.href;
}

async function loggingFetch(input, init) {
  const url = input instanceof Request ? input.url : String(input);
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const response = await fetch(input, init);
  exchanges.push({
    method,
    url: stripQuery(url),
    status: response.status,
    wwwAuthenticate: response.headers.get('www-authenticate') ?? undefined,
  });
  return response;
}

const showExchange = (e) => `${e.method} ${e.url} -> ${e.status}`;
const trail = (list) => list.map(showExchange).join('; ') || '(none)';

// The parameters of a Bearer challenge (lower-case names), or undefined.
function parseChallenge(header) {
  if (!header) return undefined;
  const m = /^\s*bearer\b(.*)$/i.exec(header);
  if (!m) return undefined;
  const params = {};
  const re = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  let p;
  while ((p = re.exec(m[1])) !== null) {
    params[p[1].toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3];
  }
  return params;
}

// ---------------------------------------------------------------------------
// The OAuthClientProvider, in memory, with a "browser" that approves at once
// ---------------------------------------------------------------------------

class MemoryProvider {
  constructor() {
    this._clientInformation = undefined;
    this._tokens = undefined;
    this._codeVerifier = undefined;
    this._state = undefined;
    this.pendingCode = undefined; // the code of the last authorization, until taken
    this.visits = []; // the query of every authorization URL, as an object
    this.redirects = []; // the query of every redirect back to REDIRECT_URI
    this.invalidated = []; // the scopes invalidateCredentials was called with
  }

  get redirectUrl() {
    return REDIRECT_URI;
  }

  get clientMetadata() {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  state() {
    this._state = randomUUID();
    return this._state;
  }

  clientInformation() {
    return this._clientInformation;
  }

  saveClientInformation(info) {
    this._clientInformation = info; // unchanged: the SDK stamps it with the issuer
  }

  tokens() {
    return this._tokens;
  }

  saveTokens(tokens) {
    this._tokens = tokens; // unchanged, like the client information
  }

  saveCodeVerifier(verifier) {
    this._codeVerifier = verifier;
  }

  codeVerifier() {
    if (!this._codeVerifier) throw new Error('no code verifier saved');
    return this._codeVerifier;
  }

  invalidateCredentials(scope) {
    this.invalidated.push(scope);
    if (scope === 'all' || scope === 'client') this._clientInformation = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._codeVerifier = undefined;
  }

  // The user agent: request the authorization URL (the test authorization server
  // approves at once), do not follow the redirect, keep the code from Location.
  async redirectToAuthorization(authorizationUrl) {
    const url = new URL(String(authorizationUrl));
    this.visits.push(Object.fromEntries(url.searchParams));
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
    await response.body?.cancel();
    const location = response.headers.get('location') ?? '';
    if (![302, 303, 307].includes(response.status)) {
      throw new Error(`authorization endpoint answered ${response.status}, not a redirect`);
    }
    if (!location.startsWith(REDIRECT_URI)) {
      throw new Error(`authorization endpoint redirected elsewhere: ${location}`);
    }
    const query = Object.fromEntries(new URL(location).searchParams);
    this.redirects.push(query);
    if (query.error) throw new Error(`authorization refused: ${short(query)}`);
    if (!query.code) throw new Error(`redirect without a code: ${location}`);
    this.pendingCode = query.code;
  }

  takeCode() {
    const code = this.pendingCode;
    this.pendingCode = undefined;
    assert(code, 'no authorization code: redirectToAuthorization was not called');
    return code;
  }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

async function introspect(token) {
  const response = await fetch(`${AS_URL}/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
    signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
  });
  assert(response.status === 200, `/introspect answered ${response.status}`);
  return response.json();
}

const textOf = (result) =>
  (result?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');

const newTransport = (provider) =>
  new StreamableHTTPClientTransport(new URL(URL_), { authProvider: provider, fetch: loggingFetch });

const newClient = () => new Client({ name: CLIENT_NAME, version: '1.32.2' }, { capabilities: {} });

const reqOpts = { timeout: REQUEST_TIMEOUT_MS };

async function closeQuietly(client) {
  try {
    await withTimeout(client.close(), CLOSE_TIMEOUT_MS, 'close');
  } catch (e) {
    console.error(`[close] ${errText(e)}`);
  }
}

// Finds `steps` ([method, url, status]) in order (not necessarily adjacent) in `list`.
function expectInOrder(list, steps) {
  let position = 0;
  for (const [method, url, status] of steps) {
    while (
      position < list.length &&
      !(list[position].method === method && list[position].url === url && list[position].status === status)
    ) {
      position += 1;
    }
    assert(position < list.length, `no ${method} ${url} -> ${status} in order; exchanges: ${trail(list)}`);
    position += 1;
  }
}

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

const L = 'oauth/ts';

async function run() {
  note(`${L}: @modelcontextprotocol/sdk 1.32.2 speaks ${LATEST_PROTOCOL_VERSION} (initialize) and has no ` +
    '2026-07-28 (server/discover) mode: one era only');
  const provider = new MemoryProvider();

  // 1. The first connect meets the 401 and ends in a redirect to the authorization endpoint.
  const transport1 = newTransport(provider);
  const client1 = newClient();
  const ok1 = await check(`${L}: first connect meets 401, discovers, registers, redirects to /authorize`, async () => {
    let error;
    try {
      await withTimeout(client1.connect(transport1, reqOpts), STEP_TIMEOUT_MS, 'connect');
    } catch (e) {
      error = e;
    }
    assert(error !== undefined, `connect succeeded without authorization (exchanges: ${trail(exchanges)})`);
    assert(error instanceof UnauthorizedError, `connect failed with ${errText(error)}, not UnauthorizedError ` +
      `(exchanges: ${trail(exchanges)})`);
    const first = exchanges[0];
    assert(first && first.method === 'POST' && first.url === URL_ && first.status === 401,
      `first exchange ${first ? showExchange(first) : '(none)'}`);
    const challenge = parseChallenge(first.wwwAuthenticate);
    assert(challenge, `401 without a Bearer challenge`);
    assert(challenge.resource_metadata === METADATA_URL,
      `challenge resource_metadata ${challenge.resource_metadata}, expected ${METADATA_URL}`);
    assert((challenge.scope ?? '').split(' ').includes(TOOLS_SCOPE), `challenge scope ${challenge.scope}`);
    expectInOrder(exchanges, [
      ['POST', URL_, 401],
      ['GET', METADATA_URL, 200],
      ['GET', `${AS_URL}/.well-known/oauth-authorization-server`, 200],
      ['POST', `${AS_URL}/register`, 201],
    ]);
    assert(provider.visits.length === 1, `${provider.visits.length} authorization requests`);
    const visit = provider.visits[0];
    const info = provider.clientInformation();
    assert(info?.client_id, 'no client registration stored');
    assert(visit.response_type === 'code', `response_type ${visit.response_type}`);
    assert(visit.client_id === info.client_id, `client_id ${visit.client_id}, registered ${info.client_id}`);
    assert(visit.redirect_uri === REDIRECT_URI, `redirect_uri ${visit.redirect_uri}`);
    assert(visit.code_challenge_method === 'S256' && visit.code_challenge, `no PKCE S256: ${short(visit)}`);
    assert(visit.resource === URL_, `resource ${visit.resource}, expected ${URL_}`);
    assert((visit.scope ?? '').split(' ').includes(TOOLS_SCOPE), `scope ${visit.scope}`);
    assert(visit.state && visit.state === provider._state, `state ${visit.state}`);
    const back = provider.redirects[0];
    assert(back.state === visit.state, `redirect state ${back.state}, sent ${visit.state}`);
    assert(back.iss === undefined || back.iss === AS_URL, `redirect iss ${back.iss}, expected ${AS_URL}`);
    assert(provider.pendingCode, 'no code kept from the redirect');
    note(`${L}: authorization request scope ${JSON.stringify(visit.scope)} (the 401 challenge said ` +
      `${JSON.stringify(challenge.scope)}); the client registered with scope ${JSON.stringify(info.scope)}`);
  });
  await closeQuietly(client1);
  if (!ok1) return;

  // 2. finishAuth exchanges the code (with the PKCE verifier) for tokens.
  const ok2 = await check(`${L}: finishAuth(code) exchanges the code for an audience-bound token`, async () => {
    const start = exchanges.length;
    await transport1.finishAuth(provider.takeCode());
    const since = exchanges.slice(start);
    expectInOrder(since, [['POST', `${AS_URL}/token`, 200]]);
    const tokens = provider.tokens();
    assert(tokens?.access_token, 'no token saved');
    assert(String(tokens.token_type).toLowerCase() === 'bearer', `token_type ${tokens.token_type}`);
    assert((tokens.scope ?? '').split(' ').includes(TOOLS_SCOPE), `scope ${tokens.scope}`);
    const info = await introspect(tokens.access_token);
    assert(info.active === true, `introspection ${short(info)}`);
    assert(info.aud === URL_, `aud ${info.aud}, expected ${URL_}`);
    assert(info.sub === SUBJECT, `sub ${info.sub}`);
    assert(info.client_id === provider.clientInformation().client_id, `client_id ${info.client_id}`);
    note(`${L}: the SDK stamped the saved tokens with issuer ${JSON.stringify(tokens.issuer)}` +
      `${tokens.refresh_token ? ' (a refresh token came with them)' : ''}`);
  });
  if (!ok2) return;

  // 3. A fresh transport, the same provider: connects with the token.
  const transport2 = newTransport(provider);
  const client2 = newClient();
  try {
    await runConnected(provider, transport2, client2);
  } finally {
    await closeQuietly(client2);
  }
}

async function runConnected(provider, transport, client) {
  const visitsBefore = provider.visits.length;
  const ok = await check(`${L}: second connect (fresh transport, same provider) uses the token`, async () => {
    const start = exchanges.length;
    await client.connect(transport, reqOpts);
    const since = exchanges.slice(start);
    const first = since[0];
    assert(first && first.method === 'POST' && first.url === URL_ && first.status === 200,
      `first exchange ${first ? showExchange(first) : '(none)'} (exchanges: ${trail(since)})`);
    assert(provider.visits.length === visitsBefore, 'a new authorization was started');
    assert(transport.protocolVersion === V2025, `negotiated ${transport.protocolVersion}, expected ${V2025}`);
  });
  if (!ok) return;

  await check(`${L}: tools/call test_simple_text`, async () => {
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} }, undefined, reqOpts);
    assert(!result.isError, `result ${short(result)}`);
    assert(textOf(result), `no text content: ${short(result)}`);
  });

  await check(`${L}: tools/call session_info names ${SUBJECT}`, async () => {
    const result = await client.callTool({ name: 'session_info', arguments: {} }, undefined, reqOpts);
    const text = textOf(result);
    assert(!result.isError, `result ${short(result)}`);
    assert(text.includes(SUBJECT), `session_info does not mention ${SUBJECT}: ${short(text)}`);
    assert(text.includes(TOOLS_SCOPE), `session_info does not mention ${TOOLS_SCOPE}: ${short(text)}`);
  });

  // 4. admin_echo needs mcp:admin.
  const step = { error: undefined, result: undefined, challenge: undefined, since: [] };
  const stepName = `${L}: tools/call admin_echo with mcp:tools meets the 403 insufficient_scope challenge`;
  const stepOk = await check(stepName, async () => {
    const start = exchanges.length;
    const visits = provider.visits.length;
    try {
      step.result = await client.callTool({ name: 'admin_echo', arguments: { text: 'step-up' } }, undefined, reqOpts);
    } catch (e) {
      step.error = e;
    }
    step.since = exchanges.slice(start);
    const refused = step.since.filter((e) => e.method === 'POST' && e.url === URL_ && e.status === 403);
    const outcome = step.error ? errText(step.error) : 'success';
    assert(refused.length > 0, `the server did not answer 403 (exchanges: ${trail(step.since)}; outcome: ${outcome})`);
    step.challenge = parseChallenge(refused[0].wwwAuthenticate);
    const c = step.challenge;
    assert(c, `403 without a Bearer challenge`);
    assert(c.error === 'insufficient_scope', `challenge error ${c.error}`);
    assert((c.scope ?? '').split(' ').includes(ADMIN_SCOPE), `challenge scope ${c.scope} lacks ${ADMIN_SCOPE}`);
    assert(c.resource_metadata === METADATA_URL, `challenge resource_metadata ${c.resource_metadata}`);
    const newVisits = provider.visits.slice(visits);
    const what = `SDK exchanges after the call: ${trail(step.since)}`;
    if (!step.error) {
      const text = textOf(step.result);
      assert(!step.result.isError && text.includes('step-up'), `admin_echo result ${short(step.result)}`);
      assert(newVisits.length > 0, `admin_echo succeeded after a 403 without a new authorization (${what})`);
      note(`${L}: the SDK stepped up by itself: 403 -> authorization with scope ` +
        `${JSON.stringify(newVisits.at(-1).scope)} -> retried and succeeded (${what})`);
    } else if (step.error instanceof UnauthorizedError) {
      assert(newVisits.length > 0 && provider.pendingCode, `UnauthorizedError without an authorization (${what})`);
      note(`${L}: the SDK started the step-up itself: 403 -> authorization with scope ` +
        `${JSON.stringify(newVisits.at(-1).scope)} -> UnauthorizedError for the caller to finishAuth (${what})`);
    } else {
      note(`${L}: the SDK did not step up: it saw the 403 insufficient_scope (scope ${JSON.stringify(c.scope)}), ` +
        `${newVisits.length} new authorization requests, and the call failed with ${errText(step.error)} (${what})`);
    }
  });
  if (!stepOk || !step.error) return;

  // 5. The 403 surfaced (or ended in UnauthorizedError): authorize with the wider scope, retry.
  await check(`${L}: re-authorization with ${ADMIN_SCOPE} (SDK auth() + finishAuth), admin_echo retried succeeds`, async () => {
    const start = exchanges.length;
    const visits = provider.visits.length;
    if (!(step.error instanceof UnauthorizedError)) {
      // A refresh cannot widen the scope: start a new authorization with the challenge's scope.
      const scopes = new Set((step.challenge.scope ?? '').split(' ').filter(Boolean));
      scopes.add(TOOLS_SCOPE); // every request needs it too
      const scope = [...scopes].join(' ');
      const old = provider.tokens();
      provider.invalidateCredentials('tokens');
      let result;
      try {
        result = await auth(provider, { serverUrl: new URL(URL_), scope, resourceMetadataUrl: new URL(METADATA_URL), fetchFn: loggingFetch });
      } catch (e) {
        provider.saveTokens(old);
        throw e;
      }
      assert(result === 'REDIRECT', `auth() returned ${result}, expected REDIRECT`);
    }
    const visit = provider.visits.at(-1);
    assert(visit && (visit.scope ?? '').split(' ').includes(ADMIN_SCOPE), `authorization scope ${visit?.scope}`);
    await transport.finishAuth(provider.takeCode());
    const tokens = provider.tokens();
    assert((tokens?.scope ?? '').split(' ').includes(ADMIN_SCOPE), `new token scope ${tokens?.scope}`);
    const result = await client.callTool({ name: 'admin_echo', arguments: { text: 'step-up' } }, undefined, reqOpts);
    assert(!result.isError && textOf(result).includes('step-up'), `admin_echo result ${short(result)}`);
    const info = await client.callTool({ name: 'session_info', arguments: {} }, undefined, reqOpts);
    assert(textOf(info).includes(ADMIN_SCOPE), `session_info after the step-up lacks ${ADMIN_SCOPE}: ${short(textOf(info))}`);
    note(`${L}: re-authorized with scope ${JSON.stringify(visit.scope)} (${provider.visits.length - visits} ` +
      `authorization request) and retried on the same connection (exchanges: ${trail(exchanges.slice(start))})`);
  });
}

try {
  await run();
} catch (e) {
  fail(`${L}: run`, errText(e));
}
clearTimeout(watchdog);
if (passed === 0 && failed === 0) fail(`${L}: overall`, 'no check ran');
summaryAndExit();
