// End-to-end flows of the notes demo in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; no browser is downloaded). One flow per run:
//
//   node e2e/flows.mjs <auth|notes|files|realtime|refused>
//
// Environment:
//   DEMO_URL        page URL with the config query (?endpoint=&project=&database=&table=&bucket=)
//   PROJECT         the project ID
//   CROSS_ORIGIN    "1" when the page's origin is not the API's (session via X-Fallback-Cookies)
//   USER_EMAIL, USER_PASSWORD   an existing account (notes, files, realtime)
//   API_ENDPOINT    the API endpoint (refused: probed from the page)
//   ARTIFACTS_DIR   where a failing run saves screenshots and console logs
//   CHROMIUM        browser binary (default /usr/bin/chromium)
//
// Prints "ok <flow>" and exits 0, or prints the failure and exits 1.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const env = process.env;
const flow = process.argv[2];
const DEMO_URL = env.DEMO_URL;
const CROSS = env.CROSS_ORIGIN === '1';
const project = env.PROJECT;
const ARTIFACTS = env.ARTIFACTS_DIR || 'artifacts/browser';
const TIMEOUT = 15_000;
const tag = `${flow}-${CROSS ? 'cross' : 'same'}`;
const unique = () => `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// ---- harness ---------------------------------------------------------------------------------

const pages = [];
const logs = [];

async function newPage(browser, name) {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 900, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on('console', (msg) => logs.push(`[${name}] console.${msg.type()}: ${msg.text()}`));
  page.on('pageerror', (err) => logs.push(`[${name}] pageerror: ${err.stack || err}`));
  page.on('requestfailed', (req) => logs.push(`[${name}] requestfailed: ${req.method()} ${req.url()} ${req.failure()?.errorText}`));
  pages.push({ name, page });
  return page;
}

async function open(page) {
  await page.goto(DEMO_URL);
  await page.waitForSelector('body[data-ready="true"]');
}

// A reload is over when the app has restored the session and loaded the list.
async function reload(page) {
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
}

async function saveArtifacts() {
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const { name, page } of pages) {
    try {
      await page.screenshot({ path: join(ARTIFACTS, `${tag}-${name}.png`), fullPage: true });
    } catch (err) {
      logs.push(`[${name}] screenshot failed: ${err}`);
    }
  }
  writeFileSync(join(ARTIFACTS, `${tag}-console.log`), logs.join('\n') + '\n');
}

// ---- UI steps ----------------------------------------------------------------------------------

async function expectNoError(page) {
  const box = page.locator('#error');
  if (await box.isVisible()) assert.fail(`the app shows an error: ${await box.textContent()}`);
}

async function signUp(page, { name, email, password }) {
  await page.waitForSelector('body[data-view="auth"]');
  await page.click('#auth-toggle');
  await page.fill('#name', name);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('#auth-submit');
  await loggedIn(page, email);
}

async function logIn(page, { email, password }) {
  await page.waitForSelector('body[data-view="auth"]');
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('#auth-submit');
  await loggedIn(page, email);
}

async function loggedIn(page, email) {
  try {
    await page.waitForSelector('body[data-view="notes"]');
  } catch (err) {
    await expectNoError(page);
    throw err;
  }
  assert.match(await page.textContent('#who'), new RegExp(email.replace(/[.+]/g, '\\$&')));
}

async function logOut(page) {
  await page.click('#logout');
  await page.waitForSelector('body[data-view="auth"]');
  await expectNoError(page);
}

async function sessionInStorage(page) {
  const raw = await page.evaluate(() => window.localStorage.getItem('cookieFallback'));
  let parsed = {};
  try {
    parsed = JSON.parse(raw || '{}');
  } catch {
    parsed = {};
  }
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
}

async function addNote(page, title, body = '') {
  await page.fill('#note-title', title);
  await page.fill('#note-body', body);
  await page.click('#note-add');
  await page.waitForSelector(`#list li:has(h3.title:text-is("${title}"))`);
  await expectNoError(page);
}

const noteItem = (page, title) => page.locator('#list li', { has: page.locator(`h3.title:text-is("${title}")`) });

async function titles(page) {
  return page.locator('#list li h3.title').allTextContents();
}

// ---- flows ---------------------------------------------------------------------------------------

