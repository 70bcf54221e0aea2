// Server comparison (README "Choosing the ASGI server"): closed-loop VUs on one endpoint.
//   k6 run -e BASE_URL=http://127.0.0.1:8000 -e PROJECT=demo -e KEY=<api key> -e SCENARIO=ping|account \
//          -e VUS=100 -e DURATION=15s loadtests/servers.js
// SCENARIO=ping: GET /v1/ping with the project header; SCENARIO=account: GET /v1/account with a
// session made once in setup() (sign-up + email session through the API key).
import http from 'k6/http';
import { check } from 'k6';

const BASE = __ENV.BASE_URL || 'http://127.0.0.1:8000';
const PROJECT = __ENV.PROJECT || 'demo';
const SCENARIO = __ENV.SCENARIO || 'ping';

export const options = {
  vus: Number(__ENV.VUS || 100),
  duration: __ENV.DURATION || '15s',
  summaryTrendStats: ['avg', 'p(50)', 'p(95)', 'p(99)', 'max'],
};

export function setup() {
  if (SCENARIO !== 'account') return {};
  const headers = { 'Content-Type': 'application/json', 'X-Appwrite-Project': PROJECT, 'X-Appwrite-Key': __ENV.KEY };
  const email = `k6-${Date.now()}@example.com`;
  const user = http.post(`${BASE}/v1/account`, JSON.stringify({ userId: 'unique()', email, password: 'password123' }), { headers });
  check(user, { 'signed up': (r) => r.status === 201 });
  const session = http.post(`${BASE}/v1/account/sessions/email`, JSON.stringify({ email, password: 'password123' }), { headers });
  check(session, { 'logged in': (r) => r.status === 201 });
  return { secret: session.json('secret') };
}

export default function (data) {
  if (SCENARIO === 'account') {
    const r = http.get(`${BASE}/v1/account`, { headers: { 'X-Appwrite-Project': PROJECT, 'X-Appwrite-Session': data.secret } });
    check(r, { 'status 200': (res) => res.status === 200 });
  } else {
    const r = http.get(`${BASE}/v1/ping`, { headers: { 'X-Appwrite-Project': PROJECT } });
    check(r, { 'status 200': (res) => res.status === 200 });
  }
}
