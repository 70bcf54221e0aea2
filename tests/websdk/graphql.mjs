// GraphQL through the web SDK 27's Graphql service, as a guest:
// node graphql.mjs <endpoint> <projectId> <databaseId> <tableId> [package] (the table lets anyone read
// and create; package: the npm folder of the SDK, "appwrite" or the newer "appwrite-next")
const [endpoint, project, db, table, sdk = "appwrite"] = process.argv.slice(2);
const { Client, Graphql } = await import(sdk);
const graphql = new Graphql(new Client().setEndpoint(endpoint).setProject(project));
const created = await graphql.mutation({
  query: {
    query: `mutation($db: String!, $t: String!, $data: Json) {
      tablesDBCreateRow(databaseId: $db, tableId: $t, rowId: "unique()", data: $data)
    }`,
    variables: { db, t: table, data: { title: "from the web SDK" } },
  },
});
const listed = await graphql.query({
  query: {
    query: `query($db: String!, $t: String!) { tablesDBListRows(databaseId: $db, tableId: $t) { total rows { data } } }`,
    variables: { db, t: table },
  },
});
const refused = await graphql.query({ query: { query: "query { usersList { total } }" } });
console.log(JSON.stringify({
  created: created.data.tablesDBCreateRow,
  listed: listed.data.tablesDBListRows,
  titles: listed.data.tablesDBListRows.rows.map((r) => r.data.title),
  refused: refused.errors[0].extensions.type,
}));
