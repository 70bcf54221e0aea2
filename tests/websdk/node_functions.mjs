// Functions through node-appwrite 26 with an API key: the runtimes and specifications, a function
// created, listed with queries, read and updated, a variable, a deployment uploaded from a file
// (not activated: no container engine is needed), downloaded back, then everything deleted.
// Usage: node node_functions.mjs <endpoint> <projectId> <apiKey> <code.tar.gz path>
import { readFileSync } from 'node:fs';
import { Functions, ID, Query } from 'node-appwrite';
import { InputFile } from 'node-appwrite/file';
import { serverClient, errorOf, extra, guard, report } from './node_sdk.mjs';

const functions = new Functions(serverClient());
const [codePath] = extra;
const out = {};
guard(out);

out.runtimes = (await functions.listRuntimes()).runtimes.map((r) => r.$id).sort();
out.specifications = (await functions.listSpecifications()).total;
const fn = await functions.create({ functionId: ID.unique(), name: 'node-fn', runtime: 'node-20.0',
  execute: ['users'], events: ['users.*.create'], schedule: '0 * * * *', timeout: 10, entrypoint: 'index.js' });
const functionId = fn.$id;
out.created = { name: fn.name, runtime: fn.runtime, execute: fn.execute, events: fn.events, schedule: fn.schedule,
  timeout: fn.timeout, enabled: fn.enabled, entrypoint: fn.entrypoint };
out.listed = (await functions.list({ queries: [Query.equal('name', ['node-fn'])] })).total;
out.got = (await functions.get({ functionId })).schedule;
const updated = await functions.update({ functionId, name: 'node-fn-2', enabled: false });
out.updated = { name: updated.name, enabled: updated.enabled, runtime: updated.runtime };
const variable = await functions.createVariable({ functionId, variableId: ID.unique(), key: 'GREETING', value: 'hi' });
out.variable = { key: variable.key, value: variable.value, secret: variable.secret };
out.variables = (await functions.listVariables({ functionId })).total;

const code = readFileSync(codePath);
const deployment = await functions.createDeployment({ functionId, code: InputFile.fromPath(codePath, 'code.tar.gz'),
  activate: false });
out.deployment = { resourceId: deployment.resourceId === functionId, sourceSize: deployment.sourceSize,
  entrypoint: deployment.entrypoint };
out.deployments = (await functions.listDeployments({ functionId })).total;
out.downloadedSame = Buffer.from(await functions.getDeploymentDownload({ functionId,
  deploymentId: deployment.$id })).equals(code);
await functions.deleteDeployment({ functionId, deploymentId: deployment.$id });
await functions.deleteVariable({ functionId, variableId: variable.$id });
await functions.delete({ functionId });
out.deleted = await errorOf(functions.get({ functionId }));
out.badRuntime = await errorOf(functions.create({ functionId: ID.unique(), name: 'x', runtime: 'cobol-1.0' }));
report(out);
