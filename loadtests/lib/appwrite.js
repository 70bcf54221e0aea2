// Shared k6 helpers: configuration, the Appwrite wire protocol, the
// load models and the summary export. Every scenario in ../scenarios imports this file.
//
// Environment (set by loadtests/run.py, or by hand / the compose k6 service):
//   BASE_URL      server root without /v1 (default http://127.0.0.1:8000)
//   PROJECT_ID    project id;  API_KEY: a server key with all scopes (seeding, bulk insert)
//   SEED_FILE     JSON written by `run.py --seed-only` (users + sessions, database/table/bucket ids)
//   MODEL         closed (constant-vus, default) | open (constant-arrival-rate)
//   VUS           closed-model virtual users (default 500); DURATION (default 60s)
//   RATE          open-model iterations per second; MAX_VUS (default 2 x VUS)
//   SUMMARY_FILE  where handleSummary writes k6's JSON summary (default summary.json)
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';

export const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8000').replace(/\/$/, '');
export const V1 = `${BASE_URL}/v1`;
export const PROJECT_ID = __ENV.PROJECT_ID || '';
export const API_KEY = __ENV.API_KEY || '';
export const SEED = __ENV.SEED_FILE ? JSON.parse(open(__ENV.SEED_FILE)) : { users: [], features: {} };

// Responses that were 429 general_rate_limit_exceeded: must stay 0 (this is not a 429 test).
export const rateLimited = new Counter('rate_limited');
// Overload answers, counted apart so a report can tell back-pressure from breakage: 503s
// (general_service_unavailable or the server's own plain 503) and requests that got no HTTP
// answer at all (status 0: timeout, refused or reset connection).
export const unavailable = new Counter('unavailable_503');
export const noResponse = new Counter('no_response');

// --- load models -------------------------------------------------------------------------------
const STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'];

export function loadOptions(extra = {}) {
  const vus = parseInt(__ENV.VUS || '500', 10);
  const duration = __ENV.DURATION || '60s';
  let scenario;
  if ((__ENV.MODEL || 'closed') === 'open') {
    const rate = parseInt(__ENV.RATE || '100', 10);
    scenario = {
      executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration,
      preAllocatedVUs: Math.min(vus, Math.max(10, rate)),
      maxVUs: parseInt(__ENV.MAX_VUS || String(vus * 2), 10),
    };
  } else {
    scenario = { executor: 'constant-vus', vus, duration };
  }
  return Object.assign({
    scenarios: { main: scenario },
    summaryTrendStats: STATS,
    setupTimeout: '120s',
    discardResponseBodies: false,
    noConnectionReuse: false,
  }, extra);
}

// --- requests --------------------------------------------------------------------------------
export function headers(auth = {}) {
  const h = { 'X-Appwrite-Project': PROJECT_ID, 'Content-Type': 'application/json' };
  if (auth.session) h['X-Appwrite-Session'] = auth.session;
  if (auth.key) h['X-Appwrite-Key'] = API_KEY;
  return h;
}

// The seeded user of this VU (one user per VU, reused round-robin if there are fewer users).
export function vuUser() {
  if (!SEED.users || SEED.users.length === 0) throw new Error('SEED_FILE has no users');
  return SEED.users[(__VU - 1) % SEED.users.length];
}

export function ok(res, status, name) {
  if (res.status === 429) rateLimited.add(1);
  else if (res.status === 503) unavailable.add(1);
  else if (res.status === 0) noResponse.add(1);
  return check(res, { [`${name} ${status}`]: (r) => r.status === status });
}

export function call(method, path, body, auth, tag) {
  const params = { headers: headers(auth), tags: { name: tag || path } };
  const payload = body === undefined || body === null ? null : JSON.stringify(body);
  return http.request(method, `${V1}${path}`, payload, params);
}

// Appwrite's client-side ID.unique(): 8 hex of seconds, 5 hex of microseconds, 7 random hex.
export function uniqueId() {
  const now = Date.now();
  const sec = Math.floor(now / 1000).toString(16).padStart(8, '0');
  const usec = ((now % 1000) * 1000 + Math.floor(Math.random() * 1000)).toString(16).padStart(5, '0');
  let rnd = '';
  for (let i = 0; i < 7; i++) rnd += Math.floor(Math.random() * 16).toString(16);
  return sec + usec + rnd;
}

