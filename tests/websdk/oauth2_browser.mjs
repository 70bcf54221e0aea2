// The OAuth2 browser flow in Chromium: open the test page (oauth2.html), click "Sign in with
// OpenID" (web SDK 27 createOAuth2Session), sign in at the provider's login form as <login>
// (or press Cancel when <login> is "--cancel"), and print what the page shows on its return.
// Usage: node oauth2_browser.mjs <page url> <login|--cancel> <chromium path> <screenshot path>
import { chromium } from 'playwright-core';

const [pageUrl, login, executablePath, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage();
const console_ = [];
page.on('console', (msg) => console_.push(`${msg.type()}: ${msg.text()}`));
try {
  await page.goto(pageUrl);
  await page.click('#signin-openid');
  await page.waitForSelector('#login', { timeout: 30000 });
  if (login === '--cancel') {
    await page.click('#cancel');
  } else {
    await page.fill('#login', login);
    await page.click('#signin');
  }
  await page.waitForFunction(() => document.getElementById('out')?.textContent, null, { timeout: 30000 });
  const shown = JSON.parse(await page.textContent('#out'));
  const cookies = (await page.context().cookies()).map((c) => c.name);
  console.log(JSON.stringify({ ...shown, url: page.url(), cookies }));
} catch (err) {
  if (screenshot) await page.screenshot({ path: screenshot }).catch(() => {});
  console.log(JSON.stringify({ result: 'crash', message: String(err), url: page.url(), console: console_ }));
} finally {
  await browser.close();
}
