// A real OpenID Connect provider for the tests: the certified `oidc-provider` package with a
// small configuration. Usage: node provider.mjs <port>
//
// - Issuer http://127.0.0.1:<port>, discovery at /.well-known/openid-configuration.
// - Clients register themselves (RFC 7591 dynamic registration at /reg), so each test can
//   register the callback URLs of the servers it started.
// - PKCE (S256) is required; refresh tokens are issued.
// - Scripted login: /interaction/<uid> is a plain HTML form. POST .../login with `login=<name>`
//   signs in account <name> and grants what the client asked for; POST .../abort answers the
//   client with `access_denied` (the user cancelled). Account claims follow the name:
//   email <name>@example.com (a name with "@" is the email itself), email_verified unless the
//   name starts with "unverified", no email at all when it starts with "noemail".
import http from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node provider.mjs <port>');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;

function claimsFor(name) {
  const claims = { sub: name, name: name.charAt(0).toUpperCase() + name.slice(1) };
  if (!name.startsWith('noemail')) {
    claims.email = name.includes('@') ? name : `${name}@example.com`;
    claims.email_verified = !name.startsWith('unverified');
  }
  return claims;
}

const provider = new Provider(issuer, {
  clients: [],
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
  },
  clientDefaults: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => claimsFor(sub) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  pkce: { required: () => true },
  issueRefreshToken: async () => true,
  cookies: { keys: ['tests-only-cookie-signing-key'] },
});
provider.proxy = false;

function page(uid, clientId) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Test OpenID provider</title></head>
<body><h1>Sign in to ${clientId}</h1>
<form method="post" action="/interaction/${uid}/login">
  <label>Login <input name="login" id="login" autofocus></label>
  <button type="submit" id="signin">Sign in</button>
</form>
<form method="post" action="/interaction/${uid}/abort"><button type="submit" id="cancel">Cancel</button></form>
</body></html>`;
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error('interaction mismatch');
  if (req.method === 'POST' && action === 'login') {
    const login = ((await readForm(req)).get('login') || '').trim();
    if (!login) throw new Error('login is required');
    const grant = new provider.Grant({ accountId: login, clientId: details.params.client_id });
    grant.addOIDCScope(String(details.params.scope || 'openid'));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } },
      { mergeWithLastSubmission: false });
    return;
  }
  if (req.method === 'POST' && action === 'abort') {
    await provider.interactionFinished(req, res,
      { error: 'access_denied', error_description: 'End-User aborted interaction' },
      { mergeWithLastSubmission: false });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(page(uid, details.params.client_id));
}

const handle = provider.callback();
const server = http.createServer((req, res) => {
  const match = new URL(req.url, issuer).pathname.match(/^\/interaction\/([^/]+)(?:\/(login|abort))?$/);
  if (!match) {
    handle(req, res);
    return;
  }
  interaction(req, res, match[1], match[2]).catch((err) => {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(String(err && err.message ? err.message : err));
  });
});
server.listen(port, '127.0.0.1', () => console.log(`oidc-provider listening on ${issuer}`));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
