// The official web SDK 27 Realtime service under Node, against a live server.
// Usage: node realtime.mjs <endpoint> <projectId> <sessionToken> <databaseId> <tableId>
// Prints READY once subscribed and after updating the account's prefs through the SDK, then one
// JSON line per received event, and exits 0 once both an account event and a row event arrived.
import WebSocket from 'ws';

// SDK 27 Realtime expects browser globals: WebSocket, window.setInterval, localStorage.
globalThis.WebSocket = WebSocket;
globalThis.window = globalThis;
globalThis.localStorage = { getItem: () => null, setItem: () => {}, removeItem: () => {} };

const { Client, Realtime, Channel, Account } = await import('appwrite');
const [endpoint, project, session, databaseId, tableId] = process.argv.slice(2);
const client = new Client().setEndpoint(endpoint).setProject(project).setSession(session);
const realtime = new Realtime(client);
const seen = { account: false, row: false };
const timer = setTimeout(() => { console.error('timeout', JSON.stringify(seen)); process.exit(1); }, 20000);

function done() {
  if (seen.account && seen.row) { clearTimeout(timer); process.exit(0); }
}

realtime.onError((error, code) => console.error('realtime error', code, error.message));
await realtime.subscribe(Channel.account(), (message) => {
  console.log(JSON.stringify({ kind: 'account', events: message.events, channels: message.channels,
    payload: message.payload, subscriptions: message.subscriptions, timestamp: message.timestamp }));
  if (message.payload?.prefs?.from === 'node') { seen.account = true; done(); }
});
await realtime.subscribe(Channel.tablesdb(databaseId).table(tableId).row().create(), (message) => {
  console.log(JSON.stringify({ kind: 'row', events: message.events, payload: message.payload }));
  seen.row = true; done();
});
await new Promise((resolve) => setTimeout(resolve, 700)); // connected -> authentication -> subscribe
await new Account(client).updatePrefs({ prefs: { from: 'node' } });
console.log('READY');
