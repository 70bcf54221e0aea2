// The demo's account extras in headless Chromium: mail flows, OpenID sign-in, avatar and
// country. One flow per run:
//
//   node e2e/lifecycle.mjs <recovery|code|verify|openid|openid-cancel|profile|mfa|ended>
//
// Environment: DEMO_URL, PROJECT, CROSS_ORIGIN, ARTIFACTS_DIR, CHROMIUM as for e2e/flows.mjs;
// USER_EMAIL, USER_PASSWORD (recovery, verify, profile: an existing account); NEW_PASSWORD
// (recovery); OIDC_LOGIN (openid: the name to sign in with at the provider). mfa, ended: an
// existing account in USER_EMAIL, USER_PASSWORD.
//
// Mail: the flow prints `MAIL {"to": <address>, "want": "link"|"code"}` and reads one line
// from standard input, the link or the code of the newest mail to that address (the test reads
// it from its SMTP server). `ended` prints `END_SESSIONS {"email": <address>}` and waits for one
// line: the test ends that user's sessions on the server meanwhile. Prints "ok <flow>-<mode>" and
// exits 0, or the failure and exits 1.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { expectAccessible } from './axe.mjs';

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

// RFC 6238 TOTP (SHA-1, 6 digits, 30 s) of a base32 secret, as authenticator apps compute it.
function totp(secret, at = Date.now()) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 1000 / 30)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

async function ask(kind, data) {
  console.log(`${kind} ${JSON.stringify(data)}`);
  const { value, done } = await stdinLines.next();
  assert.ok(!done && value && !value.startsWith('ERROR'), `${kind}: ${value}`);
  return value.trim();
}

