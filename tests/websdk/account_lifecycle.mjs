// The official web SDK 27 Account service under Node, through the account lifecycle flows.
// Usage: node account_lifecycle.mjs <endpoint> <projectId> <flow> <email> <redirectUrl>
//   flow: verification | recovery | magic-url | email-code | mfa
// Talks JSON lines: prints {"need": "link"|"code"|"totp", ...} and reads the answer (the link or
// code from the received mail, or a TOTP code for {"secret"}) from stdin; prints {"result": ...}.
// Like a browser on another site, the SDK keeps its session in localStorage.cookieFallback.
import readline from 'node:readline';

const store = new Map();
globalThis.window = globalThis;
globalThis.localStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, String(v)),
  removeItem: (k) => store.delete(k),
};
const originalWarn = console.warn;
console.warn = (...args) => originalWarn('[sdk warning]', ...args); // keep stdout for JSON lines

const { Client, Account, ID, AuthenticatorType, AuthenticationFactor } = await import('appwrite');
const [endpoint, project, flow, email, redirect] = process.argv.slice(2);
const client = new Client().setEndpoint(endpoint).setProject(project);
const account = new Account(client);
const input = readline.createInterface({ input: process.stdin });
const answers = input[Symbol.asyncIterator]();

async function ask(question) {
  console.log(JSON.stringify(question));
  const { value } = await answers.next();
  return value.trim();
}

function query(link) {
  return Object.fromEntries(new URL(link).searchParams.entries());
}

async function expectError(promise, type) {
  try {
    await promise;
  } catch (error) {
    if (error.type === type) return error.code;
    throw error;
  }
  throw new Error(`expected ${type}`);
}

const result = {};
if (flow === 'verification') {
  await account.create({ userId: ID.unique(), email, password: 'web-sdk-pass-1' });
  await account.createEmailPasswordSession({ email, password: 'web-sdk-pass-1' });
  const token = await account.createEmailVerification({ url: redirect });
  const link = await ask({ need: 'link', to: email });
  const { userId, secret } = query(link);
  result.sameToken = (await account.updateEmailVerification({ userId, secret })).$id === token.$id;
  result.emailVerification = (await account.get()).emailVerification;
  result.reuse = await expectError(account.updateEmailVerification({ userId, secret }), 'user_invalid_token');
} else if (flow === 'recovery') {
  await account.create({ userId: ID.unique(), email, password: 'web-sdk-pass-1' });
  await account.createRecovery({ email, url: redirect });
  const { userId, secret } = query(await ask({ need: 'link', to: email }));
  await account.updateRecovery({ userId, secret, password: 'web-sdk-pass-2' });
  result.oldPassword = await expectError(
    account.createEmailPasswordSession({ email, password: 'web-sdk-pass-1' }), 'user_invalid_credentials');
  await account.createEmailPasswordSession({ email, password: 'web-sdk-pass-2' });
  result.email = (await account.get()).email;
} else if (flow === 'magic-url') {
  const token = await account.createMagicURLToken({ userId: ID.unique(), email, url: redirect, phrase: true });
  result.phrase = token.phrase;
  const { userId, secret } = query(await ask({ need: 'link', to: email }));
  const session = await account.createSession({ userId, secret });
  result.provider = session.provider;
  const me = await account.get();
  result.email = me.email;
  result.emailVerification = me.emailVerification;
} else if (flow === 'email-code') {
  const token = await account.createEmailToken({ userId: ID.unique(), email });
  const code = await ask({ need: 'code', to: email });
  const session = await account.createSession({ userId: token.userId, secret: code });
  result.factors = session.factors;
  result.email = (await account.get()).email;
} else if (flow === 'mfa') {
  await account.create({ userId: ID.unique(), email, password: 'web-sdk-pass-1' });
  await account.createEmailPasswordSession({ email, password: 'web-sdk-pass-1' });
  const { secret, uri } = await account.createMfaAuthenticator({ type: AuthenticatorType.Totp });
  result.uri = uri.startsWith('otpauth://totp/');
  await account.updateMfaAuthenticator({ type: AuthenticatorType.Totp, otp: await ask({ need: 'totp', secret }) });
  await account.updateMFA({ mfa: true });
  result.codes = (await account.createMfaRecoveryCodes()).recoveryCodes.length;
  await account.deleteSession({ sessionId: 'current' });
  await account.createEmailPasswordSession({ email, password: 'web-sdk-pass-1' });
  result.blocked = await expectError(account.get(), 'user_more_factors_required');
  result.factors = await account.listMfaFactors();
  const challenge = await account.createMfaChallenge({ factor: AuthenticationFactor.Totp });
  const session = await account.updateMfaChallenge({ challengeId: challenge.$id,
    otp: await ask({ need: 'totp', secret }) });
  result.sessionFactors = session.factors;
  result.email = (await account.get()).email;
} else {
  throw new Error(`unknown flow ${flow}`);
}
console.log(JSON.stringify({ result }));
input.close();
process.exit(0);
