// The Django admin in Chromium (playwright-core), as an operator uses it. One JSON argument:
//   {base, username, password, chromium, artifacts, pages: [{name, path}], tablePath, columnKeys,
//    key: {project, name, scopes}, blockEmail, homeShot, axePages: [{name, path}], rows, projectPath,
//    operator, forms: {schema, mfa, smtp, template, switches}, deletes: {tablePath, column, userPath,
//    projectPath}}
// Signs in at /admin/login/, opens each page at 1280 px (status, horizontal overflow of the page
// and of the change list's table, thumbnails), edits a row, adds a user, a team member and a
// file; fills and submits the operator forms (a table with its permissions, a column, an index,
// a column's edit; a user's MFA reset; a project's SMTP and a test mail, a mail template, its
// service and protocol switches) by typing and clicking, checking each page with axe-core; deletes
// a column, a user and a project on their confirmation pages (input.deletes); adds an API key ticking
// scope checkboxes and reads its secret (and presses Copy), blocks a user with the change list's
// action, and saves a screenshot of each page under <artifacts> and of the home page at <homeShot>.
// Prints one JSON line: {pages: [...], columns: {...}, secret, copied, blockMessage, forms: {...}, ...}.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { expectAccessible } from '../../examples/web-notes/e2e/axe.mjs';

