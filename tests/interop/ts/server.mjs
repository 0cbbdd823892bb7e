#!/usr/bin/env node
// Interop server: the official TypeScript MCP SDK's high-level server
// (`McpServer`, @modelcontextprotocol/sdk pinned in package.json) for
// tiny-mcp's blocking client to drive.
//
// Usage:
//   node server.mjs --stdio         serve over stdin/stdout
//   node server.mjs --http PORT     serve Streamable HTTP on http://127.0.0.1:PORT/mcp
//                                   (one session, and one McpServer, per initialize)
//
// Tools: `echo`, `add`, `progress` (sends `steps` progress notifications when
// the call carries a progressToken), `elicit` (asks the client for a name),
// `sample` (asks the client's model), `fail` (returns isError), `route` and
// `route_zone` (return their argument). Resource
// `interop://greeting`, prompt `greet`. The SDK speaks the 2025-11-25 era only
// (initialize); server requests go out on the calling request's stream.
//
// Run by scripts/interop/interop-client.sh (tests/fixtures/interop_client/ is the client).

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const MAX_BODY = 4 * 1024 * 1024;

function text(t) {
  return { content: [{ type: 'text', text: t }] };
}

function registerTools(server) {
  server.registerTool('echo', { description: 'Returns text unchanged', inputSchema: { text: z.string() } }, async ({ text: t }) =>
    text(t),
  );
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) =>
    text(String(a + b)),
  );
  server.registerTool(
    'progress',
    { description: 'Reports steps progress notifications', inputSchema: { steps: z.number().int().min(0).max(100) } },
    async ({ steps }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) {
        for (let i = 1; i <= steps; i++) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        }
      }
      return text(`did ${steps} steps`);
    },
  );
  // `x-mcp-header` (2026-07-28 HTTP) means nothing to this 2025-11-25 SDK: plain tools here.
  for (const [name, arg] of [['route', 'region'], ['route_zone', 'zone']]) {
    server.registerTool(name, { description: 'Returns its argument', inputSchema: { [arg]: z.string() } }, async (args) =>
      text(`routed to ${args[arg]}`),
    );
  }
  server.registerTool('fail', { description: 'Always fails (isError)', inputSchema: { reason: z.string().optional() } }, async ({ reason }) => ({
    ...text(`failed: ${reason ?? 'as asked'}`),
    isError: true,
  }));
}

function registerAsking(server) {
  server.registerTool('elicit', { description: 'Asks the client for a name', inputSchema: { question: z.string() } }, async ({ question }, extra) => {
    const answer = await server.server.elicitInput(
      {
        message: question,
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      { relatedRequestId: extra.requestId, timeout: 20_000 },
    );
    if (answer.action !== 'accept') return { ...text(`elicitation ${answer.action}`), isError: true };
    return text(`hello ${answer.content?.name}`);
  });
  server.registerTool('sample', { description: "Asks the client's model", inputSchema: { prompt: z.string() } }, async ({ prompt }, extra) => {
    const answer = await server.server.createMessage(
      { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 },
      { relatedRequestId: extra.requestId, timeout: 20_000 },
    );
    const said = answer.content?.type === 'text' ? answer.content.text : JSON.stringify(answer.content);
    return text(`model said: ${said}`);
  });
}

function makeServer() {
  const server = new McpServer({ name: 'ts-interop-server', version: '1.32.2-interop' });
  registerTools(server);
  registerAsking(server);
  server.registerResource('greeting', 'interop://greeting', { mimeType: 'text/plain', description: 'A fixed text' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from typescript' }],
  }));
  server.registerPrompt('greet', { description: 'Greets someone', argsSchema: { name: z.string() } }, ({ name }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}.` } }],
  }));
  return server;
}

// The request body as JSON (undefined when empty or not JSON).
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) reject(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(raw ? JSON.parse(raw) : undefined);
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', reject);
  });
}

function refuse(res, status, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function handle(transports, req, res) {
  if (new URL(req.url, 'http://localhost').pathname !== '/mcp') return refuse(res, 404, 'Not Found');
  const body = req.method === 'POST' ? await readBody(req) : undefined;
  const sid = req.headers['mcp-session-id'];
  const known = sid ? transports.get(sid) : undefined;
  if (known) return known.handleRequest(req, res, body);
  if (sid) return refuse(res, 404, 'Session not found');
  if (req.method !== 'POST' || !isInitializeRequest(body)) return refuse(res, 400, 'Bad Request: No valid session ID provided');
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => transports.set(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId) transports.delete(transport.sessionId);
  };
  await makeServer().connect(transport);
  return transport.handleRequest(req, res, body);
}

function serveHttp(port) {
  const transports = new Map();
  const http = createServer((req, res) => {
    handle(transports, req, res).catch((e) => {
      console.error('ts-interop-server:', e);
      if (!res.headersSent) refuse(res, 500, 'Internal error');
      else res.end();
    });
  });
  http.listen(port, '127.0.0.1', () => console.error(`ts-interop-server: http://127.0.0.1:${port}/mcp`));
  const stop = () => {
    for (const t of transports.values()) t.close().catch(() => {});
    http.close();
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function main() {
  const [mode, port] = process.argv.slice(2);
  if (mode === '--stdio') {
    const transport = new StdioServerTransport();
    process.stdin.on('end', () => process.exit(0));
    await makeServer().connect(transport);
  } else if (mode === '--http' && /^\d+$/.test(port ?? '')) {
    serveHttp(Number(port));
  } else {
    console.error('usage: node server.mjs --stdio | --http PORT');
    process.exit(2);
  }
}

main().catch((e) => {
  console.error('ts-interop-server:', e);
  process.exit(1);
});
