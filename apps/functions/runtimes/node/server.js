// The node runtime server: runs a deployment's function for the executor (no dependencies).
// Same protocol as the python runtime (apps/functions/runtimes/python/server.py): POST / with
// {method, path, headers, body (base64), env} and the container's secret in
// x-open-runtimes-secret; answered with {statusCode, headers, body (base64), logs, errors}.
// The module named by OPEN_RUNTIMES_ENTRYPOINT (in /usr/local/server/src/build) exports the
// function as its default export, module.exports, or `main`; it gets the open-runtimes context
// ({req, res, log, error}) and returns res.text/json/binary/redirect/empty/send.
'use strict';
const http = require('http');
const path = require('path');
const crypto = require('crypto');
const { pathToFileURL } = require('url');

const CODE = '/usr/local/server/src/build';
const SECRET = process.env.OPEN_RUNTIMES_SECRET || '';
let fn = null;

async function load() {
  if (fn) return fn;
  const entry = path.join(CODE, process.env.OPEN_RUNTIMES_ENTRYPOINT || 'index.js');
  let mod;
  try {
    mod = require(entry);
  } catch (err) {
    if (err.code !== 'ERR_REQUIRE_ESM') throw err;
    mod = await import(pathToFileURL(entry).href);
  }
  const found = [mod && mod.default, mod && mod.main, mod].find((c) => typeof c === 'function')
    || (mod && mod.default && typeof mod.default.main === 'function' ? mod.default.main : null);
  if (!found) throw new Error('the entrypoint module does not export a function (default or main)');
  fn = found;
  return fn;
}

function format(message) {
  return typeof message === 'string' ? message : JSON.stringify(message);
}

function makeReq(data) {
  const headers = {};
  for (const [k, v] of Object.entries(data.headers || {})) headers[k.toLowerCase()] = v;
  const rawPath = data.path || '/';
  const q = rawPath.indexOf('?');
  const queryString = q >= 0 ? rawPath.slice(q + 1) : '';
  const bodyBinary = Buffer.from(data.body || '', 'base64');
  const scheme = headers['x-forwarded-proto'] || 'http';
  const host = headers.host || '';
  return {
    method: data.method || 'POST', headers, path: q >= 0 ? rawPath.slice(0, q) : rawPath,
    queryString, query: Object.fromEntries(new URLSearchParams(queryString)), scheme, host, port: 80,
    url: `${scheme}://${host}${rawPath}`, bodyBinary,
    get bodyText() { return bodyBinary.toString('utf8'); },
    get bodyRaw() { return bodyBinary.toString('utf8'); },
    get bodyJson() { return JSON.parse(bodyBinary.toString('utf8') || 'null'); },
    get body() {
      return (headers['content-type'] || '').startsWith('application/json')
        ? (bodyBinary.length ? JSON.parse(bodyBinary.toString('utf8')) : {}) : bodyBinary.toString('utf8');
    },
  };
}

const res = {
  binary: (data, statusCode = 200, headers = {}) => ({ body: Buffer.from(data), statusCode, headers: { ...headers } }),
  text: (body, statusCode = 200, headers = {}) => res.binary(Buffer.from(String(body)), statusCode, headers),
  send: (body, statusCode = 200, headers = {}) => res.text(body, statusCode, headers),
  json: (obj, statusCode = 200, headers = {}) => res.text(JSON.stringify(obj), statusCode,
    { 'content-type': 'application/json', ...headers }),
  empty: () => res.binary(Buffer.alloc(0), 204),
  redirect: (url, statusCode = 301, headers = {}) => res.binary(Buffer.alloc(0), statusCode, { ...headers, location: url }),
};

async function execute(data) {
  const logs = [];
  const errors = [];
  const saved = { ...process.env };
  const consoleLog = console.log;
  const consoleError = console.error;
  Object.assign(process.env, data.env || {});
  console.log = (...args) => logs.push(args.map(format).join(' '));
  console.error = (...args) => errors.push(args.map(format).join(' '));
  let result;
  try {
    const main = await load();
    result = await main({ req: makeReq(data), res, log: (m) => logs.push(format(m)), error: (m) => errors.push(format(m)) });
    if (!result || typeof result.statusCode !== 'number') {
      throw new Error('the function must return res.text(), res.json(), res.binary(), res.redirect() or res.empty()');
    }
  } catch (err) {
    errors.push(err && err.stack ? err.stack : String(err));
    result = res.text('', 500);
  } finally {
    console.log = consoleLog;
    console.error = consoleError;
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
  const headers = {};
  for (const [k, v] of Object.entries(result.headers || {})) headers[k.toLowerCase()] = String(v);
  return {
    statusCode: result.statusCode, headers, body: Buffer.from(result.body || '').toString('base64'),
    logs: logs.join('\n'), errors: errors.join('\n'),
  };
}

function answer(response, status, payload) {
  const body = Buffer.from(JSON.stringify(payload));
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  response.end(body);
}

function authorized(given) {
  const a = Buffer.from(String(given || ''));
  const b = Buffer.from(SECRET);
  return SECRET.length > 0 && a.length === b.length && crypto.timingSafeEqual(a, b);
}

// One execution at a time, like the python runtime (executions queue in order).
let chain = Promise.resolve();
http.createServer((request, response) => {
  if (request.method === 'GET') return answer(response, 200, { ok: true });
  if (!authorized(request.headers['x-open-runtimes-secret'])) return answer(response, 401, { message: 'Unauthorized' });
  const parts = [];
  request.on('data', (c) => parts.push(c));
  request.on('end', () => {
    chain = chain.then(async () => {
      let data;
      try { data = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}'); } catch (e) { return answer(response, 400, { message: 'bad JSON' }); }
      answer(response, 200, await execute(data));
    });
  });
}).listen(3000, '0.0.0.0');
