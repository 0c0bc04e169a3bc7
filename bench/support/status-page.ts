// The facade benchmark's status page phase: the page (/ui, its own code unmodified) opened in
// Debian's headless chromium through playwright-core, signed in with the bench's token, and
// measured in the browser — time to the first rows and counts, the main thread's long tasks
// while status changes flow, what the page received and applied, its JS heap — each beside
// what it is held against in the same run. Without chromium or playwright-core the phase is
// skipped with a printed reason: the page is not what the other figures depend on.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** What the page is held against: Chromium's long-task threshold, and one 60 Hz frame. */
export const LONG_TASK_MS = 50;
export const FRAME_MS = 1000 / 60;
/** How long the page may take to show the first rows with the whole catalog behind it. */
const SHOWN_TIMEOUT_MS = 180_000;

export interface PageFigures {
  /** Sign-in submitted → first page of rows, the tree and the counts in the DOM, next frame. */
  readonly firstRenderMs: number;
  /** The same calls the page makes first, from Node (median of 3): the render's floor. */
  readonly floorMs: number;
  /** The longest task that ended after the sign-in was submitted, up to the first render. */
  readonly firstRenderLongestTaskMs: number;
  readonly rows: number;
  readonly treeNodes: number;
  /** Over the churn window. */
  readonly longestTaskMs: number;
  readonly longTasks: number;
  readonly seconds: number;
  /** Status changes written during the window. */
  readonly changes: number;
  readonly watchBytes: number;
  readonly rowsReplaced: number;
  readonly refetches: number;
  readonly heapBeforeSignIn: number;
  readonly heapShown: number;
  readonly heapAfter: number;
}

export type PagePhase =
  | { readonly ran: true; readonly figures: PageFigures }
  | { readonly ran: false; readonly reason: string };

/**
 * Installed by the driver before the page's scripts run (so the page's CSP does not apply to
 * it): the long tasks, when the sign-in is submitted and when its data is first shown, and the
 * rows an event replaced in place. Nothing in the page itself changes.
 */
const PROBE = `(() => {
  const bench = { longTasks: [], submitAt: undefined, shownAt: undefined, rowsReplaced: 0 };
  window.__nrnBench = bench;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) bench.longTasks.push(entry);
  }).observe({ type: 'longtask', buffered: true });
  document.addEventListener('submit', (event) => {
    if (event.target && event.target.id === 'login-form') bench.submitAt = performance.now();
  }, true);
  const shown = () =>
    document.querySelector('#list-body tr') !== null &&
    document.querySelector('#tree-body li') !== null &&
    /Services:/.test(document.getElementById('counts')?.textContent ?? '');
  new MutationObserver((records) => {
    if (bench.submitAt !== undefined && bench.shownAt === undefined && shown()) {
      bench.shownAt = -1;
      requestAnimationFrame(() => { bench.shownAt = performance.now(); });
    }
    for (const r of records) {
      if (r.target.id === 'list-body' && r.addedNodes.length === 1 && r.removedNodes.length === 1) {
        bench.rowsReplaced++;
      }
    }
  }).observe(document, { subtree: true, childList: true });
})();`;

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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

/** The page's first data calls from Node, in parallel as the page makes them: their floor. */
async function floorOf(facadeUrl: string, token: string): Promise<number> {
  const headers = { authorization: `Bearer ${token}` };
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await Promise.all(
      ['/status/resources?limit=100', '/status/tree'].map(async (path) => {
        const res = await fetch(`${facadeUrl}${path}`, { headers });
        await res.text();
        if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      }),
    );
    times.push(performance.now() - started);
  }
  return median(times);
}

/**
 * Opens the status page at `facadeUrl`/ui, signs in with `token`, and measures it while
 * `churn()` writes status changes for `seconds` (its stop function is awaited at the end).
 */
