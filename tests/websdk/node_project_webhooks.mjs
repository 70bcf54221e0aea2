// The Project and Webhooks services through node-appwrite 26 with the project's own API key: the
// project read, labelled and one sign-in method turned off; a web platform, the keys (a key may
// not create keys, but an ephemeral one, which works at once; its own key renamed), a policy, a
// variable and a mock phone managed; a webhook created, listed, updated, given a new secret and
// deleted (it is never delivered: nothing it listens to happens here).
// Usage: node node_project_webhooks.mjs <endpoint> <projectId> <apiKey>
import { Client, Project, Users, Webhooks, ID, Query } from 'node-appwrite';
import { serverClient, errorOf, guard, report, endpoint, projectId } from './node_sdk.mjs';

const client = serverClient();
const project = new Project(client);
const webhooks = new Webhooks(client);
const out = {};
guard(out);

const got = await project.get();
out.project = { sameId: got.$id === projectId };
out.labels = (await project.updateLabels({ labels: ['node', 'sdk'] })).labels;
const methods = (await project.updateAuthMethod({ methodId: 'anonymous', enabled: false })).authMethods;
out.anonymous = methods.find((m) => m.$id === 'anonymous')?.enabled;

const web = await project.createWebPlatform({ platformId: ID.unique(), name: 'Site', hostname: 'app.example.test' });
out.platform = { type: web.type, hostname: web.hostname, name: web.name };
out.platformUpdated = (await project.updateWebPlatform({ platformId: web.$id, name: 'Site 2',
  hostname: 'other.example.test' })).hostname;
out.platforms = (await project.listPlatforms()).platforms.map((p) => p.$id === web.$id);
await project.deletePlatform({ platformId: web.$id });
out.deletedPlatform = await errorOf(project.getPlatform({ platformId: web.$id }));

out.keyCreation = await errorOf(project.createKey({ keyId: ID.unique(), name: 'reader', scopes: ['users.read'] }));
const ephemeral = await project.createEphemeralKey({ scopes: ['users.read'], duration: 600 });
out.ephemeral = { scopes: ephemeral.scopes, prefix: ephemeral.secret.split('_')[0] };
const shortLived = new Users(new Client().setEndpoint(endpoint).setProject(projectId).setKey(ephemeral.secret));
out.ephemeralReads = (await shortLived.list()).total >= 0;
out.ephemeralWrites = await errorOf(shortLived.create({ userId: ID.unique(), name: 'x' }));
const keys = await project.listKeys();
out.keys = keys.total;
const own = keys.keys[0];
out.keyUpdated = (await project.updateKey({ keyId: own.$id, name: 'renamed', scopes: own.scopes })).name;
out.keyGot = (await project.getKey({ keyId: own.$id })).name;
out.missingKey = await errorOf(project.getKey({ keyId: 'missing' }));

out.policies = (await project.listPolicies()).total;
await project.updatePasswordHistoryPolicy({ total: 5 });
out.passwordHistory = (await project.getPolicy({ policyId: 'password-history' })).total;

const variable = await project.createVariable({ variableId: ID.unique(), key: 'API_URL', value: 'https://example.test',
  secret: false });
out.variable = { key: variable.key, value: variable.value, secret: variable.secret };
out.variableUpdated = (await project.updateVariable({ variableId: variable.$id, value: 'https://changed.test' })).value;
out.variables = (await project.listVariables()).total;
await project.deleteVariable({ variableId: variable.$id });
out.mockPhone = (await project.createMockPhone({ number: '+15550100', otp: '123456' })).otp;
out.mockPhones = (await project.listMockPhones()).total;

const hook = await webhooks.create({ webhookId: ID.unique(), url: 'http://127.0.0.1:9/hook', name: 'Audit',
  events: ['users.*.create', 'tablesdb.*.tables.*.rows.*'], tls: false });
out.webhook = { name: hook.name, url: hook.url, events: hook.events, enabled: hook.enabled, tls: hook.tls,
  secretShown: typeof hook.secret === 'string' && hook.secret.length > 0 };
out.webhooks = (await webhooks.list({ queries: [Query.equal('name', ['Audit'])] })).webhooks.map((w) => w.$id === hook.$id);
const updated = await webhooks.update({ webhookId: hook.$id, name: 'Audit 2', url: 'https://hooks.example.test/in',
  events: ['teams.*'], enabled: false });
out.webhookUpdated = { name: updated.name, url: updated.url, events: updated.events, enabled: updated.enabled };
const rotated = await webhooks.updateSecret({ webhookId: hook.$id, secret: 'a-new-secret-1234' });
out.secretRotated = rotated.secret !== hook.secret;
out.webhookGot = (await webhooks.get({ webhookId: hook.$id })).name;
out.badEvent = await errorOf(webhooks.create({ webhookId: ID.unique(), url: 'https://x.example.test', name: 'Bad',
  events: ['nope.*'] }));
await webhooks.delete({ webhookId: hook.$id });
out.deletedWebhook = await errorOf(webhooks.get({ webhookId: hook.$id }));
report(out);
