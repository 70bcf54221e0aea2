// The official web SDK 27 spatial queries under Node, as a signed-in user, on the Python test's
// "places" table (points, lines, polygons). Usage: node spatial.mjs <endpoint> <projectId> <session> <databaseId>
// Prints one JSON summary line.
import { Client, TablesDB, Query, AppwriteException } from 'appwrite';

const [endpoint, project, session, databaseId] = process.argv.slice(2);
const tables = new TablesDB(new Client().setEndpoint(endpoint).setProject(project).setSession(session));
const tableId = 'places';
const square = [[[0, 0], [0, 10], [10, 10], [10, 0], [0, 0]]];
const ids = async (...queries) => (await tables.listRows({ databaseId, tableId, queries })).rows.map((r) => r.$id).sort();
const out = {
  near: await ids(Query.distanceLessThan('loc', [13.4, 52.5], 30000)),
  far: await ids(Query.distanceGreaterThan('loc', [13.4, 52.5], 100000)),
  inSquare: await ids(Query.intersects('area', [3, 3])),
  crosses: await ids(Query.crosses('route', square)),
  touches: await ids(Query.touches('area', square)),
  overlaps: await ids(Query.overlaps('area', square)),
};
const row = await tables.createRow({ databaseId, tableId, rowId: 'web', data: { name: 'web', loc: [7.5, 47.5] } });
out.created = row.loc;
try {
  await tables.createRow({ databaseId, tableId, rowId: 'bad', data: { name: 'bad', loc: [7.5, 95] } });
  out.bad = 'created';
} catch (err) {
  out.bad = err instanceof AppwriteException ? `${err.code} ${err.type}` : String(err);
}
console.log(JSON.stringify(out));
