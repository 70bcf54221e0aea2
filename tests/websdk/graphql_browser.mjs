// The GraphQL page (graphql.html) in Chromium: open it, wait for what it writes into #out, and
// print that with the names of the cookies the browser keeps.
// Usage: node graphql_browser.mjs <page url> <chromium path> <screenshot path>
import { chromium } from 'playwright-core';

const [pageUrl, executablePath, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage();
const console_ = [];
page.on('console', (msg) => console_.push(`${msg.type()}: ${msg.text()}`));
try {
  await page.goto(pageUrl);
  await page.waitForFunction(() => document.getElementById('out')?.textContent, null, { timeout: 30000 });
  const shown = JSON.parse(await page.textContent('#out'));
  const cookies = (await page.context().cookies()).map((c) => c.name);
  if (shown.result !== 'done' && screenshot) await page.screenshot({ path: screenshot }).catch(() => {});
  console.log(JSON.stringify({ ...shown, cookies, console: console_ }));
} catch (err) {
  if (screenshot) await page.screenshot({ path: screenshot }).catch(() => {});
  console.log(JSON.stringify({ result: 'crash', message: String(err), url: page.url(), console: console_ }));
} finally {
  await browser.close();
}
