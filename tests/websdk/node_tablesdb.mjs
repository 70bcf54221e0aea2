// TablesDB through node-appwrite 26 with an API key: a database, a table, columns, an index, rows
// created (one and in bulk), listed with queries, updated, upserted, incremented and deleted, a
// transaction committed and another rolled back, then everything deleted.
// Usage: node node_tablesdb.mjs <endpoint> <projectId> <apiKey>
import { TablesDB, ID, Query, Permission, Role } from 'node-appwrite';
import { serverClient, errorOf, guard, report } from './node_sdk.mjs';

const tables = new TablesDB(serverClient());
const out = {};
guard(out);

const db = await tables.create({ databaseId: ID.unique(), name: 'node' });
out.database = { name: db.name, enabled: db.enabled };
const databaseId = db.$id;
const table = await tables.createTable({ databaseId, tableId: ID.unique(), name: 'tasks',
  permissions: [Permission.read(Role.any())], rowSecurity: false });
const tableId = table.$id;
out.table = { name: table.name, permissions: table.$permissions, rowSecurity: table.rowSecurity };
await tables.createVarcharColumn({ databaseId, tableId, key: 'title', size: 64, required: true });
await tables.createIntegerColumn({ databaseId, tableId, key: 'qty', required: false, min: 0, max: 100, xdefault: 1 });
await tables.createBooleanColumn({ databaseId, tableId, key: 'done', required: false, xdefault: false });
out.columns = (await tables.listColumns({ databaseId, tableId })).columns.map((c) => [c.key, c.type, c.status]);
const index = await tables.createIndex({ databaseId, tableId, key: 'by_qty', type: 'key', columns: ['qty'] });
out.index = { key: index.key, type: index.type, columns: index.columns };

const a = await tables.createRow({ databaseId, tableId, rowId: 'a', data: { title: 'alpha', qty: 5 } });
out.created = { id: a.$id, title: a.title, qty: a.qty, done: a.done, tableId: a.$tableId,
  databaseId: a.$databaseId, permissions: a.$permissions };
const bulk = await tables.createRows({ databaseId, tableId, rows: [
  { $id: 'b', title: 'beta', qty: 7 },
  { $id: 'c', title: 'gamma', qty: 9, done: true },
] });
out.bulk = bulk.rows.map((r) => r.$id);
const titles = async (queries) => (await tables.listRows({ databaseId, tableId, queries })).rows.map((r) => r.title);
out.greaterOrdered = await titles([Query.greaterThan('qty', 5), Query.orderDesc('qty')]);
out.equal = await titles([Query.equal('done', [true])]);
out.page = await titles([Query.orderAsc('title'), Query.limit(1), Query.offset(1)]);
out.startsWith = await titles([Query.startsWith('title', 'al')]);
out.between = await titles([Query.between('qty', 6, 9), Query.orderAsc('qty')]);
out.or = await titles([Query.or([Query.equal('title', ['alpha']), Query.equal('title', ['gamma'])]),
  Query.orderAsc('title')]);
const selected = await tables.listRows({ databaseId, tableId, queries: [Query.select(['title']), Query.limit(1)] });
out.selectedKeys = Object.keys(selected.rows[0]).filter((k) => !k.startsWith('$')).sort();
out.total = selected.total;
out.got = (await tables.getRow({ databaseId, tableId, rowId: 'c' })).title;
out.updated = (await tables.updateRow({ databaseId, tableId, rowId: 'a', data: { qty: 6 } })).qty;
out.upserted = (await tables.upsertRow({ databaseId, tableId, rowId: 'd', data: { title: 'delta', qty: 2 } })).title;
out.incremented = (await tables.incrementRowColumn({ databaseId, tableId, rowId: 'a', column: 'qty', value: 3 })).qty;
await tables.deleteRow({ databaseId, tableId, rowId: 'b' });
out.deletedRow = await errorOf(tables.getRow({ databaseId, tableId, rowId: 'b' }));
out.missingTitle = await errorOf(tables.createRow({ databaseId, tableId, rowId: ID.unique(), data: { qty: 5 } }));
out.tooBig = await errorOf(tables.updateRow({ databaseId, tableId, rowId: 'a', data: { qty: 101 } }));

const tx = await tables.createTransaction({ ttl: 60 });
out.transaction = tx.status;
await tables.createRow({ databaseId, tableId, rowId: 't1', data: { title: 'from a transaction' }, transactionId: tx.$id });
await tables.createOperations({ transactionId: tx.$id, operations: [
  { action: 'update', databaseId, tableId, rowId: 'a', data: { title: 'alpha, changed' } },
  { action: 'delete', databaseId, tableId, rowId: 'c' },
] });
out.staged = (await tables.getTransaction({ transactionId: tx.$id })).operations;
out.beforeCommit = await titles([Query.orderAsc('title')]);
out.committed = (await tables.updateTransaction({ transactionId: tx.$id, commit: true })).status;
out.afterCommit = await titles([Query.orderAsc('title')]);
const other = await tables.createTransaction();
await tables.createRow({ databaseId, tableId, rowId: 'never', data: { title: 'never' }, transactionId: other.$id });
out.rolledBack = (await tables.updateTransaction({ transactionId: other.$id, rollback: true })).status;
out.afterRollback = await titles([Query.orderAsc('title')]);

out.bulkDeleted = (await tables.deleteRows({ databaseId, tableId, queries: [Query.lessThan('qty', 3)] })).total;
out.tablesListed = (await tables.listTables({ databaseId })).tables.map((t) => t.name);
out.renamed = (await tables.updateTable({ databaseId, tableId, name: 'jobs' })).name;
await tables.deleteTable({ databaseId, tableId });
out.deletedTable = await errorOf(tables.getTable({ databaseId, tableId }));
await tables.delete({ databaseId });
out.deletedDatabase = await errorOf(tables.get({ databaseId }));
report(out);
