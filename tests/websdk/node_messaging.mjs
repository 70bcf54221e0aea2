// Messaging through node-appwrite 26 with an API key: an SMTP and a Twilio provider and a topic
// created and listed, a user's email target subscribed to the topic, then all deleted.
// Usage: node node_messaging.mjs <endpoint> <projectId> <apiKey>
import { Messaging, Users, ID, Query } from 'node-appwrite';
import { serverClient, errorOf, guard, report } from './node_sdk.mjs';

const client = serverClient();
const messaging = new Messaging(client);
const users = new Users(client);
const out = {};
guard(out);

const smtp = await messaging.createSmtpProvider({ providerId: ID.unique(), name: 'Mail', host: 'smtp.example.com',
  port: 2525, username: 'u', password: 'secret-pw', fromEmail: 'noreply@example.com', enabled: true });
out.smtp = { type: smtp.type, provider: smtp.provider, enabled: smtp.enabled, host: smtp.credentials.host,
  passwordShown: 'password' in smtp.credentials };
const sms = await messaging.createTwilioProvider({ providerId: ID.unique(), name: 'SMS', from: '+15550001111',
  accountSid: 'AC0123456789abcdef', authToken: 'twilio-token', enabled: true });
out.sms = { type: sms.type, provider: sms.provider, options: sms.options };
out.providers = (await messaging.listProviders({ queries: [Query.orderAsc('name')] })).providers.map((p) => p.name);
out.emailProviders = (await messaging.listProviders({ queries: [Query.equal('type', ['email'])] })).total;
out.smtpUpdated = (await messaging.updateSmtpProvider({ providerId: smtp.$id, name: 'Mail 2', port: 2626 })).credentials.port;

const topic = await messaging.createTopic({ topicId: ID.unique(), name: 'news', subscribe: ['users'] });
out.topic = { name: topic.name, subscribe: topic.subscribe, emailTotal: topic.emailTotal };
out.topics = (await messaging.listTopics({ queries: [Query.equal('name', ['news'])] })).total;
out.topicRenamed = (await messaging.updateTopic({ topicId: topic.$id, name: 'updates' })).name;
const user = await users.create({ userId: ID.unique(), email: `m${Date.now()}@example.com`, password: 'password123' });
const target = await users.createTarget({ userId: user.$id, targetId: ID.unique(), providerType: 'email',
  identifier: `inbox${Date.now()}@example.com`, name: 'Inbox' });
out.target = { providerType: target.providerType, name: target.name };
const subscriber = await messaging.createSubscriber({ topicId: topic.$id, subscriberId: ID.unique(), targetId: target.$id });
out.subscriber = { targetId: subscriber.targetId === target.$id, userId: subscriber.userId === user.$id };
out.subscribers = (await messaging.listSubscribers({ topicId: topic.$id })).total;
out.topicEmailTotal = (await messaging.getTopic({ topicId: topic.$id })).emailTotal;
out.wrongType = await errorOf(messaging.updateTwilioProvider({ providerId: smtp.$id, name: 'x' }));

await messaging.deleteSubscriber({ topicId: topic.$id, subscriberId: subscriber.$id });
await messaging.deleteTopic({ topicId: topic.$id });
out.deletedTopic = await errorOf(messaging.getTopic({ topicId: topic.$id }));
await messaging.deleteProvider({ providerId: smtp.$id });
await messaging.deleteProvider({ providerId: sms.$id });
out.deletedProvider = await errorOf(messaging.getProvider({ providerId: smtp.$id }));
await users.delete({ userId: user.$id });
report(out);
