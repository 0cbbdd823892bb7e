#!/usr/bin/env node
// Interop test: the official TypeScript MCP SDK client drives tiny-mcp's
// `everything` example server and checks every tool, resource, prompt and a
// few protocol features.
//
// Usage:
//   node client.mjs stdio <path-to-everything-binary> [extra server args...]
//   node client.mjs http <url>            (e.g. http://127.0.0.1:3000/mcp)
//
// Output: one line per check, `ok <name>` or `FAIL <name>: <reason>`, then a
// final line `N passed, M failed`. Exit code 1 on any failure (or bad usage).
// Every await is bounded by a timeout; the whole run is limited to 60 s.

import { EventEmitter } from 'node:events';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  PromptListChangedNotificationSchema,
  ElicitationCompleteNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

const OVERALL_LIMIT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 10_000; // per MCP request
const CONNECT_TIMEOUT_MS = 15_000; // spawn + initialize
const NOTIFY_TIMEOUT_MS = 5_000; // waiting for notifications after a call
const CLOSE_TIMEOUT_MS = 6_000; // stdio close may take 2 s + 2 s (SIGTERM) + SIGKILL

const SAMPLING_TEXT = 'This is a test response from the client';
const ROOTS = [{ uri: 'file:///tmp/interop', name: 'interop' }];
const WATCHED_URI = 'test://watched-resource';
const TEMPLATE_URI = 'test://template/42/data';
const URL_ELICITATION_REQUIRED = -32042;

// Names the example must provide (CONFORMANCE.md §5 plus the interop extras).
const EXPECTED_TOOLS = [
  'test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource',
  'test_multiple_content_types', 'test_tool_with_logging', 'test_tool_with_progress',
  'test_error_handling', 'test_sampling', 'test_elicitation', 'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums', 'json_schema_2020_12_tool', 'test_reconnection',
  'echo', 'slow', 'session_info', 'notify_changed', 'test_url_elicitation',
  'test_url_elicitation_required', 'test_roots',
];
const EXPECTED_RESOURCES = ['test://static-text', 'test://static-binary', WATCHED_URI];
const EXPECTED_PROMPTS = [
  'test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource',
  'test_prompt_with_image',
];

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
  const text = String(reason).replace(/\s+/g, ' ').trim();
  console.log(`FAIL ${name}: ${text}`);
}

function errText(e) {
  if (e && typeof e === 'object') {
    const code = 'code' in e && e.code !== undefined ? ` (code ${e.code})` : '';
    return `${e.message ?? String(e)}${code}`;
  }
  return String(e);
}

async function check(name, fn) {
  if (finished) return undefined;
  try {
    const value = await fn();
    pass(name);
    return value;
  } catch (e) {
    fail(name, errText(e));
    return undefined;
  }
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

function summaryAndExit(code) {
  if (finished) return;
  finished = true;
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code ?? (failed > 0 ? 1 : 0));
}

// Rejects after `ms` unless `promise` settles first.
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const reqOpts = (extra = {}) => ({ timeout: REQUEST_TIMEOUT_MS, ...extra });

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

const usage = 'usage: node client.mjs stdio <path-to-everything-binary> [server args...] | node client.mjs http <url>';
const [mode, target, ...serverArgs] = process.argv.slice(2);
if (!target || (mode !== 'stdio' && mode !== 'http')) {
  console.error(usage);
  fail('usage', usage);
  summaryAndExit(1);
}

// Overall watchdog: never hang, whatever happens.
const watchdog = setTimeout(() => {
  fail('overall', `run exceeded ${OVERALL_LIMIT_MS} ms`);
  summaryAndExit(1);
}, OVERALL_LIMIT_MS);

process.on('unhandledRejection', (reason) => {
  if (!finished) fail('unhandled rejection', errText(reason));
});

// Should the event loop ever drain before the run finished, still report.
process.on('exit', () => {
  if (!finished) {
    finished = true;
    failed += 1;
    console.log('FAIL overall: event loop drained before the run finished');
    console.log(`${passed} passed, ${failed} failed`);
    process.exitCode = 1;
  }
});

// ---------------------------------------------------------------------------
// Event recording (notifications and server->client requests)
// ---------------------------------------------------------------------------

const events = new EventEmitter();
events.setMaxListeners(100);
const notifications = []; // {method, params}
const serverRequests = []; // {method, params}