const flows = {
  // Sign up, the session survives a reload, log out ends it, log in again, log out.
  async auth(browser) {
    const page = await newPage(browser, 'main');
    const user = { name: 'Ada', email: `ada-${unique()}@example.com`, password: 'correct horse battery' };
    await open(page);
    await signUp(page, user);
    const stored = await sessionInStorage(page);
    if (CROSS) {
      assert.ok(stored[`a_session_${project}`], 'cross-origin: the SDK keeps the session in localStorage.cookieFallback');
    } else {
      assert.equal(stored[`a_session_${project}`], undefined, 'same origin: the session travels in a cookie, not localStorage');
      const cookies = await page.context().cookies();
      assert.ok(cookies.some((c) => c.name.startsWith(`a_session_${project.toLowerCase()}`)), 'same origin: a session cookie is set');
    }
    await reload(page);
    await loggedIn(page, user.email);
    await logOut(page);
    assert.equal((await sessionInStorage(page))[`a_session_${project}`], undefined, 'log out clears the stored session');
    await reload(page);
    assert.equal(await page.getAttribute('body', 'data-view'), 'auth', 'after log out a reload shows the log-in form');
    await logIn(page, user);
    await logOut(page);
  },

  // Create, list (owner query, newest first, title search), edit and delete notes.
  async notes(browser) {
    const page = await newPage(browser, 'main');
    await open(page);
    await logIn(page, { email: env.USER_EMAIL, password: env.USER_PASSWORD });
    const run = unique();
    const first = `first ${run}`;
    const second = `second ${run}`;
    await addNote(page, first, 'body one');
    await addNote(page, second, 'body two');
    await reload(page);
    const listed = await titles(page);
    assert.ok(listed.indexOf(second) !== -1 && listed.indexOf(second) < listed.indexOf(first), `newest first: ${listed}`);

    await page.fill('#search', `second ${run}`);
    await page.waitForFunction((t) => {
      const shown = [...document.querySelectorAll('#list h3.title')].map((e) => e.textContent);
      return shown.length === 1 && shown[0] === t;
    }, second);
    await page.fill('#search', '');
    await page.waitForSelector(`#list li:has(h3.title:text-is("${first}"))`);

    const edited = `edited ${run}`;
    await noteItem(page, first).locator('button.edit').click();
    await noteItem(page, first).locator('.edit-title').fill(edited);
    await noteItem(page, first).locator('.edit-body').fill('changed body');
    await noteItem(page, first).locator('button.save').click();
    await page.waitForSelector(`#list li:has(h3.title:text-is("${edited}"))`);
    await expectNoError(page);
    await reload(page);
    await page.waitForSelector(`#list li:has(h3.title:text-is("${edited}"))`);
    assert.equal(await noteItem(page, edited).locator('.body').textContent(), 'changed body');

    for (const title of [edited, second]) {
      await noteItem(page, title).locator('button.delete').click();
      await noteItem(page, title).waitFor({ state: 'detached' });
      await expectNoError(page);
    }
    await reload(page);
    const after = await titles(page);
    assert.ok(!after.includes(edited) && !after.includes(second), `deleted notes stay deleted: ${after}`);
    await logOut(page);
  },

  // Attach a 6 MiB file (chunked upload with progress), download it back, preview an image.
  async files(browser) {
    const page = await newPage(browser, 'main');
    await open(page);
    await logIn(page, { email: env.USER_EMAIL, password: env.USER_PASSWORD });
    const run = unique();

    const bigTitle = `big ${run}`;
    await addNote(page, bigTitle);
    const big = randomBytes(6 * 1024 * 1024 + 12345);
    await noteItem(page, bigTitle).locator('input.file').setInputFiles({ name: 'data.bin', mimeType: 'application/octet-stream', buffer: big });
    await page.waitForSelector(`#list li:has(h3.title:text-is("${bigTitle}")) .attachment:not([hidden]) a.download`, { timeout: 60_000 });
    await expectNoError(page);
    const link = noteItem(page, bigTitle).locator('a.download');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.equal(download.suggestedFilename(), 'data.bin');
    const got = readFileSync(await download.path());
    assert.equal(got.length, big.length, 'downloaded size');
    assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(big).digest('hex'), 'downloaded bytes');

    const picTitle = `picture ${run}`;
    await addNote(page, picTitle);
    await noteItem(page, picTitle).locator('input.file').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png(40, 30) });
    const img = noteItem(page, picTitle).locator('img.preview');
    await img.waitFor({ state: 'visible', timeout: 30_000 });
    await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());

    // The chunked upload reported progress per chunk (two chunks: 5 MiB + the rest).
    await reload(page);
    await noteItem(page, bigTitle).locator('input.file').setInputFiles({ name: 'again.bin', mimeType: 'application/octet-stream', buffer: big });
    await page.waitForSelector(`#list li:has(h3.title:text-is("${bigTitle}")) a.download:text("again.bin")`, { timeout: 60_000 });
    const bar = noteItem(page, bigTitle).locator('progress[data-done="true"]');
    assert.ok(Number(await bar.getAttribute('data-events')) >= 2, 'onProgress called per chunk');
    assert.equal(await bar.evaluate((el) => el.value), 100);
    await expectNoError(page);

    for (const title of [bigTitle, picTitle]) {
      await noteItem(page, title).locator('button.delete').click();
      await noteItem(page, title).waitFor({ state: 'detached' });
    }
    await logOut(page);
  },

  // Two browser contexts (two tabs of the same user): a note created in one shows up in the
  // other through Realtime, and its deletion too.
  async realtime(browser) {
    const creds = { email: env.USER_EMAIL, password: env.USER_PASSWORD };
    const a = await newPage(browser, 'writer');
    const b = await newPage(browser, 'watcher');
    await open(a);
    await logIn(a, creds);
    await open(b);
    await logIn(b, creds);
    await b.waitForSelector('#live[data-state="on"]');
    // The socket is open; give the subscribe message a moment to reach the server.
    await b.waitForTimeout(1500);
    const title = `live ${unique()}`;
    await addNote(a, title, 'sent through realtime');
    await b.waitForSelector(`#list li:has(h3.title:text-is("${title}"))`, { timeout: 10_000 });
    await noteItem(a, title).locator('button.delete').click();
    await noteItem(b, title).waitFor({ state: 'detached', timeout: 10_000 });
    await logOut(a);
    await logOut(b);
  },

  // A page whose origin the project does not allow: the browser refuses the API's answers
  // (no CORS grant), so sign-up fails with a visible error and plain fetches fail too.
  async refused(browser) {
    const page = await newPage(browser, 'main');
    await open(page);
    await page.waitForSelector('body[data-view="auth"]');
    await page.click('#auth-toggle');
    await page.fill('#email', `eve-${unique()}@example.com`);
    await page.fill('#password', 'password1234');
    await page.click('#auth-submit');
    await page.waitForSelector('#error:not([hidden])');
    assert.match(await page.textContent('#error'), /Network error/);
    assert.equal(await page.getAttribute('body', 'data-view'), 'auth');
    const outcomes = await page.evaluate(async ({ endpoint, project }) => {
      const attempt = async (init) => {
        try {
          const r = await fetch(`${endpoint}/account`, init);
          return `status ${r.status}`;
        } catch (err) {
          return `refused ${err.name}`;
        }
      };
      return [
        await attempt({ credentials: 'include', headers: { 'X-Appwrite-Project': project } }),  // preflighted
        await attempt({ credentials: 'include' }),  // simple request: the answer has no grant
      ];
    }, { endpoint: env.API_ENDPOINT, project });
    assert.deepEqual(outcomes, ['refused TypeError', 'refused TypeError']);
  },
};

// A small RGB PNG (w x h), built here so the test ships no binary file.
function png(w, h) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const byte of buf) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(w, 0);
  header.writeUInt32BE(h, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows = [];
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(1 + w * 3);
    for (let x = 0; x < w; x++) row.set([253, (x * 6) % 256, (y * 8) % 256], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function main() {
  if (!flows[flow]) {
    console.error(`usage: node e2e/flows.mjs <${Object.keys(flows).join('|')}>`);
    process.exit(2);
  }
  assert.ok(DEMO_URL && project, 'DEMO_URL and PROJECT are required');
  // launch() gives the browser a fresh temporary profile (user-data-dir) and removes it on close.
  const browser = await chromium.launch({ executablePath: env.CHROMIUM || '/usr/bin/chromium', args: ARGS, headless: true });
  let failed = null;
  try {
    await flows[flow](browser);
  } catch (err) {
    failed = err;
    await saveArtifacts();
  } finally {
    await browser.close().catch(() => {});
  }
  if (failed) {
    console.error(`FAIL ${tag}: ${failed.stack || failed}`);
    console.error(`artifacts: ${ARTIFACTS}/${tag}-*`);
    process.exit(1);
  }
  console.log(`ok ${tag}`);
}

main();
