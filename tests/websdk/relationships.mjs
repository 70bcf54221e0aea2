// The official web SDK 27 with relationship columns under Node, as a signed-in user.
// Usage: node relationships.mjs <endpoint> <projectId> <sessionToken> <databaseId>
// The database has the tables authors, books, profiles, tags, publishers of the Python test's
// library. Creates an author with a nested profile and books, reads it back with select, filters
// through a relationship, and checks the restrict error. Prints one JSON summary line.
import { Client, TablesDB, Query, AppwriteException } from 'appwrite';

const [endpoint, project, session, databaseId] = process.argv.slice(2);
const tables = new TablesDB(new Client().setEndpoint(endpoint).setProject(project).setSession(session));
const out = {};
await tables.createRow({ databaseId, tableId: 'authors', rowId: 'web-author', data: {
  name: 'Grace', profile: { $id: 'web-profile', bio: 'compilers' },
  books: [{ $id: 'web-b1', title: 'COBOL', tags: [{ $id: 'web-t1', label: 'langs' }] }, { $id: 'web-b2', title: 'Nanos' }],
} });
const plain = await tables.getRow({ databaseId, tableId: 'authors', rowId: 'web-author' });
out.plainKeys = Object.keys(plain).filter((k) => !k.startsWith('$')).sort();
const full = await tables.getRow({ databaseId, tableId: 'authors', rowId: 'web-author',
  queries: [Query.select(['*', 'profile.bio', 'books.*', 'books.tags.label'])] });
out.profile = full.profile.bio;
out.books = full.books.map((b) => [b.$id, b.title, (b.tags || []).map((t) => t.label)]).sort();
const viaAuthor = await tables.listRows({ databaseId, tableId: 'books', queries: [Query.equal('author.name', 'Grace')] });
out.viaAuthor = viaAuthor.rows.map((r) => r.$id).sort();
try {
  await tables.deleteRow({ databaseId, tableId: 'authors', rowId: 'web-author' });
  out.restricted = 'deleted';
} catch (err) {
  out.restricted = err instanceof AppwriteException ? `${err.code} ${err.type}` : String(err);
}
try {
  await tables.createRow({ databaseId, tableId: 'authors', rowId: 'bad', data: { name: 'x', profile: ['a', 'b'] } });
  out.badValue = 'created';
} catch (err) {
  out.badValue = err instanceof AppwriteException ? `${err.code} ${err.type}` : String(err);
}
console.log(JSON.stringify(out));