function record(list, method, params) {
  list.push({ method, params });
  events.emit('event');
}

// Resolves when pred() becomes true (re-checked on every recorded event);
// rejects after ms. No polling, no sleeps.
function waitFor(pred, ms, what) {
  return new Promise((resolve, reject) => {
    let timer;
    const onEvent = () => {
      let value;
      try {
        value = pred();
      } catch (e) {
        cleanup();
        reject(e);
        return;
      }
      if (value) {
        cleanup();
        resolve(value);
      }
    };
    const cleanup = () => {
      clearTimeout(timer);
      events.off('event', onEvent);
    };
    timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    events.on('event', onEvent);
    onEvent();
  });
}

const notificationsSince = (mark, method) => notifications.slice(mark).filter((n) => n.method === method);
const requestsSince = (mark, method) => serverRequests.slice(mark).filter((r) => r.method === method);

// ---------------------------------------------------------------------------
// Values from JSON Schemas
// ---------------------------------------------------------------------------

function resolveRef(schema, root) {
  let s = schema;
  for (let i = 0; i < 10 && s && typeof s === 'object' && typeof s.$ref === 'string'; i += 1) {
    const ref = s.$ref;
    if (!ref.startsWith('#/')) return {};
    let node = root;
    for (const part of ref.slice(2).split('/')) {
      node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    s = node ?? {};
  }
  return s ?? {};
}

function stringFor(schema, name) {
  switch (schema.format) {
    case 'email': return 'test@example.com';
    case 'uri': return 'https://example.com/interop';
    case 'date': return '2024-01-01';
    case 'date-time': return '2024-01-01T00:00:00Z';
    default: break;
  }
  if (/e-?mail/i.test(name ?? '')) return 'test@example.com';
  let s = 'hello';
  if (typeof schema.minLength === 'number' && s.length < schema.minLength) s = s.padEnd(schema.minLength, 'x');
  if (typeof schema.maxLength === 'number' && s.length > schema.maxLength) s = s.slice(0, schema.maxLength);
  return s;
}

function numberFor(schema, integer) {
  let n = 1;
  if (typeof schema.minimum === 'number' && n < schema.minimum) n = schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number' && n <= schema.exclusiveMinimum) n = schema.exclusiveMinimum + 1;
  if (typeof schema.maximum === 'number' && n > schema.maximum) n = schema.maximum;
  return integer ? Math.ceil(n) : n;
}

// A value that fits `schema`; `useDefaults` prefers the schema's default.
function valueFor(rawSchema, root, name, useDefaults, depth = 0) {
  const schema = resolveRef(rawSchema, root);
  if (depth > 8) return null;
  if (useDefaults && schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['oneOf', 'anyOf']) {
    if (Array.isArray(schema[key]) && schema[key].length > 0) {
      const first = resolveRef(schema[key][0], root);
      if (first.const !== undefined) return first.const;
      return valueFor({ type: schema.type, ...first }, root, name, useDefaults, depth + 1);
    }
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  if (!type) type = schema.properties ? 'object' : schema.items ? 'array' : 'string';
  switch (type) {
    case 'string': return stringFor(schema, name);
    case 'integer': return numberFor(schema, true);
    case 'number': return numberFor(schema, false);
    case 'boolean': return true;
    case 'null': return null;
    case 'array': {
      const count = Math.max(1, typeof schema.minItems === 'number' ? schema.minItems : 1);
      const items = [];
      for (let i = 0; i < count; i += 1) items.push(valueFor(schema.items ?? {}, root, name, useDefaults, depth + 1));
      return items;
    }
    case 'object': return objectFor(schema, root, false, useDefaults, depth + 1);
    default: return 'hello';
  }
}

// An object for an object schema: all properties when `all`, else the required ones.
function objectFor(rawSchema, root, all, useDefaults, depth = 0) {
  const schema = resolveRef(rawSchema, root);
  const out = {};
  const props = schema.properties ?? {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const [key, propSchema] of Object.entries(props)) {
    if (all || required.includes(key)) out[key] = valueFor(propSchema, root, key, useDefaults, depth);
  }
  for (const key of required) {
    if (!(key in out)) out[key] = 'hello';
  }
  return out;
}

function toolArguments(tool) {
  if (tool.name === 'slow') return { seconds: 0.3 };
  if (tool.name === 'slow_compute') return { seconds: 0 };
  const schema = tool.inputSchema ?? {};
  return objectFor(schema, schema, false, false);
}

// Content for an accepted form-mode elicitation: every property, from its
// default where there is one.
function elicitationContent(requestedSchema) {
  const schema = requestedSchema ?? {};
  return objectFor(schema, schema, true, true);
}

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

const client = new Client(
  { name: 'tiny-mcp-interop-ts', version: '1.0.0' },
  {
    capabilities: {
      sampling: {},
      elicitation: { form: {}, url: {} },
      roots: { listChanged: true },
    },
  },
);

client.onerror = (e) => {
  // Transport-level noise (e.g. an optional GET stream) is logged, not failed.
  console.error(`[client error] ${errText(e)}`);
};

client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  record(serverRequests, request.method, request.params);
  return {
    role: 'assistant',
    content: { type: 'text', text: SAMPLING_TEXT },
    model: 'test-model',
    stopReason: 'endTurn',
  };
});