const input = JSON.parse(process.argv[2]);
const shot = (name) => join(input.artifacts, `${name}.png`);
mkdirSync(input.artifacts, { recursive: true });
const browser = await chromium.launch({ executablePath: input.chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu'] });
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: input.base });
const page = await context.newPage();
page.setDefaultTimeout(15000);
const out = { pages: [], columns: {}, ms: {} };
// Milliseconds each part took (out.ms), to see where the run's time goes.
let mark = Date.now();
const lap = (name) => { const now = Date.now(); out.ms[name] = now - mark; mark = now; };
const errors = [];
// Serious or critical axe-core violations, by screen (the test expects none).
out.axe = [];
const axe = async (screen) => {
  try { await expectAccessible(page, screen); } catch (err) { out.axe.push(String(err.message || err)); }
};
page.on('pageerror', (err) => errors.push(String(err)));
// Click what submits a form (or follows a link) and wait for the page that answers: the redirect's
// target after a POST, even when it is the same URL.
const submit = (selector) => Promise.all([page.waitForNavigation(), page.click(selector)]);
const message = async () => (await page.textContent('.messagelist')).replace(/\s+/g, ' ').trim();

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

  lap('signin');
  for (const { name, path } of input.pages) {
    const response = await page.goto(input.base + path);
    await page.waitForLoadState('networkidle');
    out.pages.push({ name, path, status: response.status(), ...(await measure()) });
    await page.screenshot({ path: shot(name), fullPage: true });
  }

  lap('pages');
  // Pages checked with axe-core only (the usage page, and operator pages the forms below do not submit).
  out.axeChecked = [];
  for (const { name, path } of input.axePages || []) {
    const response = await page.goto(input.base + path);
    await page.waitForLoadState('networkidle');
    if (response.status() !== 200) errors.push(`${name}: status ${response.status()}`);
    await axe(name);
    out.axeChecked.push(name);
    await page.screenshot({ path: shot(name), fullPage: true });
  }

  lap('axePages');
  // Each column key of the table page: how often it is visible (innerText skips hidden copies).
  await page.goto(input.base + input.tablePath);
  const text = await page.locator('#content-main').innerText();
  for (const key of input.columnKeys) {
    out.columns[key] = text.split(/\s+/).filter((word) => word === key).length;
  }

  // Rows as the table's columns, searched by a value, edited in a typed form.
  if (input.rows) {
    await page.goto(input.base + input.rows.listPath);
    out.rowHeaders = await page.$$eval('#result_list thead th', (ths) => ths.map((th) => th.innerText.trim()).filter(Boolean));
    await axe('rows-of-table');
    await page.fill('#searchbar', input.rows.search);
    // The answer's page, not the one the search was typed on ($$eval does not wait for it).
    await Promise.all([page.waitForURL((url) => url.searchParams.get('q') === input.rows.search),
      page.press('#searchbar', 'Enter')]);
    out.rowsFound = await page.$$eval('#result_list tbody th a, #result_list tbody td.field-uid a',
      (links) => links.map((a) => a.innerText.trim()));
    await page.goto(input.base + input.rows.changePath);
    await axe('row-form');
    out.priceType = await page.$eval('#id_col__price', (el) => el.type);
    await page.fill('#id_col__price', '7.5');
    await page.fill('#id_col__title', input.rows.newTitle);
    await page.screenshot({ path: shot('row-form'), fullPage: true });
    await Promise.all([page.waitForLoadState('load'), page.click('input[name="_save"]')]);
    out.rowSaved = (await page.textContent('.messagelist')).trim();
  }

  // The project's settings: phone sign-in says what it needs; no session-alerts switch.
  if (input.projectPath) {
    await page.goto(input.base + input.projectPath);
    out.phoneLabel = (await page.textContent('label[for="id_auth_phone"]')).trim();
    out.sessionAlerts = await page.locator('#id_auth_session_alerts').count();
    await axe('project');
  }

  lap('rowsAndProject');
  // Operator pages: add a user from the users' list; upload a file to a bucket and download it.
  if (input.operator) {
    const op = input.operator;
    await page.goto(`${input.base}/admin/accounts/user/`);
    await Promise.all([page.waitForLoadState('load'), page.click('.object-tools a.addlink')]);
    await page.selectOption('#id_project', { value: String(op.projectPk) });
    await page.fill('#id_email', op.email);
    await page.fill('#id_password', op.password);
    await page.fill('#id_name', 'Added in the admin');
    await axe('operator-add-user');
    await page.screenshot({ path: shot('operator-add-user'), fullPage: true });
    await Promise.all([page.waitForLoadState('load'), page.click('input[type="submit"][value="Add user"]')]);
    out.userAdded = (await page.textContent('.messagelist')).trim();
    await page.goto(input.base + op.bucketPath);
    await Promise.all([page.waitForLoadState('load'), page.click('#upload-file')]);
    await page.setInputFiles('#id_file', { name: 'from-admin.txt', mimeType: 'text/plain', buffer: Buffer.from(op.fileText) });
    await axe('operator-upload');
    await Promise.all([page.waitForLoadState('load'), page.click('input[type="submit"][value="Upload"]')]);
    out.uploaded = (await page.textContent('.messagelist')).trim();
    out.fileUrl = page.url();
    await page.goto(input.base + op.teamPath);
    await Promise.all([page.waitForLoadState('load'), page.click('#add-member')]);
    await page.fill('#id_user', op.email);
    await page.fill('#id_roles', 'editor');
    await axe('operator-add-member');
    await Promise.all([page.waitForLoadState('load'), page.click('input[type="submit"][value="Add member"]')]);
    out.memberAdded = (await page.textContent('.messagelist')).trim();
    await page.goto(out.fileUrl);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-file')]);
    const stream = await download.createReadStream();
    const parts = [];
    for await (const part of stream) parts.push(part);
    out.downloaded = { name: download.suggestedFilename(), text: Buffer.concat(parts).toString('utf8') };
  }

  lap('operator');
  // The operator forms, filled in and submitted as an operator does; each answer's message is
  // kept, and the Python test reads the results back through the API.
  if (input.forms) {
    const f = input.forms;
    const done = {};
    out.forms = done;
    // A table in the seeded database, its permissions, a column, an index, the column edited.
    const s = f.schema;
    await page.goto(input.base + s.databasePath);
    await submit('#add-table');
    await page.fill('#id_table_id', s.table.id);
    await page.fill('#id_name', s.table.name);
    await page.fill('#id_permissions', s.table.permissions);
    await axe('operator-add-table');
    await submit('input[type="submit"][value="Add table"]');
    done.tableAdded = await message();
    await submit('#edit-permissions');
    await page.fill('#id_permissions', s.permissions);
    await page.check('#id_row_security');
    await axe('operator-table-permissions');
    await submit('input[type="submit"][value="Save"]');
    done.permissionsSaved = await message();
    await submit('#add-column');
    await page.fill('#id_key', s.column.key);
    await page.selectOption('#id_kind', s.column.kind);
    await page.fill('#id_min', s.column.min);
    await page.fill('#id_max', s.column.max);
    await page.fill('#id_default', s.column.default);
    await axe('operator-add-column');
    await page.screenshot({ path: shot('operator-add-column'), fullPage: true });
    await submit('input[type="submit"][value="Add column"]');
    done.columnAdded = await message();
    await submit('#add-index');
    await page.fill('#id_key', s.index.key);
    await page.selectOption('#id_type', s.index.type);
    await page.fill('#id_columns', s.index.columns);
    await page.fill('#id_orders', s.index.orders);
    await axe('operator-add-index');
    await submit('input[type="submit"][value="Add index"]');
    done.indexAdded = await message();
    done.tableText = (await page.locator('#content-main').innerText()).replace(/\s+/g, ' ');
    await submit(`a[aria-label="Edit or delete column ${s.column.key}"]`);
    await page.fill('#id_max', s.edit.max);
    await page.fill('#id_default', s.edit.default);
    await axe('operator-edit-column');
    await submit('input[type="submit"][value="Save"]');
    done.columnSaved = await message();

    // A user who lost their authenticator: remove it, turn MFA off, new recovery codes.
    await page.goto(input.base + f.mfa.userPath);
    await submit('#user-mfa');
    await axe('operator-user-mfa');
    await page.screenshot({ path: shot('operator-user-mfa'), fullPage: true });
    await submit('#remove-totp');
    done.totpRemoved = await message();
    await submit('#mfa-off');
    done.mfaOff = await message();
    await submit('#regenerate-codes');
    done.recoveryCodes = await page.$$eval('#recovery-codes code', (codes) => codes.map((c) => c.textContent.trim()));
    done.mfaStatus = (await page.textContent('#mfa-status')).replace(/\s+/g, ' ').trim();
    lap('formsSchemaMfa');

    // The project's SMTP server and one mail template.
    await page.goto(input.base + input.projectPath);
    await submit('#project-smtp');
    await page.check('#id_enabled');
    await page.fill('#id_sender_name', f.smtp.senderName);
    await page.fill('#id_sender_email', f.smtp.senderEmail);
    await page.fill('#id_host', f.smtp.host);
    await page.fill('#id_port', String(f.smtp.port));
    await page.fill('#id_username', f.smtp.username);
    await page.fill('#id_password', f.smtp.password);
    await page.selectOption('#id_secure', { value: f.smtp.secure });
    await axe('operator-project-smtp');
    await submit('input[type="submit"][value="Save"]');
    done.smtpSaved = await message();
    // A test mail through the server just saved (the Python test reads it from that server).
    await submit('#smtp-test');
    await page.fill('#id_emails', f.smtp.testTo);
    await axe('operator-smtp-test');
    await submit('input[type="submit"][value="Send test mail"]');
    done.smtpTest = await message();
    await page.goto(input.base + input.projectPath);
    await submit('#project-templates');
    await page.selectOption('#id_template', f.template.id);
    await page.fill('#id_locale', f.template.locale);
    await submit('input[type="submit"][value="Show"]');
    done.templateEditing = (await page.textContent('#editing')).trim();
    await page.fill('#id_subject', f.template.subject);
    await page.fill('#id_message', f.template.message);
    await page.fill('#id_sender_name', f.template.senderName);
    await axe('operator-mail-templates');
    await page.screenshot({ path: shot('operator-mail-templates'), fullPage: true });
    await submit('input[type="submit"][value="Save template"]');
    done.templateSaved = await message();

    // The project's service and protocol switches, on its page.
    await page.goto(input.base + input.projectPath);
    done.switched = [];
    for (const id of f.switches) {
      await submit(`#${id}`);
      done.switched.push(await message());
    }
    await axe('project-switches');
    await page.locator('#project-switches').screenshot({ path: shot('project-switches') });
    done.switchesOff = await page.$$eval('#project-switches tr.switch-off', (rows) => rows.map((r) => r.dataset.switch));
  }

  lap('formsProject');
  // Deletes, each confirmed on its page as an operator does: a column on its operator page, then
  // a user and a project on Django's delete confirmation (which lists what goes with them).
  if (input.deletes) {
    const d = input.deletes;
    const done = {};
    out.deletes = done;
    const content = async () => (await page.locator('#content').innerText()).replace(/\s+/g, ' ');
    await page.goto(input.base + d.tablePath);
    await submit(`a[aria-label="Edit or delete column ${d.column}"]`);
    await submit('#delete-column');
    done.columnAsk = await content();
    await axe('operator-delete-column');
    await submit('input[type="submit"][value="Delete column"]');
    done.columnDeleted = await message();
    for (const what of ['user', 'project']) {
      await page.goto(input.base + d[`${what}Path`]);
      await submit('a.deletelink');
      done[`${what}Ask`] = await content();
      await axe(`delete-${what}`);
      await page.screenshot({ path: shot(`delete-${what}`), fullPage: true });
      await submit('#content form input[type="submit"]');
      done[`${what}Deleted`] = await message();
    }
  }

  lap('deletes');
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

  // The home page: the health box with the worker's row and the queues.
  await page.goto(`${input.base}/admin/`);
  await page.waitForLoadState('networkidle');
  out.worker = (await page.textContent('#health-worker')).replace(/\s+/g, ' ').trim();
  out.queues = await page.$$eval('#queue-health tbody tr', (rows) => rows.map((row) => row.dataset.queue));
  await axe('home');
  // docs/admin.md's picture: the page from its top down to the first list of models, the Usage
  // link above it (the health tables push it below an 800 px window).
  const homeHeight = await page.evaluate(() => {
    const first = document.querySelector('#content-main .module[class*="app-"]');
    return Math.ceil(first.getBoundingClientRect().bottom + window.scrollY + 24);
  });
  await page.screenshot({ path: input.homeShot, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: homeHeight } });
  lap('keyBlockHome');
  out.errors = errors;
  console.log(JSON.stringify(out));
} catch (err) {
  await page.screenshot({ path: shot('failure'), fullPage: true }).catch(() => {});
  console.log(JSON.stringify({ crash: String(err), url: page.url(), errors, ...out }));
  process.exitCode = 1;
} finally {
  await browser.close();
}
