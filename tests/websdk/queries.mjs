// Every method of the web SDK 27 Query class against a live server's row list, as a signed-in user.
// Usage: node queries.mjs <endpoint> <projectId> <sessionToken> <databaseId> <tableId>
// Prints one JSON object: case name -> the sorted row IDs listed, or "<code> <type>" when refused.
import { Client, TablesDB, Query, AppwriteException } from 'appwrite';

const [endpoint, project, session, databaseId, tableId] = process.argv.slice(2);
const tables = new TablesDB(new Client().setEndpoint(endpoint).setProject(project).setSession(session));

const cases = {
  equal: [Query.equal('name', 'banana')],
  notEqual: [Query.notEqual('name', 'banana')],
  regex: [Query.regex('name', '^(red|green) ')],
  lessThan: [Query.lessThan('price', 1.5)],
  lessThanEqual: [Query.lessThanEqual('price', 1.5)],
  greaterThan: [Query.greaterThan('qty', 1)],
  greaterThanEqual: [Query.greaterThanEqual('qty', 1)],
  isNull: [Query.isNull('qty')],
  isNotNull: [Query.isNotNull('note')],
  exists: [Query.exists(['qty', 'note'])],
  notExists: [Query.notExists(['note'])],
  between: [Query.between('price', 1, 20)],
  notBetween: [Query.notBetween('price', 1, 20)],
  startsWith: [Query.startsWith('name', 'red')],
  endsWith: [Query.endsWith('name', 'apple')],
  notStartsWith: [Query.notStartsWith('name', 'red')],
  notEndsWith: [Query.notEndsWith('name', 'apple')],
  contains: [Query.contains('tags', 'red')],
  containsAny: [Query.containsAny('tags', ['green', 'yellow'])],
  containsAll: [Query.containsAll('tags', ['fruit', 'red'])],
  notContains: [Query.notContains('tags', 'fruit')],
  search: [Query.search('name', 'apple')],
  notSearch: [Query.notSearch('name', 'apple')],
  or: [Query.or([Query.equal('qty', 0), Query.isNull('qty')])],
  and: [Query.and([Query.greaterThan('qty', 0), Query.contains('tags', 'red')])],
  createdBefore: [Query.createdBefore('2000-01-01T00:00:00.000+00:00')],
  createdAfter: [Query.createdAfter('2000-01-01T00:00:00.000+00:00')],
  createdBetween: [Query.createdBetween('2000-01-01', '2999-01-01')],
  updatedBefore: [Query.updatedBefore('2999-01-01T00:00:00.000+00:00')],
  updatedAfter: [Query.updatedAfter('2999-01-01T00:00:00.000+00:00')],
  updatedBetween: [Query.updatedBetween('2000-01-01', '2999-01-01')],
  selectOrderLimitOffset: [Query.select(['name']), Query.orderDesc('price'), Query.limit(2), Query.offset(1)],
  orderAsc: [Query.orderAsc('name'), Query.limit(1)],
  orderRandom: [Query.orderRandom()],
  cursorAfter: [Query.orderAsc('name'), Query.cursorAfter('c')],
  cursorBefore: [Query.orderAsc('name'), Query.cursorBefore('e')],
  elemMatch: [Query.elemMatch('tags', [Query.equal('x', 'y')])],
  vectorDot: [Query.vectorDot('price', [1, 2])],
  vectorCosine: [Query.vectorCosine('price', [1, 2])],
  vectorEuclidean: [Query.vectorEuclidean('price', [1, 2])],
  intersects: [Query.intersects('name', [1, 2])],
  notIntersects: [Query.notIntersects('name', [1, 2])],
  crosses: [Query.crosses('name', [1, 2])],
  notCrosses: [Query.notCrosses('name', [1, 2])],
  overlaps: [Query.overlaps('name', [1, 2])],
  notOverlaps: [Query.notOverlaps('name', [1, 2])],
  touches: [Query.touches('name', [1, 2])],
  notTouches: [Query.notTouches('name', [1, 2])],
  distanceEqual: [Query.distanceEqual('name', [1, 2], 10)],
  distanceNotEqual: [Query.distanceNotEqual('name', [1, 2], 10)],
  distanceGreaterThan: [Query.distanceGreaterThan('name', [1, 2], 10)],
  distanceLessThan: [Query.distanceLessThan('name', [1, 2], 10)],
};

const out = {};
for (const [name, queries] of Object.entries(cases)) {
  try {
    const list = await tables.listRows({ databaseId, tableId, queries });
    const ids = list.rows.map((r) => r.$id);
    out[name] = name.startsWith('order') || name.startsWith('cursor') || name.startsWith('select') ? ids : ids.sort();
    if (name === 'selectOrderLimitOffset') out[name] = list.rows.map((r) => Object.keys(r).filter((k) => !k.startsWith('$')));
  } catch (err) {
    out[name] = err instanceof AppwriteException ? `${err.code} ${err.type}` : String(err);
  }
}
console.log(JSON.stringify(out));