client.setRequestHandler(ElicitRequestSchema, async (request) => {
  record(serverRequests, request.method, request.params);
  const params = request.params ?? {};
  if (params.mode === 'url') return { action: 'accept' };
  return { action: 'accept', content: elicitationContent(params.requestedSchema) };
});

client.setRequestHandler(ListRootsRequestSchema, async (request) => {
  record(serverRequests, request.method, request.params);
  return { roots: ROOTS };
});

for (const schema of [
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  PromptListChangedNotificationSchema,
  ElicitationCompleteNotificationSchema,
]) {
  client.setNotificationHandler(schema, async (n) => record(notifications, n.method, n.params));
}
client.fallbackNotificationHandler = async (n) => record(notifications, n.method, n.params);

// Follows nextCursor; guards against a cursor loop.
async function listAll(fn, key) {
  const items = [];
  const seen = new Set();
  let cursor;
  for (let page = 0; page < 100; page += 1) {
    const result = await fn(cursor === undefined ? undefined : { cursor }, reqOpts());
    assert(Array.isArray(result[key]), `result has no ${key} array`);
    items.push(...result[key]);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === null) return items;
    assert(!seen.has(cursor), `nextCursor repeats: ${cursor}`);
    seen.add(cursor);
  }
  throw new Error('more than 100 pages');
}

