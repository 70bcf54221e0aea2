// Accessibility check of the screen a page shows, with axe-core (a devDependency) injected into
// the page: no violation of impact "serious" or "critical" (WCAG 2 A and AA rules and axe's best
// practices). Colour contrast counts: the page's colours must reach 4.5:1 for text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// Evaluated through the DevTools protocol, not a <script> tag: the demo's own Content Security
// Policy (script-src 'self') would refuse an inline script, and should.
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Run axe on ``page`` and fail with the serious or critical violations of ``screen``. */
export async function expectAccessible(page, screen) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(`${AXE}\n;undefined`);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')} ${n.failureSummary || ''}`.replace(/\s+/g, ' ')).join(' | ')}`);
  });
  assert.deepEqual(violations, [], `${screen}: accessibility violations\n${violations.join('\n')}`);
}
