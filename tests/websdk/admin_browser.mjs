// The Django admin in Chromium (playwright-core), as an operator uses it. One JSON argument:
//   {base, username, password, chromium, artifacts, pages: [{name, path}], tablePath, columnKeys,
//    key: {project, name, scopes}, blockEmail, homeShot}
// Signs in at /admin/login/, opens each page at 1280 px (status, horizontal overflow of the page
// and of the change list's table, thumbnails), adds an API key ticking scope checkboxes and
// reads its secret (and presses Copy), blocks a user with the change list's action, and saves a
// screenshot of each page under <artifacts> and of the home page at <homeShot>.
// Prints one JSON line: {pages: [...], columns: {...}, secret, copied, blockMessage}.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const input = JSON.parse(process.argv[2]);
const shot = (name) => join(input.artifacts, `${name}.png`);
mkdirSync(input.artifacts, { recursive: true });
const browser = await chromium.launch({ executablePath: input.chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu'] });
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: input.base });
const page = await context.newPage();
page.setDefaultTimeout(15000);
const out = { pages: [], columns: {} };
const errors = [];
page.on('pageerror', (err) => errors.push(String(err)));

// Widths that would clip: the document, and any change list table in its scrolling box.
const measure = () => page.evaluate(() => {
  const results = document.querySelector('#changelist .results');
  const images = [...document.querySelectorAll('img.thumbnail, img.preview')];
  return {
    title: document.title,
    docScroll: document.documentElement.scrollWidth, docClient: document.documentElement.clientWidth,
    resultsScroll: results ? results.scrollWidth : 0, resultsClient: results ? results.clientWidth : 0,
    images: images.length, imagesLoaded: images.filter((img) => img.complete && img.naturalWidth > 0).length,
  };
});

try {
  await page.goto(`${input.base}/admin/login/`);
  await page.fill('#id_username', input.username);
  await page.fill('#id_password', input.password);
  await Promise.all([page.waitForURL(`${input.base}/admin/`), page.click('input[type="submit"]')]);

  for (const { name, path } of input.pages) {
    const response = await page.goto(input.base + path);
    await page.waitForLoadState('networkidle');
    out.pages.push({ name, path, status: response.status(), ...(await measure()) });
    await page.screenshot({ path: shot(name), fullPage: true });
  }

  // Each column key of the table page: how often it is visible (innerText skips hidden copies).
  await page.goto(input.base + input.tablePath);
  const text = await page.locator('#content-main').innerText();
  for (const key of input.columnKeys) {
    out.columns[key] = text.split(/\s+/).filter((word) => word === key).length;
  }

  // A new API key: the scopes are checkboxes; the secret is shown once with a Copy button.
  await page.goto(`${input.base}/admin/projects/apikey/add/`);
  await page.selectOption('#id_project', { label: input.key.project });
  await page.fill('#id_name', input.key.name);
  for (const scope of input.key.scopes) await page.check(`input[name="scopes"][value="${scope}"]`);
  await page.screenshot({ path: shot('apikey-add'), fullPage: true });
  await Promise.all([page.waitForURL(/\/secret\/$/), page.click('input[name="_save"]')]);
  out.secret = (await page.textContent('#api-key-secret')).trim();
  await page.click('#copy-secret');
  await page.waitForFunction(() => document.getElementById('copy-status').textContent !== '');
  out.copyStatus = await page.textContent('#copy-status');
  out.copied = await page.evaluate(() => navigator.clipboard.readText());
  out.keyMessage = await page.textContent('.messagelist');
  await page.screenshot({ path: shot('apikey-secret'), fullPage: true });

  // Block a user from the users' change list.
  await page.goto(`${input.base}/admin/accounts/user/?q=${encodeURIComponent(input.blockEmail)}`);
  await page.check('input[name="_selected_action"]');
  await page.selectOption('select[name="action"]', 'block');
  await Promise.all([page.waitForLoadState('load'), page.click('button[name="index"]')]);
  out.blockMessage = await page.textContent('.messagelist');

  await page.goto(`${input.base}/admin/`);
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: input.homeShot });
  out.errors = errors;
  console.log(JSON.stringify(out));
} catch (err) {
  await page.screenshot({ path: shot('failure'), fullPage: true }).catch(() => {});
  console.log(JSON.stringify({ crash: String(err), url: page.url(), errors, ...out }));
  process.exitCode = 1;
} finally {
  await browser.close();
}
