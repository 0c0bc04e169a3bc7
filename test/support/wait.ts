// Helpers the operator tests share: read an object until a check holds, and record the
// lifecycle values an informer sees.
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface WithStatus {
  status?: object;
}

/**
 * Reads until `check` holds and returns what it read, appending each new lifecycle value
 * (`status.status`) to `seen` on the way; throws with the last status after `timeoutMs`.
 */
export async function readUntil<T extends WithStatus>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  {
    seen = [],
    timeoutMs = 15_000,
    intervalMs = 25,
  }: { seen?: string[]; timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    const phase = (value.status as { status?: unknown } | undefined)?.status;
    if (typeof phase === 'string' && seen.at(-1) !== phase) seen.push(phase);
    if (check(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`${what} not as expected: ${JSON.stringify(value.status)}`);
    }
    await sleep(intervalMs);
  }
}

/**
 * Reads a list until it has at least `count` items (or `timeoutMs` passed) and returns the
 * last read: for what is written in the background, such as Events.
 */
export async function untilCount<T>(
  read: () => Promise<T[]>,
  count: number,
  timeoutMs = 5_000,
): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = await read();
    if (items.length >= count || Date.now() > deadline) return items;
    await sleep(25);
  }
}

/** Waits until `check` holds; throws after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not so after ${timeoutMs} ms: ${check}`);
    await sleep(25);
  }
}

/**
 * Every lifecycle value (`status.status`) the objects of this informer take, in order, as its
 * watch sees them: each write is an event, so no value can slip between two reads.
 */
export function lifecycle(informer: {
  on(event: 'add' | 'update', listener: (o: { status?: unknown }) => void): unknown;
}): string[] {
  const seen: string[] = [];
  const record = (o: { status?: unknown }) => {
    const value = (o.status as { status?: unknown } | undefined)?.status;
    if (typeof value === 'string' && value !== seen.at(-1)) seen.push(value);
  };
  informer.on('add', record);
  informer.on('update', record);
  return seen;
}
