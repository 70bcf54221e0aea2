// The demo's account extras in headless Chromium: mail flows, OpenID sign-in, avatar and
// country. One flow per run:
//
//   node e2e/lifecycle.mjs <recovery|code|verify|openid|openid-cancel|profile>
//
// Environment: DEMO_URL, PROJECT, CROSS_ORIGIN, ARTIFACTS_DIR, CHROMIUM as for e2e/flows.mjs;
// USER_EMAIL, USER_PASSWORD (recovery, verify, profile: an existing account); NEW_PASSWORD
// (recovery); OIDC_LOGIN (openid: the name to sign in with at the provider).
//
// Mail: the flow prints `MAIL {"to": <address>, "want": "link"|"code"}` and reads one line
// from standard input, the link or the code of the newest mail to that address (the test reads
// it from its SMTP server). Prints "ok <flow>-<mode>" and exits 0, or the failure and exits 1.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const env = process.env;
const flow = process.argv[2];
const CROSS = env.CROSS_ORIGIN === '1';
const tag = `${flow}-${CROSS ? 'cross' : 'same'}`;
const ARTIFACTS = env.ARTIFACTS_DIR || 'artifacts/browser';
const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const trail = [];
let page;

async function askMail(to, want) {
  console.log(`MAIL ${JSON.stringify({ to, want })}`);
  const { value, done } = await stdinLines.next();
  assert.ok(!done && value && !value.startsWith('ERROR'), `no ${want} in a mail to ${to}: ${value}`);
  return value.trim();
}

async function open(url = env.DEMO_URL) {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
}

async function expectNoError() {
  const box = page.locator('#error');
  if (await box.isVisible()) assert.fail(`the app shows an error: ${await page.textContent('#error-text')}`);
}