// Queries are JSON strings sent as queries[0]=..&queries[1]=.. on GET.
export const Query = {
  equal: (a, v) => JSON.stringify({ method: 'equal', attribute: a, values: Array.isArray(v) ? v : [v] }),
  limit: (n) => JSON.stringify({ method: 'limit', values: [n] }),
  orderDesc: (a) => JSON.stringify({ method: 'orderDesc', attribute: a }),
};

export function queryString(queries) {
  return queries.map((q, i) => `queries[${i}]=${encodeURIComponent(q)}`).join('&');
}

// --- accounts ------------------------------------------------------------------
export function login(email, password) {
  return call('POST', '/account/sessions/email', { email, password }, {}, 'POST /account/sessions/email');
}

export function accountGet(session) {
  return call('GET', '/account', null, { session }, 'GET /account');
}

// --- TablesDB rows -----------------------------------------------------------
export function rowsPath() {
  return `/tablesdb/${SEED.databaseId}/tables/${SEED.tableId}/rows`;
}

export function rowCreate(auth, data, rowId, permissions) {
  const body = { rowId: rowId || uniqueId(), data };
  if (permissions) body.permissions = permissions;
  return call('POST', rowsPath(), body, auth, 'POST rows');
}

export function rowsCreateBulk(auth, rows) {
  return call('POST', rowsPath(), { rows }, auth, 'POST rows (bulk)');
}

export function rowGet(auth, rowId) {
  return call('GET', `${rowsPath()}/${rowId}`, null, auth, 'GET rows/{id}');
}

export function rowUpdate(auth, rowId, data) {
  return call('PATCH', `${rowsPath()}/${rowId}`, { data }, auth, 'PATCH rows/{id}');
}

export function rowsList(auth, queries) {
  const path = `${rowsPath()}?${queryString(queries)}`;
  return call('GET', path, null, auth, 'GET rows?queries');
}

// --- transactions (Appwrite 1.8) -------------------------------------------------------------
export function txCreate(auth, ttl) {
  return call('POST', '/tablesdb/transactions', { ttl: ttl || 60 }, auth, 'POST transactions');
}

export function txStageRow(auth, transactionId, data, rowId) {
  return call('POST', rowsPath(), { rowId: rowId || uniqueId(), data, transactionId }, auth, 'POST rows (staged)');
}

export function txCommit(auth, transactionId) {
  return call('PATCH', `/tablesdb/transactions/${transactionId}`, { commit: true }, auth, 'PATCH transactions/{id}');
}

// --- relationships (Appwrite 1.8) ------------------------------------------------------------
export function relatedGet(auth, authorId) {
  const path = `/tablesdb/${SEED.databaseId}/tables/rel_authors/rows/${authorId}?` +
    queryString([JSON.stringify({ method: 'select', values: ['*', 'books.*'] })]);
  return call('GET', path, null, auth, 'GET rows/{id} (select related)');
}

// --- storage -------------------------------------------------------------------
export function filesPath() {
  return `/storage/buckets/${SEED.bucketId}/files`;
}

export function fileUpload(auth, name, bytes) {
  const h = headers(auth);
  delete h['Content-Type']; // k6 sets the multipart boundary itself
  const body = { fileId: uniqueId(), file: http.file(bytes, name, 'application/octet-stream') };
  return http.post(`${V1}${filesPath()}`, body, { headers: h, tags: { name: 'POST files' } });
}

export function fileDownload(auth, fileId, tag) {
  const params = { headers: headers(auth), tags: { name: tag || 'GET files/{id}/download' }, responseType: 'none' };
  return http.get(`${V1}${filesPath()}/${fileId}/download`, params);
}

// --- summary ---------------------------------------------------------------------------------
export function handleSummary(data) {
  const out = {};
  out[__ENV.SUMMARY_FILE || 'summary.json'] = JSON.stringify(data, null, 1);
  const reqs = data.metrics.http_reqs ? data.metrics.http_reqs.values : { count: 0, rate: 0 };
  const dur = data.metrics.http_req_duration ? data.metrics.http_req_duration.values : {};
  const failed = data.metrics.http_req_failed ? data.metrics.http_req_failed.values.rate : 0;
  out.stdout = `requests=${reqs.count} rate=${reqs.rate.toFixed(1)}/s p95=${(dur['p(95)'] || 0).toFixed(1)}ms ` +
    `errors=${(100 * failed).toFixed(2)}%\n`;
  return out;
}