function texts(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// ---------------------------------------------------------------------------
// Tool-specific assertions (beyond "non-empty content, isError not true")
// ---------------------------------------------------------------------------

const toolChecks = {
  test_simple_text: (r) => assert(texts(r).length > 0, 'no non-empty text item'),
  test_image_content: (r) => assert(r.content.some((c) => c.type === 'image' && c.data && c.mimeType), 'no image item with data and mimeType'),
  test_audio_content: (r) => assert(r.content.some((c) => c.type === 'audio' && c.data && c.mimeType === 'audio/wav'), 'no audio item with data and mimeType audio/wav'),
  test_embedded_resource: (r) => assert(r.content.some((c) => c.type === 'resource' && c.resource?.uri && (c.resource.text !== undefined || c.resource.blob !== undefined)), 'no embedded resource item'),
  test_multiple_content_types: (r) => {
    const types = new Set(r.content.map((c) => c.type));
    for (const t of ['text', 'image', 'resource']) assert(types.has(t), `no ${t} item`);
  },
  test_error_handling: (r) => assert(r.isError === true, 'isError is not true'),
  echo: (r) => assert(texts(r).includes('hello'), `echo did not return the text: ${JSON.stringify(texts(r))}`),
  test_sampling: (r, ctx) => {
    assert(requestsSince(ctx.reqMark, 'sampling/createMessage').length > 0, 'server sent no sampling/createMessage');
    assert(texts(r).includes(SAMPLING_TEXT), `result does not contain the sampling answer: ${JSON.stringify(texts(r))}`);
  },
  test_elicitation: (r, ctx) => assert(requestsSince(ctx.reqMark, 'elicitation/create').length > 0, 'server sent no elicitation/create'),
  test_elicitation_sep1034_defaults: (r, ctx) => {
    const req = requestsSince(ctx.reqMark, 'elicitation/create')[0];
    assert(req, 'server sent no elicitation/create');
    const p = req.params.requestedSchema?.properties ?? {};
    assert(p.name?.default === 'John Doe' && p.age?.default === 30 && p.score?.default === 95.5
      && p.status?.default === 'active' && p.verified?.default === true, `unexpected defaults: ${JSON.stringify(p)}`);
  },
  test_elicitation_sep1330_enums: (r, ctx) => {
    const req = requestsSince(ctx.reqMark, 'elicitation/create')[0];
    assert(req, 'server sent no elicitation/create');
    const p = req.params.requestedSchema?.properties ?? {};
    for (const k of ['untitledSingle', 'titledSingle', 'legacyEnum', 'untitledMulti', 'titledMulti']) {
      assert(p[k], `requestedSchema lacks ${k}`);
    }
  },
  test_tool_with_progress: (r, ctx) => {
    assert(ctx.progress.length >= 3, `expected >= 3 progress notifications, got ${ctx.progress.length}`);
    for (let i = 1; i < ctx.progress.length; i += 1) {
      assert(ctx.progress[i].progress >= ctx.progress[i - 1].progress, 'progress decreased');
    }
  },
  slow: (r, ctx) => assert(ctx.progress.length >= 1, 'no progress notification'),
  test_tool_with_logging: async (r, ctx) => {
    await waitFor(() => notificationsSince(ctx.noteMark, 'notifications/message').length >= 3,
      NOTIFY_TIMEOUT_MS, '3 notifications/message');
  },
  test_url_elicitation: async (r, ctx) => {
    const req = requestsSince(ctx.reqMark, 'elicitation/create').find((q) => q.params.mode === 'url');
    assert(req, 'server sent no URL-mode elicitation/create');
    assert(req.params.url && req.params.elicitationId, 'URL elicitation lacks url or elicitationId');
    const id = req.params.elicitationId;
    await waitFor(() => notificationsSince(ctx.noteMark, 'notifications/elicitation/complete')
      .some((n) => n.params?.elicitationId === id), NOTIFY_TIMEOUT_MS, `notifications/elicitation/complete for ${id}`);
  },
  test_roots: (r, ctx) => {
    assert(requestsSince(ctx.reqMark, 'roots/list').length > 0, 'server sent no roots/list');
    assert(texts(r).includes(ROOTS[0].uri), `result does not contain the root ${ROOTS[0].uri}`);
  },
};

async function callTool(tool) {
  const args = toolArguments(tool);
  const params = { name: tool.name };
  if (Object.keys(args).length > 0) params.arguments = args;
  const ctx = { reqMark: serverRequests.length, noteMark: notifications.length, progress: [] };
  const result = await client.callTool(params, undefined, reqOpts({ onprogress: (p) => ctx.progress.push(p) }));
  return { result, ctx };
}

function assertToolResult(name, result) {
  assert(Array.isArray(result.content) && result.content.length > 0, 'empty content');
  if (name !== 'test_error_handling') {
    assert(result.isError !== true, `isError: ${JSON.stringify(texts(result)).slice(0, 200)}`);
  }
}

// ---------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------

async function main() {
  let transport;
  if (mode === 'stdio') {
    transport = new StdioClientTransport({
      command: target,
      args: serverArgs,
      env: { ...getDefaultEnvironment(), ...pick(process.env, ['RUST_LOG', 'RUST_BACKTRACE']) },
      stderr: 'inherit',
    });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target));
  }

  const connected = await check(`connect (${mode})`, async () => {
    await withTimeout(client.connect(transport, reqOpts({ timeout: CONNECT_TIMEOUT_MS })), CONNECT_TIMEOUT_MS + 1000, 'connect');
    return true;
  });
  if (!connected) {
    await closeClient(transport);
    summaryAndExit(1);
    return;
  }

  await check('initialize capabilities', async () => {
    const caps = client.getServerCapabilities() ?? {};
    assert(caps.tools, 'no tools capability');
    assert(caps.resources?.subscribe === true, 'resources.subscribe is not true');
    assert(caps.prompts, 'no prompts capability');
    assert(caps.logging, 'no logging capability');
    assert(caps.completions, 'no completions capability');
    assert(client.getServerVersion()?.name, 'no serverInfo.name');
  });

  await check('ping', async () => {
    const r = await client.ping(reqOpts());
    assert(r && typeof r === 'object', 'ping result is not an object');
  });

  await check('logging/setLevel', async () => {
    await client.setLoggingLevel('debug', reqOpts());
  });

  // Tools -------------------------------------------------------------------
  const tools = await check('tools/list', async () => {
    const list = await listAll((p, o) => client.listTools(p, o), 'tools');
    assert(list.length > 0, 'no tools');
    for (const t of list) {
      assert(t.name, 'a tool has no name');
      assert(t.description, `tool ${t.name} has no description`);
      assert(t.inputSchema && typeof t.inputSchema === 'object', `tool ${t.name} has no inputSchema`);
    }
    return list;
  }) ?? [];
  // listAll's per-page listTools clears the SDK's output-schema cache each page;
  // make it see every tool.
  client.cacheToolMetadata(tools);

  await check('tools/list has expected tools', async () => {
    const names = new Set(tools.map((t) => t.name));
    const missing = EXPECTED_TOOLS.filter((n) => !names.has(n));
    assert(missing.length === 0, `missing: ${missing.join(', ')}`);
  });

  for (const tool of tools) {
    if (tool.name === 'notify_changed') continue; // called in the subscription section
    const name = `tools/call ${tool.name}`;
    // Task fixtures (CONFORMANCE-NEXT.md): a task-required tool cannot run
    // for a client that asks for no task; protocol_error_job fails with -32603.
    const failing = tool.execution?.taskSupport === 'required' || tool.name === 'protocol_error_job';
    if (failing) {
      await check(name, async () => {
        let result;
        try {
          ({ result } = await callTool(tool));
        } catch (e) {
          if (tool.name === 'protocol_error_job') assert(e?.code === -32603, `expected -32603, got ${errText(e)}`);
          return;
        }
        throw new Error(`expected an error, got a result: ${JSON.stringify(result).slice(0, 200)}`);
      });
      continue;
    }
    if (tool.name === 'test_url_elicitation_required') {
      await check(name, async () => {
        let result;
        try {
          ({ result } = await callTool(tool));
        } catch (e) {
          assert(e?.code === URL_ELICITATION_REQUIRED, `expected error ${URL_ELICITATION_REQUIRED}, got ${errText(e)}`);
          return;
        }
        throw new Error(`expected JSON-RPC error ${URL_ELICITATION_REQUIRED}, got a result: ${JSON.stringify(result).slice(0, 200)}`);
      });
      continue;
    }
    await check(name, async () => {
      const { result, ctx } = await callTool(tool);
      assertToolResult(tool.name, result);
      const extra = toolChecks[tool.name];
      if (extra) await extra(result, ctx);
    });
  }

  // Resources ---------------------------------------------------------------
  const resources = await check('resources/list', async () => {
    const list = await listAll((p, o) => client.listResources(p, o), 'resources');
    for (const r of list) assert(r.uri && r.name, `resource without uri/name: ${JSON.stringify(r)}`);
    const uris = new Set(list.map((r) => r.uri));
    const missing = EXPECTED_RESOURCES.filter((u) => !uris.has(u));
    assert(missing.length === 0, `missing: ${missing.join(', ')}`);
    return list;
  }) ?? [];

  for (const resource of resources) {
    await check(`resources/read ${resource.uri}`, async () => {
      const r = await client.readResource({ uri: resource.uri }, reqOpts());
      assert(Array.isArray(r.contents) && r.contents.length > 0, 'empty contents');
      const c = r.contents[0];
      assert(c.uri === resource.uri, `contents[0].uri is ${c.uri}`);
      assert((typeof c.text === 'string' && c.text.length > 0) || (typeof c.blob === 'string' && c.blob.length > 0),
        'contents[0] has neither non-empty text nor blob');
    });
  }

  await check(`resources/read ${TEMPLATE_URI}`, async () => {
    const r = await client.readResource({ uri: TEMPLATE_URI }, reqOpts());
    assert(Array.isArray(r.contents) && r.contents.length > 0, 'empty contents');
    const c = r.contents[0];
    assert(c.uri === TEMPLATE_URI, `contents[0].uri is ${c.uri}`);
    assert(typeof c.text === 'string' && c.text.includes('42'), `text does not contain 42: ${JSON.stringify(c.text)}`);
  });

  await check('resources/templates/list', async () => {
    const list = await listAll((p, o) => client.listResourceTemplates(p, o), 'resourceTemplates');
    assert(list.some((t) => t.uriTemplate === 'test://template/{id}/data'), 'no test://template/{id}/data template');
    for (const t of list) assert(t.uriTemplate && t.name, `template without uriTemplate/name: ${JSON.stringify(t)}`);
  });

  // Prompts -----------------------------------------------------------------
  const prompts = await check('prompts/list', async () => {
    const list = await listAll((p, o) => client.listPrompts(p, o), 'prompts');
    for (const p of list) assert(p.name && p.description, `prompt without name/description: ${JSON.stringify(p)}`);
    const names = new Set(list.map((p) => p.name));
    const missing = EXPECTED_PROMPTS.filter((n) => !names.has(n));
    assert(missing.length === 0, `missing: ${missing.join(', ')}`);
    return list;
  }) ?? [];

  for (const prompt of prompts) {
    await check(`prompts/get ${prompt.name}`, async () => {
      const args = {};
      for (const a of prompt.arguments ?? []) {
        if (!a.required) continue;
        args[a.name] = /uri/i.test(a.name) ? 'test://static-text' : `value-${a.name}`;
      }
      const params = { name: prompt.name };
      if (Object.keys(args).length > 0) params.arguments = args;
      const r = await client.getPrompt(params, reqOpts());
      assert(Array.isArray(r.messages) && r.messages.length > 0, 'empty messages');
      for (const m of r.messages) assert(m.role && m.content, 'a message lacks role or content');
      const json = JSON.stringify(r.messages);
      for (const v of Object.values(args)) assert(json.includes(v), `messages do not mention argument value ${v}`);
    });
  }

  // Completion --------------------------------------------------------------
  await check('completion/complete ref/prompt test_prompt_with_arguments arg1', async () => {
    const r = await client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: '' },
    }, reqOpts());
    assert(Array.isArray(r.completion?.values), 'completion.values is not an array');
  });

  await check('ping (again)', async () => {
    await client.ping(reqOpts());
  });

  await check('logging/setLevel info', async () => {
    await client.setLoggingLevel('info', reqOpts());
  });

  // Subscriptions and change notifications -----------------------------------
  const subscribed = await check(`resources/subscribe ${WATCHED_URI}`, async () => {
    await client.subscribeResource({ uri: WATCHED_URI }, reqOpts());
    return true;
  });

  const notifyTool = tools.find((t) => t.name === 'notify_changed');
  if (!notifyTool) {
    fail('tools/call notify_changed', 'tool not listed');
  } else {
    const noteMark = notifications.length;
    await check('tools/call notify_changed', async () => {
      const { result } = await callTool(notifyTool);
      assertToolResult(notifyTool.name, result);
    });
    if (subscribed) {
      await check('notifications/resources/updated', async () => {
        await waitFor(() => notificationsSince(noteMark, 'notifications/resources/updated')
          .some((n) => n.params?.uri === WATCHED_URI), NOTIFY_TIMEOUT_MS, `notifications/resources/updated for ${WATCHED_URI}`);
      });
    }
    await check('notifications/tools/list_changed', async () => {
      await waitFor(() => notificationsSince(noteMark, 'notifications/tools/list_changed').length > 0,
        NOTIFY_TIMEOUT_MS, 'notifications/tools/list_changed');
    });
  }

  if (subscribed) {
    await check(`resources/unsubscribe ${WATCHED_URI}`, async () => {
      await client.unsubscribeResource({ uri: WATCHED_URI }, reqOpts());
    });
  }

  if (mode === 'http') {
    await check('terminate session (DELETE)', async () => {
      assert(transport.sessionId, 'server issued no Mcp-Session-Id');
      await withTimeout(transport.terminateSession(), REQUEST_TIMEOUT_MS, 'DELETE');
    });
  }

  await closeClient(transport);
  clearTimeout(watchdog);
  summaryAndExit();
}

function pick(obj, keys) {
  const out = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

async function closeClient() {
  try {
    await withTimeout(client.close(), CLOSE_TIMEOUT_MS, 'close');
  } catch (e) {
    console.error(`[close] ${errText(e)}`);
  }
}

main().catch((e) => {
  fail('unexpected', errText(e));
  summaryAndExit(1);
});
