#!/usr/bin/env node
// Interop test of MCP Apps (the extension `io.modelcontextprotocol/ui`,
// SEP-1865, ext-apps `specification/2026-01-26/apps.mdx`; issue 28 item 6).
//
// 1. The TypeScript SDK client (pinned in package.json) drives tiny-mcp's
//    `apps` example: it declares the extension, checks the server's
//    declaration, the tools' `_meta.ui` (and the flat `ui/resourceUri`),
//    the view in `resources/list` and `resources/read`, and calls both tools.
// 2. The same tools and view declared with the TS SDK's `McpServer` and the
//    ext-apps server helpers (`registerAppTool`, `registerAppResource`),
//    served in memory: their `tools/list` entries, the view's
//    `resources/list` entry and its `resources/read` contents must equal
//    ours, after the normalizations listed at `referenceTool`. Not
//    compared: the server's capabilities. The ext-apps 1.7.5 helpers and
//    McpServer declare no `extensions`; ours declares
//    `extensions["io.modelcontextprotocol/ui"]: {}` ("supported, no
//    settings"), which is checked on ours alone.
//
// Usage:
//   node apps.mjs stdio <path-to-apps-binary>
//   node apps.mjs http <url>            (e.g. http://127.0.0.1:3000/mcp)
//
// Output: `ok <name>` or `FAIL <name>: <reason>` per check, then
// `N passed, M failed`. Exit code 1 on any failure. The run is limited to 30 s.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

