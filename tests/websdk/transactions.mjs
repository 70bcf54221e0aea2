// The official web SDK 27 TablesDB transactions under Node, against a live server, as a signed-in
// user. Usage: node transactions.mjs <endpoint> <projectId> <sessionToken> <databaseId> <tableId> <realtime:0|1>
// Stages a row create through createRow({transactionId}) and another through createOperations,
// reads them back through the transaction, commits, rolls a second transaction back, and checks
// an unknown transaction's error. With realtime=1 it also subscribes to the table's rows and
// records which events arrived before and after the commit. Prints one JSON summary line.
import WebSocket from 'ws';

globalThis.WebSocket = WebSocket;
globalThis.window = globalThis;
globalThis.localStorage = { getItem: () => null, setItem: () => {}, removeItem: () => {} };

const { Client, TablesDB, Realtime, Channel, ID, AppwriteException } = await import('appwrite');
const [endpoint, project, session, databaseId, tableId, withRealtime] = process.argv.slice(2);
const client = new Client().setEndpoint(endpoint).setProject(project).setSession(session);
const tables = new TablesDB(client);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const out = { events: [], eventsBeforeCommit: -1 };
setTimeout(() => { console.error('timeout', JSON.stringify(out)); process.exit(1); }, 40000);

if (withRealtime === '1') {
  const realtime = new Realtime(client);
  await realtime.subscribe(Channel.tablesdb(databaseId).table(tableId).row(), (message) => {
    out.events.push({ events: message.events.slice(0, 1), id: message.payload.$id });
  });
  await sleep(700);
}

const tx = await tables.createTransaction({ ttl: 120 });
out.created = { status: tx.status, operations: tx.operations };
const staged = await tables.createRow({ databaseId, tableId, rowId: 'w1', data: { title: 'from web' },
  transactionId: tx.$id });
out.staged = { id: staged.$id, title: staged.title };
const batch = await tables.createOperations({ transactionId: tx.$id, operations: [
  { action: 'create', databaseId, tableId, rowId: 'w2', data: { title: 'second' } },
  { action: 'update', databaseId, tableId, rowId: 'w1', data: { title: 'from web, updated' } },
] });
out.afterOperations = batch.operations;
out.seenInTransaction = (await tables.getRow({ databaseId, tableId, rowId: 'w1', transactionId: tx.$id })).title;
out.visibleBeforeCommit = (await tables.listRows({ databaseId, tableId })).total;
await sleep(700);
out.eventsBeforeCommit = out.events.length;
const done = await tables.updateTransaction({ transactionId: tx.$id, commit: true });
out.committed = done.status;
const rows = await tables.listRows({ databaseId, tableId });
out.rowsAfterCommit = rows.rows.map((r) => r.title).sort();
out.listed = (await tables.listTransactions()).transactions.map((t) => t.$id).includes(tx.$id);

const other = await tables.createTransaction();
await tables.createRow({ databaseId, tableId, rowId: ID.unique(), data: { title: 'never' }, transactionId: other.$id });
out.rolledBack = (await tables.updateTransaction({ transactionId: other.$id, rollback: true })).status;
out.rowsAfterRollback = (await tables.listRows({ databaseId, tableId })).total;
try {
  await tables.getTransaction({ transactionId: 'missing' });
  out.missing = 'no error';
} catch (err) {
  out.missing = err instanceof AppwriteException ? `${err.code} ${err.type}` : String(err);
}
if (withRealtime === '1') {
  for (let i = 0; i < 40 && out.events.length < 3; i += 1) await sleep(100);
}
console.log(JSON.stringify(out));
process.exit(0);
