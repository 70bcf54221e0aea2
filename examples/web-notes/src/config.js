// Where the demo finds its server and resources: window.WEB_NOTES_CONFIG (public/config.js,
// rewritten by setup.py) overridden by query parameters, so a test can point one build at any
// server: ?endpoint=http://127.0.0.1:8000/v1&project=demo&database=webnotes&table=notes&bucket=attachments
// (`oauth2=oidc` shows "Sign in with OpenID" for that provider).
const KEYS = ['endpoint', 'project', 'database', 'table', 'bucket', 'oauth2'];

export function loadConfig(location = window.location) {
  const base = { database: 'webnotes', table: 'notes', bucket: 'attachments', ...(window.WEB_NOTES_CONFIG || {}) };
  const params = new URLSearchParams(location.search);
  for (const key of KEYS) {
    if (params.get(key)) base[key] = params.get(key);
  }
  if (!base.endpoint) base.endpoint = `${location.origin}/v1`;
  base.endpoint = base.endpoint.replace(/\/+$/, '');
  base.crossOrigin = new URL(base.endpoint).origin !== location.origin;
  return base;
}
