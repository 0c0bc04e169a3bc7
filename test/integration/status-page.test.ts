// The status page in a real browser: Debian's headless chromium, driven by playwright-core,
// against `nrn-operator local` (control plane, operator and facade in one process, as a user
// runs it). The page is opened, signed in to from the keyboard, and watched while kubectl
// creates a scope that waits for its application (pending), then gets it (active), and a scope
// whose class cannot render for it (failed): each change arrives over GET /watch without a
// reload, the failure is listed first with its reason, and its detail shows the condition. No
// console error and no CSP violation is allowed on the way. A screenshot is kept in artifacts/.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applicationYaml, namespaceYaml, scopeYaml } from '../support/manifests.js';
import { startLocalProcess, terminate } from '../support/operator-processes.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ARTIFACTS = join(ROOT, 'artifacts');
/** How long the page has to show a change the operator makes (generous: a shared CI box). */
const SHOWN_MS = 60_000;

function findChromium(): string | undefined {
  const named = process.env.CHROMIUM_PATH;
  if (named !== undefined && existsSync(named)) return named;
  try {
    const found = execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
    return found === '' ? undefined : found;
  } catch {
    return undefined;
  }
}

const CHROMIUM = findChromium();
if (CHROMIUM === undefined) {
  console.error(
    'status-page.test.ts: skipped: no chromium found (apt-get install chromium, or set CHROMIUM_PATH)',
  );
}

describe.skipIf(CHROMIUM === undefined)('status page in headless chromium', () => {
  let dir: string;
  let local: ChildProcess | undefined;
  let kubeconfig: string;
  let facade: string;
  let token: string;
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];
  const ns = `ui-${process.pid}`;
  const appId = 4200 + (process.pid % 700);

  const kubectl = (args: readonly string[], stdin?: string): Promise<string> =>
    new Promise((done, fail) => {
      const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      child.once('exit', (code) =>
        code === 0 ? done(out) : fail(new Error(`kubectl ${args.join(' ')}: ${err}`)),
      );
      child.stdin.end(stdin ?? '');
    });
  const apply = (yaml: string) => kubectl(['apply', '-f', '-'], yaml);

  /** The list's row of a resource, once it shows this text. */
  const rowShowing = async (kind: string, name: string, text: string | RegExp) => {
    const row = page.locator(`#list-body tr[data-key="${kind}/${ns}/${name}"]`).filter({
      hasText: text,
    });
    await row.waitFor({ timeout: SHOWN_MS });
    return row;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nrn-status-page-'));
    const started = await startLocalProcess(dir, ['--facade-port', '0']);
    local = started.child;
    kubeconfig = started.kubeconfigPath;
    const ready = started.lines.find((l) => l.includes('ready:')) ?? '';
    facade = /facade at (http:\/\/\S+)/.exec(ready)?.[1] ?? '';
    token = /facade token \(kept in \S+\): (\S+)/.exec(started.lines.join('\n'))?.[1] ?? '';
    if (facade === '' || token === '') throw new Error(`no facade or token in:\n${ready}`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // A container's root user has no user namespaces for chromium's sandbox.
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // Injected by the driver, not the page, so the CSP that it reports on does not stop it.
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) =>
        console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));`,
    });
    await kubectl(['apply', '-f', '-'], namespaceYaml(ns));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (local !== undefined) await terminate(local);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('asks for the token, and keeps it in the session only', async () => {
    await page.goto(`${facade}/ui`);
    const form = page.getByRole('region', { name: 'Sign in' });
    await form.waitFor();
    // The form has focus: signed in from the keyboard alone.
    await page.keyboard.type('not-the-token');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'The token was refused.' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    await page.getByLabel('Token').focus();
    await page.keyboard.type(token);
    await page.keyboard.press('Enter');
    await page.locator('#connection').filter({ hasText: 'Live' }).waitFor({ timeout: SHOWN_MS });
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([token]);
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(page.url()).not.toContain(token);
    // Marks this document: still there at the end means no reload happened.
    await page.evaluate('window.nrnTestMark = 1');
  }, 150_000);

  it('shows a scope go pending → active live', async () => {
    await apply(scopeYaml(ns, 'web', appId));
    // No application with its id yet: the operator waits for it.
    await rowShowing('scope', 'web', /pending/);
    await apply(applicationYaml(ns, 'shop', appId));
    const row = await rowShowing('scope', 'web', /active/);
    // Its NRN is under its application's.
    expect(await row.locator('td').nth(4).textContent()).toMatch(
      new RegExp(`^organization=1:account=2:namespace=3:application=${appId}:scope=\\d+$`),
    );
    await page
      .locator('#tree-body')
      .getByRole('button', { name: 'application shop' })
      .waitFor({ timeout: SHOWN_MS });
  }, 150_000);

  it('shows a failure first, with its reason, and its detail', async () => {
    await apply(`