async function errorShown(pattern) {
  await page.waitForSelector('#error:not([hidden])');
  const text = await page.textContent('#error-text');
  assert.match(text, pattern);
  assertHuman(text);
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
    // "Choose a new password" alone: no log-in form above it, at the top of the card.
    assert.ok(await page.isHidden('#auth-form'), 'the log-in form is hidden on a recovery link');
    assert.ok(await page.isHidden('#forgot-link'), 'the log-in links are hidden on a recovery link');
    const form = await page.locator('#new-password-form').boundingBox();
    assert.ok(form.y < 250, `the new-password form starts at ${form.y} px`);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'new-password');
    await expectAccessible(page, 'choose a new password');
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
    await page.fill('#code', String((Number(code) + 1) % 1_000_000).padStart(6, '0'));
    await page.click('#code-submit');
    await errorShown(/That code isn’t right/);  // not "expired or already used"
    await expectAccessible(page, 'email code form with an error');
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
    // The link works once: opened again, the page says the address is verified (it is).
    await open(link);
    await notice(/Your email address is already verified\./);
    assert.equal(await page.getAttribute('#notice', 'data-kind'), 'ok');
    assert.doesNotMatch(await page.textContent('#notice'), /not verified/);
    assert.ok(trail.some((line) => line.includes('user_invalid_token')), 'the error type is in the console');
    await signedInAs(email);
    await logOut();
    // Signed out, the page cannot tell: it says what may have happened, not "not verified".
    await open(link);
    await notice(/already used or has expired/);
    assert.doesNotMatch(await page.textContent('#notice'), /not verified/);
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

  // Turn on two-step sign-in with an authenticator app, sign in with password + TOTP code, then
  // with a recovery code; turn it off again.
  async mfa() {
    const email = env.USER_EMAIL;
    await open();
    await logIn(email, env.USER_PASSWORD);
    await page.waitForSelector('#security:not([hidden])');
    assert.match(await page.textContent('#mfa-status'), /^Off/);
    await page.click('#mfa-enable');
    await page.waitForSelector('#mfa-setup:not([hidden])');
    const secret = (await page.textContent('#mfa-secret')).trim();
    const uri = await page.getAttribute('#mfa-uri', 'href');
    assert.ok(uri.startsWith('otpauth://totp/') && uri.includes(`secret=${secret}`), uri);
    await expectAccessible(page, 'authenticator set-up');
    await page.fill('#mfa-setup-code', String((Number(totp(secret)) + 500_000) % 1_000_000).padStart(6, '0'));
    await page.click('#mfa-setup-verify');
    await errorShown(/That code isn’t right/);
    await page.fill('#mfa-setup-code', totp(secret));
    await page.click('#mfa-setup-verify');
    await page.waitForSelector('#mfa-codes:not([hidden])');
    const codes = await page.locator('#mfa-code-list li').allTextContents();
    assert.equal(codes.length, 6, `recovery codes shown: ${codes}`);
    await expectNoError();
    await expectAccessible(page, 'recovery codes');
    await page.click('#mfa-codes-done');
    assert.match(await page.textContent('#mfa-status'), /^On/);
    await logOut();

    // Password, then the authenticator's code.
    await page.fill('#email', email);
    await page.fill('#password', env.USER_PASSWORD);
    await page.click('#auth-submit');
    await page.waitForSelector('#mfa-form:not([hidden])');
    await expectNoError();
    assert.ok(await page.isHidden('#auth-form'), 'the password form gives way to the second step');
    const factors = await page.locator('#mfa-factor option').evaluateAll((o) => o.map((x) => x.value));
    assert.deepEqual(factors, ['totp', 'recoveryCode']);
    await expectAccessible(page, 'second step');
    await page.fill('#mfa-code', String((Number(totp(secret)) + 500_000) % 1_000_000).padStart(6, '0'));
    await page.click('#mfa-submit');
    await errorShown(/That code isn’t right/);
    await page.fill('#mfa-code', totp(secret));
    await page.click('#mfa-submit');
    await signedInAs(email);
    await expectNoError();
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await signedInAs(email);
    await logOut();

    // A recovery code instead.
    await page.fill('#email', email);
    await page.fill('#password', env.USER_PASSWORD);
    await page.click('#auth-submit');
    await page.waitForSelector('#mfa-form:not([hidden])');
    await page.selectOption('#mfa-factor', 'recoveryCode');
    await page.waitForFunction(() => document.getElementById('mfa-code-label').textContent.includes('recovery'));
    await page.fill('#mfa-code', codes[0]);
    await page.click('#mfa-submit');
    await signedInAs(email);
    await expectAccessible(page, 'account with two-step sign-in on');

    // Off again: the password alone signs in.
    await page.click('#mfa-disable');
    await page.waitForFunction(() => /^Off/.test(document.getElementById('mfa-status').textContent));
    await logOut();
    await logIn(email, env.USER_PASSWORD);
    await logOut();
    console.log(`SECRET ${secret}`);
  },

  // The session ends on the server (signed out everywhere): the next action lands on the log-in
  // form with one notice, and the error banner never covers "Log out".
  async ended() {
    const email = env.USER_EMAIL;
    await open();
    await logIn(email, env.USER_PASSWORD);
    await expectAccessible(page, 'notes and account panels');
    await ask('END_SESSIONS', { email });
    await page.fill('#note-title', 'after the end');
    await page.click('#note-add');
    await page.waitForSelector('body[data-view="auth"]');
    await notice(/Your session has ended/);
    assertHuman(await page.textContent('#notice'));
    assert.ok(await page.isHidden('#error'), 'one notice, no error banner on top of it');
    assert.ok(await page.isHidden('#logout') && await page.isHidden('#who'), 'nothing of the old session is left');
    assert.equal(await page.inputValue('#email'), '');
    await expectAccessible(page, 'log-in form after the session ended');
    // The banner sits below the header: "Log out" stays clickable while an error shows.
    await logIn(email, env.USER_PASSWORD);
    assert.ok(await page.isHidden('#notice'), 'the notice goes once signed in again');
    await page.evaluate(() => {
      document.getElementById('error-text').textContent = 'x';
      document.getElementById('error').hidden = false;
    });
    const [banner, logout] = await Promise.all(['#error', '#logout'].map((sel) => page.locator(sel).boundingBox()));
    assert.ok(banner.y >= logout.y + logout.height, `the banner (top ${banner.y}) is below "Log out" (bottom ${logout.y + logout.height})`);
    await page.click('#error-close');
    await logOut();
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