import { registerAppResource, registerAppTool, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

const UI = 'io.modelcontextprotocol/ui';
const VIEW_URI = 'ui://counter/view';
const VIEW_HTML = readFileSync(new URL('../../../examples/apps-view.html', import.meta.url), 'utf8');
const OVERALL_LIMIT_MS = 30_000;
const REQUEST = { timeout: 10_000 };

// ---------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------

let passed = 0;
let failed = 0;
let finished = false;

async function check(name, fn) {
  try {
    const value = await fn();
    passed += 1;
    console.log(`ok ${name}`);
    return value;
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${String(e?.message ?? e).replace(/\s+/g, ' ').trim()}`);
    return undefined;
  }
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

function finish(code) {
  if (finished) return;
  finished = true;
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code ?? (failed > 0 ? 1 : 0));
}

// JSON with object keys sorted: key order is not part of the wire shape.
function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted(value[k])]));
  }
  return value;
}

// Both sides as they are on the wire: the in-memory transport hands the
// reference's objects over without JSON, members set to `undefined` included.
const wire = (value) => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

// JSON for a message, with a long `text` (the view's HTML) as its length
// and digest.
function shown(value) {
  return JSON.stringify(value, (key, v) => (key === 'text' && typeof v === 'string' && v.length > 80
    ? `<${v.length} chars, sha256 ${createHash('sha256').update(v).digest('hex').slice(0, 12)}>`
    : v));
}

function assertSame(ours, theirs, what) {
  const a = sorted(wire(ours));
  const b = sorted(wire(theirs));
  assert(isDeepStrictEqual(a, b), `${what} differ: ours ${shown(a)} vs ext-apps ${shown(b)}`);
}

const [mode, target] = process.argv.slice(2);
if (!target || (mode !== 'stdio' && mode !== 'http')) {
  console.error('usage: node apps.mjs stdio <path-to-apps-binary> | node apps.mjs http <url>');
  process.exit(2);
}
setTimeout(() => {
  failed += 1;
  console.log(`FAIL overall: run exceeded ${OVERALL_LIMIT_MS} ms`);
  finish(1);
}, OVERALL_LIMIT_MS).unref();

// ---------------------------------------------------------------------------
// The reference: examples/apps.rs declared with McpServer + ext-apps helpers
// ---------------------------------------------------------------------------

// The tools and the view of examples/apps.rs, declared as the ext-apps
// documentation shows: `_meta.ui` on the tools (registerAppTool adds the
// flat `ui/resourceUri`), `_meta.ui` on the resource config for the listing,
// and — since registerAppResource does not copy it onto the contents — the
// same `_meta.ui` returned by the read callback, as the docs' CSP example does.
function referenceServer() {
  const server = new McpServer({ name: 'counter', version: '1.0.0' });
  const counter = { name: z.string(), count: z.number().int() };
  const result = (count) => ({
    content: [{ type: 'text', text: `The counter is at ${count}.` }],
    structuredContent: { name: 'clicks', count },
  });
  registerAppTool(server, 'counter_show', {
    description: 'Shows the counter',
    outputSchema: counter,
    _meta: { ui: { resourceUri: VIEW_URI } },
  }, async () => result(0));
  registerAppTool(server, 'counter_add', {
    description: "Adds to the counter (called by the counter's view)",
    inputSchema: { by: z.number().int().min(1).max(100) },
    outputSchema: counter,
    _meta: { ui: { resourceUri: VIEW_URI, visibility: ['app'] } },
  }, async ({ by }) => result(by));
  registerAppResource(server, 'counter_view', VIEW_URI, {
    title: 'Counter',
    description: 'Shows the counter, with a button that adds one',
    _meta: { ui: { prefersBorder: true } },
  }, async () => ({
    contents: [{ uri: VIEW_URI, mimeType: RESOURCE_MIME_TYPE, text: VIEW_HTML, _meta: { ui: { prefersBorder: true } } }],
  }));
  return server;
}

const SAFE_INTEGER_BOUNDS = { minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

// A reference `tools/list` entry without what the TS SDK adds and MCP Apps
// does not govern (each removed only in exactly the form below):
// - `execution: {taskSupport: "forbidden"}`: McpServer lists it on every
//   tool; absent means the same (2025-11-25 `ToolExecution.taskSupport`).
// - `$schema: draft-07` at the root of both schemas, and
//   `additionalProperties: false` on the output schema: zod's JSON Schema
//   export (ours declares neither; MCP reads a schema without `$schema` as
//   2020-12, and `counter` has the same properties in both).
// - `minimum`/`maximum` of ±2^53-1 on integers: zod's `int()` is a safe
//   integer; ours is a plain `{"type": "integer"}`.
// - `properties: {}` of a tool without arguments: McpServer's empty
//   object schema; ours is `{"type": "object"}`.
function referenceTool(tool) {
  const out = { ...tool };
  if (isDeepStrictEqual(out.execution, { taskSupport: 'forbidden' })) delete out.execution;
  for (const key of ['inputSchema', 'outputSchema']) {
    if (out[key]) out[key] = zodSchema(out[key], key === 'outputSchema');
  }
  return out;
}

function zodSchema(schema, output) {
  const out = { ...schema };
  if (out.$schema === 'http://json-schema.org/draft-07/schema#') delete out.$schema;
  if (output && out.additionalProperties === false) delete out.additionalProperties;
  if (out.properties && Object.keys(out.properties).length === 0) delete out.properties;
  if (out.properties) {
    out.properties = Object.fromEntries(Object.entries(out.properties).map(([name, prop]) => {
      const p = { ...prop };
      for (const [bound, value] of Object.entries(SAFE_INTEGER_BOUNDS)) {
        if (p.type === 'integer' && p[bound] === value) delete p[bound];
      }
      return [name, p];
    }));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Connections
// ---------------------------------------------------------------------------

// A client of the extension (`extensions[UI].mimeTypes`), or a plain one.
function newClient(declaresUi) {
  const capabilities = declaresUi ? { extensions: { [UI]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {};
  return new Client({ name: 'apps-interop', version: '0.0.0' }, { capabilities });
}

async function connectOurs(declaresUi) {
  const client = newClient(declaresUi);
  const transport = mode === 'stdio'
    ? new StdioClientTransport({ command: target, args: ['--stdio'], stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target));
  await client.connect(transport, REQUEST);
  return client;
}

async function connectReference() {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await referenceServer().connect(serverSide);
  const client = newClient(true);
  await client.connect(clientSide, REQUEST);
  return client;
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

async function checkOurs(ours) {
  await check('server declares extensions["io.modelcontextprotocol/ui"]', () => {
    const declared = ours.getServerCapabilities()?.extensions?.[UI];
    assert(declared && typeof declared === 'object', `capabilities ${JSON.stringify(ours.getServerCapabilities())}`);
  });
  const tools = await check('tools/list', async () => (await ours.listTools(undefined, REQUEST)).tools);
  const byName = (name) => tools?.find((t) => t.name === name);
  await check('counter_show _meta: ui.resourceUri and the flat ui/resourceUri', () => {
    const meta = byName('counter_show')?._meta;
    assert(meta?.ui?.resourceUri === VIEW_URI, `_meta ${JSON.stringify(meta)}`);
    assert(meta['ui/resourceUri'] === VIEW_URI, `_meta ${JSON.stringify(meta)}`);
    assert(meta.ui.visibility === undefined, `visibility ${JSON.stringify(meta.ui.visibility)}`);
  });
  await check('counter_add _meta: ui.visibility ["app"], ui.resourceUri, ui/resourceUri', () => {
    const meta = byName('counter_add')?._meta;
    assert(isDeepStrictEqual(meta?.ui?.visibility, ['app']), `_meta ${JSON.stringify(meta)}`);
    assert(meta.ui.resourceUri === VIEW_URI && meta['ui/resourceUri'] === VIEW_URI, `_meta ${JSON.stringify(meta)}`);
  });
  await check('resources/list: the view with its mimeType and _meta.ui', async () => {
    const { resources } = await ours.listResources(undefined, REQUEST);
    const view = resources.find((r) => r.uri === VIEW_URI);
    assert(view, `no ${VIEW_URI} in ${JSON.stringify(resources.map((r) => r.uri))}`);
    assert(view.mimeType === RESOURCE_MIME_TYPE, `mimeType ${view.mimeType}`);
    assert(view._meta?.ui?.prefersBorder === true, `_meta ${JSON.stringify(view._meta)}`);
  });
  await check('resources/read: mimeType, the HTML document, _meta.ui.prefersBorder', async () => {
    const { contents } = await ours.readResource({ uri: VIEW_URI }, REQUEST);
    assert(contents.length === 1, `${contents.length} contents`);
    const [c] = contents;
    assert(c.uri === VIEW_URI && c.mimeType === RESOURCE_MIME_TYPE, `uri ${c.uri}, mimeType ${c.mimeType}`);
    assert(typeof c.text === 'string' && /^<!DOCTYPE html>/i.test(c.text), `text ${String(c.text).slice(0, 40)}`);
    assert(c.text === VIEW_HTML, 'text is not examples/apps-view.html');
    assert(c._meta?.ui?.prefersBorder === true, `_meta ${JSON.stringify(c._meta)}`);
  });
  const shown = await check('tools/call counter_show: the server saw the declaration', async () => {
    const result = await ours.callTool({ name: 'counter_show', arguments: {} }, undefined, REQUEST);
    const text = result.content?.[0]?.text ?? '';
    assert(text.includes('the view shows it'), `text ${JSON.stringify(text)}`);
    assert(result.structuredContent?.name === 'clicks', `structuredContent ${JSON.stringify(result.structuredContent)}`);
    return result.structuredContent.count;
  });
  await check('tools/call counter_add (app-only) {by: 2}', async () => {
    const result = await ours.callTool({ name: 'counter_add', arguments: { by: 2 } }, undefined, REQUEST);
    assert(!result.isError, `isError: ${JSON.stringify(result.content)}`);
    assert(result.structuredContent?.count === shown + 2, `structuredContent ${JSON.stringify(result.structuredContent)}`);
  });
}

// A client that does not declare the extension gets text for text hosts
// (MCP Apps "Graceful Degradation"): proves the declaration above counted.
async function checkPlain() {
  await check('a client without the extension: counter_show text without the view', async () => {
    const plain = await connectOurs(false);
    try {
      const result = await plain.callTool({ name: 'counter_show', arguments: {} }, undefined, REQUEST);
      const text = result.content?.[0]?.text ?? '';
      assert(/^The counter is at \d+\.$/.test(text), `text ${JSON.stringify(text)}`);
    } finally {
      await plain.close();
    }
  });
}

async function compare(ours, reference) {
  const [ourTools, theirTools] = await Promise.all([ours, reference].map(async (c) => (await c.listTools(undefined, REQUEST)).tools));
  for (const name of ['counter_show', 'counter_add']) {
    await check(`same tools/list entry as ext-apps: ${name}`, () => {
      const mine = ourTools.find((t) => t.name === name);
      const theirs = theirTools.find((t) => t.name === name);
      assert(mine && theirs, `${name}: ours ${!!mine}, ext-apps ${!!theirs}`);
      assertSame(mine, referenceTool(theirs), 'tools');
    });
  }
  await check('same resources/list entry of the view as ext-apps', async () => {
    const [mine, theirs] = await Promise.all([ours, reference].map(async (c) =>
      (await c.listResources(undefined, REQUEST)).resources.find((r) => r.uri === VIEW_URI)));
    assertSame(mine, theirs, 'resources');
  });
  await check('same resources/read contents as ext-apps', async () => {
    const [mine, theirs] = await Promise.all([ours, reference].map(async (c) =>
      (await c.readResource({ uri: VIEW_URI }, REQUEST)).contents));
    assertSame(mine, theirs, 'contents');
  });
}

try {
  const ours = await check(`connect (${mode}) declaring the extension`, () => connectOurs(true));
  const reference = await check('connect to the ext-apps reference (in memory)', () => connectReference());
  if (ours) await checkOurs(ours);
  if (ours) await checkPlain();
  if (ours && reference) await compare(ours, reference);
  await Promise.allSettled([ours?.close(), reference?.close()]);
} catch (e) {
  failed += 1;
  console.log(`FAIL overall: ${e?.message ?? e}`);
}
finish();