apiVersion: platform.nrn.dev/v1alpha1
kind: ScopeClass
metadata: {name: regional-${ns}}
spec:
  scope_type: web_pool
  match: {labels: {regional: "${ns}"}}
  resources:
    - name: region
      manifest:
        apiVersion: v1
        kind: Service
        metadata: {name: web, annotations: {region: "\${scope.dimensions.region}"}}
        spec: {ports: [{port: 80}]}
`);
    await kubectl(['wait', '--for=condition=Ready', '--timeout=60s', `scopeclass/regional-${ns}`]);
    await apply(
      scopeYaml(ns, 'nowhere', appId).replace(
        'metadata: {name: nowhere,',
        `metadata: {labels: {regional: "${ns}"}, name: nowhere,`,
      ),
    );
    const row = await rowShowing('scope', 'nowhere', /failed/);
    expect(await row.textContent()).toContain('RenderFailed');
    expect(await page.locator('#list-body tr').first().getAttribute('data-key')).toBe(
      `scope/${ns}/nowhere`,
    );
    await page
      .locator('#counts')
      .filter({ hasText: /1 failed/ })
      .waitFor({ timeout: SHOWN_MS });

    await row.getByRole('link').click();
    const detail = page.getByRole('region', { name: 'scope nowhere' });
    await detail.waitFor();
    const conditions = detail.getByRole('table', { name: 'Conditions' });
    await conditions
      .getByRole('row')
      .filter({ hasText: 'Stalled' })
      .filter({ hasText: 'RenderFailed' })
      .waitFor();
    expect(await detail.textContent()).toContain(
      'spec.resources[0].manifest.metadata.annotations.region',
    );
    expect(decodeURIComponent(page.url())).toContain(`detail=scope/${ns}/nowhere`);
  }, 150_000);

  it('filters by status through the URL hash, without the token', async () => {
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply' }).click();
    // (Not waitForFunction: its polling evaluates a string, which the page's CSP refuses.)
    await page
      .locator(`#list-body tr[data-key="scope/${ns}/web"]`)
      .waitFor({ state: 'detached', timeout: SHOWN_MS });
    expect(await page.locator('#list-body tr').count()).toBe(1);
    expect(await page.locator('#list-body tr').first().getAttribute('data-key')).toBe(
      `scope/${ns}/nowhere`,
    );
    expect(page.url()).toContain('status=failed');
    expect(page.url()).not.toContain(token);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.getByLabel('Status').selectOption('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await rowShowing('scope', 'web', /active/);
    const shot = join(ARTIFACTS, 'status-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.error(`status-page.test.ts: screenshot kept in ${shot}`);
  }, 150_000);

  it('reflows at 200% zoom, and is reached from the keyboard', async () => {
    // 200% zoom of a 1280 px window lays the page out in 640 CSS pixels.
    await page.setViewportSize({ width: 640, height: 900 });
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(
      true,
    );
    await page.setViewportSize({ width: 1280, height: 900 });
    // The skip link comes first in the focus order, and following it lands on the list.
    expect(
      await page.evaluate(
        `document.querySelector('a[href], button:not([hidden]), input, select').textContent`,
      ),
    ).toBe('Skip to the resources');
    await page.getByRole('link', { name: 'Skip to the resources' }).focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('resources-heading');
    // Every control is named.
    for (const id of ['f-nrn', 'f-kind', 'f-type', 'f-status', 'f-q']) {
      expect(await page.locator(`label[for="${id}"]`).count(), id).toBe(1);
    }
    expect(await page.locator('#counts').getAttribute('aria-live')).toBe('polite');
  }, 150_000);

  it('never reloaded, and logged no console error or CSP violation', async () => {
    expect(await page.evaluate('window.nrnTestMark')).toBe(1);
    // The refused token's 401 is the one error the browser itself logs, by design.
    expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
  });

  it('a 401 brings the form back', async () => {
    await page.evaluate("sessionStorage.setItem('nrn-status-token', 'revoked-token')");
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('region', { name: 'Sign in' }).waitFor({ timeout: SHOWN_MS });
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  }, 150_000);
});
