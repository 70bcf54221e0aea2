// realtime (ASGI only): fan-out of row events to many websocket subscribers.
// `subscribers`: VUS sockets, each authenticates with its user's session and subscribes to the
// table's rows channel. `publisher`: after SETTLE seconds, creates rows at PUB_RATE/s with the
// API key (read("users"), so every subscriber may see them); each row's title carries its send
// time. Reported: rt_delivery_ms (send -> receive latency), rt_received, rt_sent, rt_subscribed;
// loss = 1 - rt_received / (rt_sent x rt_subscribed), computed by run.py.
import { WebSocket } from 'k6/experimental/websockets';
import { Counter, Trend } from 'k6/metrics';
import {
  SEED, BASE_URL, PROJECT_ID, rowCreate, uniqueId, ok, vuUser, handleSummary,
} from '../lib/appwrite.js';

const VUS = parseInt(__ENV.VUS || '500', 10);
function seconds(d) {
  const m = /^(\d+)(s|m|h)?$/.exec(d);
  if (!m) throw new Error(`DURATION must look like 30s, 5m or 1h, got ${d}`);
  return parseInt(m[1], 10) * ({ s: 1, m: 60, h: 3600 }[m[2] || 's']);
}
const DURATION_S = seconds(__ENV.DURATION || '60s');
const SETTLE_S = parseInt(__ENV.SETTLE || String(Math.min(10, Math.max(1, Math.floor(DURATION_S / 4)))), 10);
const PUB_RATE = parseInt(__ENV.PUB_RATE || '5', 10);
// Publishing stops 2 s before the sockets close, so late deliveries still count.
const PUB_S = Math.max(1, DURATION_S - SETTLE_S - 2);
const SOCKET_S = Math.max(DURATION_S, SETTLE_S + PUB_S + 2);

const delivery = new Trend('rt_delivery_ms', true);
const received = new Counter('rt_received');
const sent = new Counter('rt_sent');
const subscribed = new Counter('rt_subscribed');

export const options = {
  scenarios: {
    subscribers: {
      executor: 'per-vu-iterations', vus: VUS, iterations: 1, maxDuration: `${SOCKET_S + 30}s`,
      exec: 'subscriber',
    },
    publisher: {
      executor: 'constant-arrival-rate', rate: PUB_RATE, timeUnit: '1s', exec: 'publisher',
      startTime: `${SETTLE_S}s`, duration: `${PUB_S}s`,
      preAllocatedVUs: 5, maxVUs: 20,
    },
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
};

const CHANNEL = `tablesdb.${SEED.databaseId}.tables.${SEED.tableId}.rows`;
const WS_URL = `${BASE_URL.replace(/^http/, 'ws')}/v1/realtime?project=${encodeURIComponent(PROJECT_ID)}`;

export function subscriber() {
  const u = vuUser();
  const ws = new WebSocket(WS_URL);
  const subscribe = () => ws.send(JSON.stringify({
    type: 'subscribe', data: [{ subscriptionId: uniqueId(), channels: [CHANNEL], queries: [] }],
  }));
  ws.onmessage = (msg) => {
    const frame = JSON.parse(msg.data);
    const data = frame.data || {};
    if (frame.type === 'connected') {
      if (!data.user) ws.send(JSON.stringify({ type: 'authentication', data: { session: u.session } }));
      else subscribe();
    } else if (frame.type === 'response' && data.to === 'authentication' && data.success) {
      subscribe();
    } else if (frame.type === 'response' && data.to === 'subscribe' && data.success) {
      subscribed.add(1);
    } else if (frame.type === 'event' && data.payload && String(data.payload.title || '').startsWith('rt:')) {
      received.add(1);
      delivery.add(Date.now() - parseInt(data.payload.title.slice(3), 10));
    }
  };
  const pinger = setInterval(() => ws.send(JSON.stringify({ type: 'ping' })), 20000);
  setTimeout(() => { clearInterval(pinger); ws.close(); }, SOCKET_S * 1000);
}

export function publisher() {
  const res = rowCreate({ key: true }, { title: `rt:${Date.now()}`, owner: 'realtime', n: 0 }, null,
    ['read("users")']);
  if (ok(res, 201, 'rows.create (publisher)')) sent.add(1);
}

export { handleSummary };
