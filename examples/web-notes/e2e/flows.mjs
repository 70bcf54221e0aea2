// End-to-end flows of the notes demo in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; no browser is downloaded). One flow per run:
//
//   node e2e/flows.mjs <auth|notes|files|realtime|conflict|paging|layout|refused>
//
// Environment:
//   DEMO_URL        page URL with the config query (?endpoint=&project=&database=&table=&bucket=)
//   PROJECT         the project ID
//   CROSS_ORIGIN    "1" when the page's origin is not the API's (session via X-Fallback-Cookies)
//   USER_EMAIL, USER_PASSWORD   an existing account (notes, files, realtime)
//   API_ENDPOINT    the API endpoint (refused: probed from the page)
//   ARTIFACTS_DIR   where a failing run saves screenshots and console logs; every run keeps
//                   screenshots of the main screens in its screens/ folder
//   CHROMIUM        browser binary (default /usr/bin/chromium)
//
// Prints "ok <flow>" and exits 0, or prints the failure and exits 1.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { expectAccessible } from './axe.mjs';

const env = process.env;
const flow = process.argv[2];
const DEMO_URL = env.DEMO_URL;
const CROSS = env.CROSS_ORIGIN === '1';
const project = env.PROJECT;
const ARTIFACTS = env.ARTIFACTS_DIR || 'artifacts/browser';
const TIMEOUT = 15_000;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const tag = `${flow}-${CROSS ? 'cross' : 'same'}`;
const unique = () => `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// ---- harness ---------------------------------------------------------------------------------

const pages = [];
const logs = [];

async function newPage(browser, name, viewport = DESKTOP) {
  const phone = viewport.width < 600;
  const context = await browser.newContext({ acceptDownloads: true, viewport, isMobile: phone, hasTouch: phone });
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

// A screenshot of a main screen, kept after a passing run too: <ARTIFACTS_DIR>/screens/<flow>-<mode>-<name>.png
async function shot(page, name, fullPage = false) {
  mkdirSync(join(ARTIFACTS, 'screens'), { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'screens', `${tag}-${name}.png`), fullPage });
}

// Hold the requests matching ``match`` (method, URL regex) for ``ms`` before sending them,
// so a test can look at the page while they run. Returns a function that stops it.
async function slowDown(page, method, match, ms = 1200) {
  const handler = async (route) => {
    if (route.request().method() === method) await new Promise((resolve) => setTimeout(resolve, ms));
    await route.fallback();
  };
  await page.route(match, handler);
  return () => page.unroute(match, handler);
}

// The page scrolls sideways when its content is wider than the viewport.
async function expectNoSideways(page, what) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  assert.ok(scroll <= width, `${what}: the page is ${scroll} px wide in a ${width} px viewport`);
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

// Log out lands on an empty log-in form (not sign-up, nothing of the last user left in it).
async function logOut(page) {
  await page.click('#logout');
  await page.waitForSelector('body[data-view="auth"]');
  await expectNoError(page);
  assert.equal(await page.textContent('#auth-title'), 'Log in');
  assert.ok(await page.isHidden('#name-row'), 'the name field is for sign-up only');
  assert.equal(await page.inputValue('#email'), '', 'the email field is cleared');
  assert.equal(await page.inputValue('#password'), '', 'the password field is cleared');
  assert.ok(await page.isHidden('#live'), 'no live pill when signed out');
}

// The human sentence in the error banner: no Appwrite type, no raw code.
async function errorText(page) {
  await page.waitForSelector('#error:not([hidden])');
  const text = (await page.textContent('#error-text')).trim();
  assert.doesNotMatch(text, /\(|_[a-z]|\bcode\b|Failed to fetch/, `error text for people: ${text}`);
  return text;
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

// Delete through the page: the note goes at once, the Undo toast shows; dismissing the toast
// sends the delete now (else it goes when the toast expires).
async function deleteNote(page, title) {
  await noteItem(page, title).locator('button.delete').click();
  await noteItem(page, title).waitFor({ state: 'detached' });
  await page.waitForSelector('#toast:not([hidden])');
  await page.click('#toast-close');
  await page.waitForSelector('body[data-pending-deletes="0"]');
  await expectNoError(page);
}

const noteItem = (page, title) => page.locator('#list li', { has: page.locator(`h3.title:text-is("${title}")`) });

// Press Save in an open editor whose note another window saved meanwhile, and wait for the
// conflict's choice. With live updates the choice may already be there (Save is then hidden).
async function saveOrChoice(editor) {
  const conflict = editor.locator('.conflict');
  if (await conflict.isHidden()) {
    await editor.locator('button.save').click({ timeout: 3000 }).catch(async (err) => {
      if (await conflict.isHidden()) throw err;
    });
  }
  await editor.locator('.conflict:visible').waitFor();
  assert.ok(await editor.locator('button.save').isHidden(), 'no Save while the choice is open');
}

async function titles(page) {
  return page.locator('#list li h3.title').allTextContents();
}

// ---- flows ---------------------------------------------------------------------------------------

const flows = {
  // Sign up, the session survives a reload, log out ends it, log in again, log out.
  async auth(browser) {
    const page = await newPage(browser, 'main');
    const user = { name: 'Ada', email: `ada-${unique()}@example.com`, password: 'correct horse battery' };
    const creates = [];
    page.on('request', (req) => req.method() === 'POST' && /\/v1\/account$/.test(req.url()) && creates.push(req.url()));
    // The first paint says it is loading while the session is looked up.
    const stopBoot = await slowDown(page, 'GET', /\/v1\/account$/);
    await page.goto(DEMO_URL);
    await page.waitForSelector('#boot:text("Loading…")');
    await page.waitForSelector('body[data-ready="true"]');
    await stopBoot();
    assert.ok(await page.isHidden('#boot'));
    await page.waitForSelector('body[data-view="auth"]');
    assert.ok(await page.isHidden('#live'), 'no live pill when signed out');
    await shot(page, 'login');
    await expectAccessible(page, 'log-in form');

    // Wrong password: a sentence for people, dismissible.
    const formTop = () => page.evaluate(() => document.querySelector('#auth').getBoundingClientRect().top);
    const top = await formTop();
    await page.fill('#email', user.email);
    await page.fill('#password', 'not the password');
    await page.click('#auth-submit');
    assert.match(await errorText(page), /don’t match/);
    assert.equal(await formTop(), top, 'the banner does not push the page down');
    await shot(page, 'login-error');
    await expectAccessible(page, 'log-in form with an error');
    await page.click('#error-close');
    await page.waitForSelector('#error', { state: 'hidden' });

    // An error goes away when switching between log in and sign up.
    await page.click('#auth-submit');
    await errorText(page);
    await page.click('#auth-toggle');
    await page.waitForSelector('#error', { state: 'hidden' });

    // The sign-up form states the project's password rule, and a common password is refused.
    assert.equal(await page.textContent('#auth-title'), 'Create an account');
    assert.match(await page.textContent('#password-hint'), /At least 8 characters.*common password/);
    await page.fill('#name', user.name);
    await page.fill('#password', 'password');
    await page.click('#auth-submit');
    assert.match(await errorText(page), /too common/);
    await shot(page, 'signup-error');
    await expectAccessible(page, 'sign-up form with an error');

    // While the sign-up runs its button is disabled and says so (no double submit).
    const stop = await slowDown(page, 'POST', /\/v1\/account$/);
    await page.fill('#password', user.password);
    await page.click('#auth-submit');
    await page.waitForSelector('#auth-submit:disabled');
    assert.equal(await page.textContent('#auth-submit'), 'Creating account…');
    assert.ok(await page.isDisabled('#email'), 'the form is locked while it is sent');
    await loggedIn(page, user.email);
    await stop();
    assert.equal(creates.length, 2, `one sign-up request per submit (the common password, then this): ${creates}`);
    assert.ok(await page.isVisible('#live'), 'the live pill shows once signed in');
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
    const first = `Trip to Lisbon ${run}`;
    const second = `Groceries ${run}`;
    await addNote(page, first, 'Tram 28 up to the castle, then pastéis de nata');
    await page.waitForFunction(() => document.activeElement?.id === 'note-title');  // ready for the next note

    // While "Add note" runs, its button is disabled and says so.
    const stop = await slowDown(page, 'POST', /\/rows$/);
    await page.fill('#note-title', second);
    await page.fill('#note-body', 'Milk, eggs, bread');
    await page.click('#note-add');
    await page.waitForSelector('#note-add:disabled');
    assert.equal(await page.textContent('#note-add'), 'Adding…');
    await page.waitForSelector(`#list li:has(h3.title:text-is("${second}"))`);
    await stop();
    assert.ok(await page.isEnabled('#note-add'));

    // The list says it is loading while it loads.
    const stopList = await slowDown(page, 'GET', /\/rows(\?|$)/);
    await page.reload();
    await page.waitForSelector('#list-status.loading:text("Loading your notes…")');
    await page.waitForSelector('body[data-ready="true"]');
    await stopList();
    const listed = await titles(page);
    assert.ok(listed.indexOf(second) !== -1 && listed.indexOf(second) < listed.indexOf(first), `newest first: ${listed}`);
    assert.match(await noteItem(page, first).locator('.meta').textContent(), /^Created /);

    // Search as people expect: any case, titles and bodies, every word; and say when nothing matches.
    const shows = (expected) => page.waitForFunction((want) => {
      const shown = [...document.querySelectorAll('#list h3.title')].map((e) => e.textContent);
      return want.every((t) => shown.includes(t.title) === t.shown);
    }, expected);
    await page.fill('#search', `lisbon ${run}`);
    await shows([{ title: first, shown: true }, { title: second, shown: false }]);
    await page.fill('#search', `EGGS ${run}`);
    await shows([{ title: first, shown: false }, { title: second, shown: true }]);
    await page.fill('#search', `castle ${run.toUpperCase()}`);
    await shows([{ title: first, shown: true }, { title: second, shown: false }]);
    // Inside words and without accents: "bon" is in "Lisbon", "PASTEIS" is "pastéis".
    await page.fill('#search', `bon ${run}`);
    await shows([{ title: first, shown: true }, { title: second, shown: false }]);
    await page.fill('#search', `PASTEIS ${run}`);
    await shows([{ title: first, shown: true }, { title: second, shown: false }]);
    await page.fill('#search', `gs brea ${run.slice(2)}`);
    await shows([{ title: first, shown: false }, { title: second, shown: true }]);
    await page.fill('#search', `zebra ${run}`);
    await page.waitForSelector(`#list-status:text-is("No notes match “zebra ${run}”.")`);
    assert.equal(await page.locator('#list li').count(), 0);
    await page.fill('#search', '');
    await page.waitForSelector(`#list li:has(h3.title:text-is("${first}"))`);
    await shot(page, 'list');
    await expectAccessible(page, 'notes list');

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
    assert.match(await noteItem(page, edited).locator('.meta').textContent(), /^Created .* · Edited /);

    // Delete offers Undo for a few seconds.
    await noteItem(page, edited).locator('button.delete').click();
    await noteItem(page, edited).waitFor({ state: 'detached' });
    assert.match(await page.textContent('#toast-text'), /Deleted/);
    await shot(page, 'undo');
    await expectAccessible(page, 'notes list with the undo toast');
    await page.click('#toast-undo');
    await noteItem(page, edited).waitFor();
    await reload(page);
    await noteItem(page, edited).waitFor();

    // Deleting by keyboard keeps the focus in the list: on the next note's Edit button.
    await noteItem(page, second).locator('button.delete').focus();
    await page.keyboard.press('Enter');
    await noteItem(page, second).waitFor({ state: 'detached' });
    const focused = await page.evaluate(() => ({
      edit: document.activeElement?.classList.contains('edit'),
      note: document.activeElement?.closest('li')?.querySelector('h3.title')?.textContent,
    }));
    assert.deepEqual(focused, { edit: true, note: edited }, 'the focus moved to the next note');
    await page.click('#toast-close');
    await page.waitForSelector('body[data-pending-deletes="0"]');
    await deleteNote(page, edited);
    await reload(page);
    const after = await titles(page);
    assert.ok(!after.includes(edited) && !after.includes(second), `deleted notes stay deleted: ${after}`);
    await logOut(page);
  },

  // Attach a 12 MiB file (chunked upload with progress), download it back, preview an image,
  // replace a file after confirming.
  async files(browser) {
    const page = await newPage(browser, 'main');
    await open(page);
    await logIn(page, { email: env.USER_EMAIL, password: env.USER_PASSWORD });
    const run = unique();

    const bigTitle = `big ${run}`;
    await addNote(page, bigTitle);
    const big = randomBytes(12 * 1024 * 1024 + 12345);
    assert.equal(await noteItem(page, bigTitle).locator('.attach-text').textContent(), 'Attach file');
    await noteItem(page, bigTitle).locator('input.file').setInputFiles({ name: 'data.bin', mimeType: 'application/octet-stream', buffer: big });
    await noteItem(page, bigTitle).locator('.upload-text:text("Uploading data.bin")').waitFor();
    await page.waitForSelector(`#list li:has(h3.title:text-is("${bigTitle}")) .attachment:not([hidden]) a.download`, { timeout: 60_000 });
    await expectNoError(page);
    const link = noteItem(page, bigTitle).locator('a.download');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.equal(download.suggestedFilename(), 'data.bin');
    const got = readFileSync(await download.path());
    assert.equal(got.length, big.length, 'downloaded size');
    assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(big).digest('hex'), 'downloaded bytes');

    // "Attach file" by keyboard: Tab from Edit reaches it, Space opens the file picker.
    const picTitle = `picture ${run}`;
    await addNote(page, picTitle);
    await noteItem(page, picTitle).locator('button.edit').focus();
    await page.keyboard.press('Tab');
    assert.ok(await page.evaluate(() => document.activeElement?.matches('input.file')), '"Attach file" takes the focus');
    // On a loaded host the first Space has been seen to open no picker (no 'filechooser' event in
    // 15 s, the input still focused): press it again, up to three times, on the focused input.
    let chooser = null;
    for (let attempt = 1; !chooser; attempt++) {
      const waiting = page.waitForEvent('filechooser', { timeout: 5_000 })
        .catch((err) => { if (attempt >= 3) throw err; return null; });
      await page.keyboard.press('Space');
      chooser = await waiting;
      if (!chooser) await noteItem(page, picTitle).locator('input.file').focus();
    }
    await chooser.setFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png(40, 30) });
    const img = noteItem(page, picTitle).locator('img.preview');
    await img.waitFor({ state: 'visible', timeout: 30_000 });
    await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());

    await shot(page, 'attachments');
    await expectAccessible(page, 'notes with attachments');

    // A second file replaces the first only after "Replace"; the chunked upload reported
    // progress per chunk (three: 5 MiB, 5 MiB, the rest), and the bar goes when it is done.
    await reload(page);
    const item = noteItem(page, bigTitle);
    assert.equal(await item.locator('.attach-text').textContent(), 'Replace file');
    await item.locator('input.file').setInputFiles({ name: 'again.bin', mimeType: 'application/octet-stream', buffer: big });
    assert.match(await item.locator('.replace-text').textContent(), /Replace “data.bin” with “again.bin”\?/);
    await item.locator('button.replace-no').click();
    await item.locator('.replace').waitFor({ state: 'hidden' });
    await item.locator('input.file').setInputFiles({ name: 'again.bin', mimeType: 'application/octet-stream', buffer: big });
    await item.locator('button.replace-yes').click();
    await page.waitForSelector(`#list li:has(h3.title:text-is("${bigTitle}")) a.download:text("again.bin")`, { timeout: 60_000 });
    // The link can come first (the row's realtime event re-renders the note while the answer to
    // the row update is on its way); the bar goes, and the count is kept, once that answer came.
    await item.locator('.upload').waitFor({ state: 'hidden', timeout: 10_000 });
    assert.ok(Number(await item.getAttribute('data-upload-events')) >= 3, 'onProgress called per chunk');
    await expectNoError(page);

    for (const title of [bigTitle, picTitle]) await deleteNote(page, title);
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
    await deleteNote(a, title);
    await noteItem(b, title).waitFor({ state: 'detached', timeout: 10_000 });
    await logOut(a);
    await logOut(b);
  },

  // Two windows edit the same note: the later save sees the conflict and lets its user choose.
  async conflict(browser) {
    const creds = { email: env.USER_EMAIL, password: env.USER_PASSWORD };
    const a = await newPage(browser, 'window-a');
    const b = await newPage(browser, 'window-b');
    await open(a);
    await logIn(a, creds);
    await open(b);
    await logIn(b, creds);
    const title = `Shared ${unique()}`;
    await addNote(a, title, 'first version');
    await reload(b);
    await noteItem(b, title).waitFor();

    // Keep mine: A started editing before B saved; A's save asks, then overwrites.
    await noteItem(a, title).locator('button.edit').click();
    await noteItem(a, title).locator('.edit-body').fill('from window A');
    const theirs = `${title} (B)`;
    await noteItem(b, title).locator('button.edit').click();
    await noteItem(b, title).locator('.edit-title').fill(theirs);
    await noteItem(b, title).locator('.edit-body').fill('from window B');
    await noteItem(b, title).locator('button.save').click();
    await b.waitForSelector(`#list li:has(h3.title:text-is("${theirs}"))`);
    // A's list follows B's save (realtime) or not (no socket): A's editor is still open either way.
    const editorA = a.locator('#list li form.editor:visible');
    await saveOrChoice(editorA);
    assert.match(await editorA.locator('.conflict-text').textContent(), /changed in another window/);
    assert.match(await editorA.locator('.conflict-theirs').textContent(), /from window B/);
    assert.equal(await editorA.locator('.edit-body').inputValue(), 'from window A', 'the draft is kept');
    await shot(a, 'conflict');
    await expectAccessible(a, 'edit conflict');
    await editorA.locator('button.keep-mine').click();
    await a.waitForSelector(`#list li:has(p.body:text-is("from window A"))`);
    await expectNoError(a);
    await reload(b);
    await b.waitForSelector(`#list li:has(p.body:text-is("from window A"))`);

    // Take theirs: the draft goes, the other window's version shows.
    const current = (await a.locator('#list li:has(p.body:text-is("from window A")) h3.title').textContent());
    await noteItem(a, current).locator('button.edit').click();
    await noteItem(a, current).locator('.edit-body').fill('A again');
    await noteItem(b, current).locator('button.edit').click();
    await noteItem(b, current).locator('.edit-body').fill('B wins');
    await noteItem(b, current).locator('button.save').click();
    await b.waitForSelector(`#list li:has(p.body:text-is("B wins"))`);
    const editor = a.locator('#list li form.editor:visible');
    await saveOrChoice(editor);
    await editor.locator('button.take-theirs').click();
    await a.waitForSelector(`#list li:has(p.body:text-is("B wins"))`);
    assert.equal(await a.locator('#list li form.editor:visible').count(), 0, 'the editor closed');
    await reload(a);
    await a.waitForSelector(`#list li:has(p.body:text-is("B wins"))`);
    await deleteNote(a, current);
    await logOut(a);
    await logOut(b);
  },

  // More notes than a page: "Load more" fetches the next page after the last one (a cursor).
  async paging(browser) {
    const page = await newPage(browser, 'main');
    const url = new URL(DEMO_URL);
    url.searchParams.set('pageSize', '3');
    await page.goto(url.toString());
    await page.waitForSelector('body[data-ready="true"]');
    await logIn(page, { email: env.USER_EMAIL, password: env.USER_PASSWORD });
    const run = unique();
    const made = [];
    for (let i = 1; i <= 4; i++) {
      made.push(`Page note ${i} ${run}`);
      await addNote(page, made[made.length - 1]);
    }
    await page.fill('#search', run);
    await page.waitForSelector('#count:text-is("3+ found")');
    assert.deepEqual(await titles(page), made.slice(1).reverse(), 'the newest three first');
    assert.ok(await page.isVisible('#more'), '"Load more" shows while a page was full');
    await expectAccessible(page, 'list with load more');
    await page.click('#more');
    await page.waitForSelector('#count:text-is("4 found")');
    assert.deepEqual(await titles(page), made.slice().reverse());
    assert.ok(await page.isHidden('#more'), 'no "Load more" after the last page');
    assert.equal(await page.evaluate(() => document.activeElement?.closest('li')?.querySelector('h3')?.textContent), made[0],
      'the focus moves to the first note loaded');
    await shot(page, 'load-more');
    await logOut(page);
  },

  // The main screens at 1280x800 and on a 390x844 phone: nothing wider than the screen, the
  // header on one line with "Log out" inside it. Keeps the screenshots (screens/).
  async layout(browser) {
    const creds = { email: env.USER_EMAIL, password: env.USER_PASSWORD };
    const desk = await newPage(browser, 'desktop');
    await open(desk);
    await logIn(desk, creds);
    // Plain titles (this flow's project is fresh): these screenshots show the demo in docs.
    const notes = [
      ['Groceries', 'Milk, eggs, bread, two lemons'],
      ['Trip to Lisbon', 'Tram 28 up to the castle, then pastéis de nata in Belém.'],
    ];
    for (const [title, body] of notes) await addNote(desk, title, body);
    const lisbon = 'Trip to Lisbon';
    await noteItem(desk, lisbon).locator('input.file').setInputFiles({ name: 'lisbon.png', mimeType: 'image/png', buffer: png(480, 200, seaside(480, 200)) });
    const img = noteItem(desk, lisbon).locator('img.preview');
    await img.waitFor({ state: 'visible', timeout: 30_000 });
    await desk.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());
    await desk.waitForSelector('#live[data-state="on"], #live[data-state="unavailable"]');
    await expectNoSideways(desk, 'desktop');
    await shot(desk, 'notes-desktop');

    const phone = await newPage(browser, 'phone', PHONE);
    await open(phone);
    await expectNoSideways(phone, 'phone log-in');
    await shot(phone, 'login-phone');
    await expectAccessible(phone, 'phone log-in');
    await logIn(phone, creds);
    await noteItem(phone, lisbon).locator('img.preview').waitFor({ state: 'visible', timeout: 30_000 });
    await expectNoSideways(phone, 'phone notes');
    const box = (sel) => phone.locator(sel).boundingBox();
    const [logout, who, pill, title] = await Promise.all(['#logout', '#who', '#live', '.bar h1'].map(box));
    assert.ok(logout.x + logout.width <= PHONE.width, `"Log out" ends at ${logout.x + logout.width} px`);
    for (const [name, b] of [['user', who], ['live pill', pill], ['log out', logout]]) {
      assert.ok(Math.abs((b.y + b.height / 2) - (title.y + title.height / 2)) < 6, `${name} is on the title's line`);
    }
    // The notes open the page: the first one starts above the fold (the settings come after the list).
    const firstNote = await phone.locator('#list li').first().boundingBox();
    assert.ok(firstNote.y < PHONE.height - 60, `the first note starts at ${firstNote.y} px on a ${PHONE.height} px phone`);
    const firstDesk = await desk.locator('#list li').first().boundingBox();
    assert.ok(firstDesk.y < DESKTOP.height - 100, `the first note starts at ${firstDesk.y} px at 1280x800`);
    assert.ok((await box('#security')).y > firstNote.y, 'account settings come after the notes');
    await shot(phone, 'notes-phone');
    await expectAccessible(phone, 'phone notes');

    // An error floats below the header, also when the page is scrolled; the header stays on top.
    const fail = (route) => route.abort('connectionrefused');
    await phone.route(/\/rows(\?|$)/, fail);
    await phone.evaluate(() => window.scrollTo(0, 400));
    await phone.fill('#search', 'anything');
    await phone.waitForSelector('#error:not([hidden])');
    const [banner, header] = await Promise.all(['#error', 'header.bar'].map(box));
    assert.ok(banner.y >= header.y + header.height, `the error (top ${banner.y}) is below the header (bottom ${header.y + header.height})`);
    assert.ok(header.y >= 0 && header.y < 2, `the header stays in view when scrolled (top ${header.y})`);
    await shot(phone, 'error-phone');
    await phone.unroute(/\/rows(\?|$)/, fail);
    await phone.click('#error-close');
    await phone.fill('#search', '');
    await phone.evaluate(() => window.scrollTo(0, 0));
    await shot(phone, 'notes-phone-full', true);

    for (const [title] of notes) await deleteNote(desk, title);
    await logOut(desk);
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
    // The server is up but gave this origin no CORS grant: the page says so, not "can't reach".
    const refusedText = await errorText(page);
    assert.match(refusedText, /refuses this page’s address/);
    assert.match(refusedText, new RegExp(`createproject ${project} --origin http://127\\.0\\.0\\.1:\\d+ --exists-ok`));
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

// A sun over the sea, as pixel colours for png().
function seaside(w, h) {
  const horizon = h * 0.62;
  return (x, y) => {
    if (Math.hypot(x - w * 0.72, y - h * 0.4) < h * 0.14) return [255, 210, 110];
    if (y < horizon) {
      const t = y / horizon;
      return [Math.round(110 + 130 * t), Math.round(170 + 60 * t), 240];
    }
    const t = (y - horizon) / (h - horizon);
    const wave = Math.sin(x / 9 + y / 3) > 0.92 ? 40 : 0;
    return [Math.round(20 + 20 * t + wave), Math.round(100 - 30 * t + wave), Math.round(165 - 45 * t + wave)];
  };
}

// A small RGB PNG (w x h; ``pixel(x, y)`` gives [r, g, b]), built here so the test ships no
// binary file.
function png(w, h, pixel = (x, y) => [253, (x * 6) % 256, (y * 8) % 256]) {
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
    for (let x = 0; x < w; x++) row.set(pixel(x, y), 1 + x * 3);
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