export async function measureStatusPage(
  facadeUrl: string,
  token: string,
  seconds: number,
  churn: () => () => Promise<number>,
): Promise<PagePhase> {
  const executablePath = findChromium();
  if (executablePath === undefined) {
    return { ran: false, reason: 'no chromium found (apt-get install chromium, or CHROMIUM_PATH)' };
  }
  let chromium: typeof import('playwright-core').chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (error) {
    return { ran: false, reason: `playwright-core cannot be loaded: ${(error as Error).message}` };
  }
  let browser: import('playwright-core').Browser;
  try {
    browser = await chromium.launch({
      executablePath,
      // A container's root user has no user namespaces for chromium's sandbox.
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
  } catch (error) {
    return { ran: false, reason: `chromium did not start: ${(error as Error).message}` };
  }
  try {
    const floorMs = await floorOf(facadeUrl, token);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.addInitScript({ content: PROBE });
    const cdp = await page.context().newCDPSession(page);
    // The page's /watch bytes, as the network stack hands them to the page's reader.
    await cdp.send('Network.enable');
    const watchIds = new Set<string>();
    let watchBytes = 0;
    cdp.on('Network.requestWillBeSent', (e) => {
      if (new URL(e.request.url).pathname.endsWith('/watch')) watchIds.add(e.requestId);
    });
    cdp.on('Network.dataReceived', (e) => {
      if (watchIds.has(e.requestId)) watchBytes += e.dataLength;
    });
    let refetches = 0;
    let counting = false;
    page.on('request', (request) => {
      if (counting && /\/status\/(resources|tree)(\?|$)/.test(request.url())) refetches++;
    });
    const heap = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      return (await cdp.send('Runtime.getHeapUsage')).usedSize;
    };

    await page.goto(`${facadeUrl}/ui`);
    await page.getByRole('region', { name: 'Sign in' }).waitFor();
    const heapBeforeSignIn = await heap();
    await page.getByLabel('Token').fill(token);
    await page.getByLabel('Token').press('Enter');
    await page.locator('#list-body tr').first().waitFor({ timeout: SHOWN_TIMEOUT_MS });
    await page.locator('#tree-body li').first().waitFor({ timeout: SHOWN_TIMEOUT_MS });
    await page.locator('#counts').filter({ hasText: 'Services:' }).waitFor();
    await page.locator('#connection').filter({ hasText: 'Live' }).waitFor();
    // The probe stamps the frame after the data is in the DOM; one more frame makes sure it ran.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');
    const shown = (await page.evaluate(
      `(() => { const b = window.__nrnBench;
        const since = b.longTasks.filter((t) => t.startTime + t.duration >= b.submitAt);
        return { at: b.shownAt - b.submitAt, longest: Math.max(0, ...since.map((t) => t.duration)),
          rows: document.querySelectorAll('#list-body tr').length,
          nodes: document.querySelectorAll('#tree-body li').length }; })()`,
    )) as { at: number; longest: number; rows: number; nodes: number };
    const heapShown = await heap();

    // The window: long tasks and replaced rows counted afresh, status changes flowing.
    await page.evaluate(
      'window.__nrnBench.longTasks.length = 0; window.__nrnBench.rowsReplaced = 0',
    );
    watchBytes = 0;
    counting = true;
    const stop = churn();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const changes = await stop();
    // The last changes' frame and throttled refetch (REFETCH_MS in ui/app.js) land in the window.
    await new Promise((r) => setTimeout(r, 1500));
    counting = false;
    const flowing = (await page.evaluate(
      `(() => { const b = window.__nrnBench;
        return { longest: Math.max(0, ...b.longTasks.map((t) => t.duration)), count: b.longTasks.length,
          replaced: b.rowsReplaced }; })()`,
    )) as { longest: number; count: number; replaced: number };
    const heapAfter = await heap();
    return {
      ran: true,
      figures: {
        firstRenderMs: shown.at,
        floorMs,
        firstRenderLongestTaskMs: shown.longest,
        rows: shown.rows,
        treeNodes: shown.nodes,
        longestTaskMs: flowing.longest,
        longTasks: flowing.count,
        seconds,
        changes,
        watchBytes,
        rowsReplaced: flowing.replaced,
        refetches,
        heapBeforeSignIn,
        heapShown,
        heapAfter,
      },
    };
  } finally {
    await browser.close();
  }
}