// Errors are sentences for people (src/messages.js): no Appwrite type, no HTTP status, no
// provider's reason; those go to the console.
function assertHuman(text) {
  assert.doesNotMatch(text, /\(|_[a-z]|\b[1-5]\d\d\b|access_denied/, `error text for people: ${text}`);
}

async function signedInAs(email) {
  try {
    await page.waitForSelector('body[data-view="notes"]');
  } catch (err) {
    await expectNoError();
    throw err;
  }
  assert.ok((await page.textContent('#who')).includes(email), `signed in as ${email}`);
}

async function logIn(email, password) {
  await page.waitForSelector('body[data-view="auth"]');
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('#auth-submit');
  await signedInAs(email);
}

async function logOut() {
  await page.click('#logout');
  await page.waitForSelector('body[data-view="auth"]');
}

async function notice(pattern) {
  await page.waitForSelector('#notice:not([hidden])');
  await page.waitForFunction((source) => new RegExp(source).test(document.getElementById('notice').textContent),
    pattern.source);
}

// A mailed link must come back to the page's own origin, with the page's query kept.
function checkLink(link, flowName) {
  const url = new URL(link);
  const demo = new URL(env.DEMO_URL);
  assert.equal(url.origin + url.pathname, demo.origin + demo.pathname, `the link opens the demo: ${link}`);
  assert.equal(url.searchParams.get('flow'), flowName);
  assert.ok(url.searchParams.get('userId') && url.searchParams.get('secret'), link);
  if (CROSS) assert.equal(url.searchParams.get('project'), env.PROJECT, 'the cross-origin config query is kept');
}

async function secretGone() {
  assert.ok(!new URL(page.url()).searchParams.has('secret'), `the secret is cleared from the address: ${page.url()}`);
}

const flows = {
  async recovery() {
    const email = env.USER_EMAIL;
    await open();
    await page.fill('#email', email);
    await page.click('#forgot-link');
    assert.equal(await page.inputValue('#recovery-email'), email, 'the address typed is carried over');
    await page.click('#recovery-send');
    await notice(/sent a link/);
    await expectNoError();
    const link = await askMail(email, 'link');
    checkLink(link, 'recovery');
    await open(link);
    await page.waitForSelector('#new-password-form:not([hidden])');
    await secretGone();
    await page.fill('#new-password', env.NEW_PASSWORD);
    await page.click('#new-password-save');
    await notice(/Password changed/);
    await expectNoError();
    await logIn(email, env.NEW_PASSWORD);
    await logOut();
  },

  async code() {
    const email = `code-${Date.now().toString(36)}${randomBytes(3).toString('hex')}@example.com`;
    await open();
    await page.click('#code-link');
    await page.fill('#code-email', email);
    await page.click('#code-send');
    await page.waitForSelector('#code-form:not([hidden])');
    await expectNoError();
    const code = await askMail(email, 'code');
    assert.match(code, /^\d{6}$/);
    await page.fill('#code', code);
    await page.click('#code-submit');
    await signedInAs(email);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await signedInAs(email);
    await logOut();
    console.log(`EMAIL ${email}`);
  },

  async verify() {
    const email = env.USER_EMAIL;
    await open();
    await logIn(email, env.USER_PASSWORD);
    await page.waitForSelector('#verify-banner:not([hidden])');
    await page.click('#verify-send');
    await notice(/sent you a link/);
    await expectNoError();
    const link = await askMail(email, 'link');
    checkLink(link, 'verify');
    await open(link);
    await notice(/Email verified/);
    await secretGone();
    await signedInAs(email);
    assert.ok(await page.locator('#verify-banner').isHidden(), 'a verified user sees no banner');
    await expectNoError();
    // The link works once: opened again, the page says why it failed.
    await open(link);
    await notice(/Email not verified\. .*expired or was already used/);
    assert.equal(await page.getAttribute('#notice', 'data-kind'), 'error');
    assertHuman(await page.textContent('#notice'));
    assert.ok(trail.some((line) => line.includes('user_invalid_token')), 'the error type is in the console');
    await signedInAs(email);
    await logOut();
  },

  async openid() {
    await open();
    await page.click('#signin-openid');
    await page.waitForSelector('#login', { timeout: 30_000 }); // the provider's own form
    await page.fill('#login', env.OIDC_LOGIN);
    await page.click('#signin');
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    await signedInAs(`${env.OIDC_LOGIN}@example.com`);
    await secretGone();
    await expectNoError();
    await logOut();
  },

  // Cancel at the provider: the page comes back to `failure` and says why.
  async 'openid-cancel'() {
    await open();
    await page.click('#signin-openid');
    await page.waitForSelector('#login', { timeout: 30_000 });
    await page.click('#cancel');
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    assert.equal(await page.getAttribute('body', 'data-view'), 'auth');
    await page.waitForSelector('#error:not([hidden])');
    const shown = await page.textContent('#error-text');
    assert.match(shown, /Sign-in with OpenID didn’t finish: it was cancelled/);
    assertHuman(shown);
    // The provider's reason is not lost: the console has it.
    assert.ok(trail.some((line) => /user_oauth2_provider_error.*Sign-in with OpenID failed: .*access_denied/.test(line)),
      `the provider's reason is in the console:\n${trail.join('\n')}`);
    assert.ok(!new URL(page.url()).searchParams.has('error'), 'the error is cleared from the address');
  },

  async profile() {
    const avatars = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.endsWith('/avatars/initials')) avatars.push(response);
    });
    await open();
    await logIn(env.USER_EMAIL, env.USER_PASSWORD);
    const img = page.locator('#avatar');
    await img.waitFor({ state: 'visible' });
    await page.waitForFunction(() => {
      const el = document.getElementById('avatar');
      return el.complete && el.naturalWidth > 0;
    });
    assert.ok(avatars.length > 0, 'the avatar came from /avatars/initials');
    assert.equal(avatars.at(-1).status(), 200);
    assert.equal(avatars.at(-1).headers()['content-type'], 'image/png');
    assert.ok(new URL(await img.getAttribute('src')).searchParams.get('name'), 'the SDK URL names the user');

    await page.waitForSelector('#country[data-ready="true"]');
    const codes = await page.locator('#country option').evaluateAll((options) => options.map((o) => o.value));
    assert.ok(codes.length > 100 && codes.includes('FR') && codes.includes('JP'), `countries listed: ${codes.length}`);
    await page.selectOption('#country', 'FR');
    await page.click('#country-save');
    await page.waitForFunction(() => document.getElementById('profile-status').textContent === 'Saved');
    await expectNoError();
    await page.reload();
    await page.waitForSelector('#country[data-ready="true"]');
    assert.equal(await page.inputValue('#country'), 'FR', 'the saved country is preselected after a reload');
    await logOut();
    assert.ok(await img.isHidden(), 'no avatar after log out');
  },
};

async function main() {
  if (!flows[flow]) {
    console.error(`usage: node e2e/lifecycle.mjs <${Object.keys(flows).join('|')}>`);
    process.exit(2);
  }
  const browser = await chromium.launch({
    executablePath: env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  let failed = null;
  try {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (msg) => trail.push(`console.${msg.type()}: ${msg.text()}`));
    page.on('pageerror', (err) => trail.push(`pageerror: ${err.stack || err}`));
    page.on('framenavigated', (frame) => frame === page.mainFrame() && trail.push(`navigated: ${frame.url()}`));
    await flows[flow]();
  } catch (err) {
    failed = err;
    mkdirSync(ARTIFACTS, { recursive: true });
    await page?.screenshot({ path: join(ARTIFACTS, `${tag}.png`), fullPage: true }).catch(() => {});
    writeFileSync(join(ARTIFACTS, `${tag}-console.log`), `${trail.join('\n')}\n`);
  } finally {
    await browser.close().catch(() => {});
  }
  if (failed) {
    console.error(`FAIL ${tag}: ${failed.stack || failed}`);
    process.exit(1);
  }
  console.log(`ok ${tag}`);
  process.exit(0);
}

main();
