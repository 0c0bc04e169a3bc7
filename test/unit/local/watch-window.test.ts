// The watch window's bounds: it holds at most `capacity` events and at most `maxBytes` of them,
// dropping the oldest first; a watcher resuming from a revision no longer held is told to relist.
import { describe, expect, it } from 'vitest';
import { ChangeEvent, TooOldError, WatchHub } from '../../../src/local/watch.js';

const event = (revision: number, size: number) =>
  new ChangeEvent(
    revision,
    'MODIFIED',
    'core/configmaps',
    'default',
    'big',
    'v1',
    JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(size) } }),
    JSON.stringify({ metadata: { name: 'big' }, data: { a: 'y'.repeat(size) } }),
  );

const watcher = (seen: number[]) => ({
  resource: 'core/configmaps',
  namespace: undefined,
  deliver: (e: ChangeEvent) => {
    seen.push(e.revision);
    return true;
  },
});

describe('the watch window', () => {
  it('drops the oldest events once they would hold more than its byte budget', () => {
    const MiB = 1024 * 1024;
    const hub = new WatchHub(50_000, 0, 10 * MiB);
    // Each event holds about 3 MiB (its JSON twice, the previous version once).
    for (let rev = 1; rev <= 20; rev++) hub.publish(event(rev, MiB));
    expect(hub.window.events).toBe(3);
    expect(hub.window.bytes).toBeLessThanOrEqual(10 * MiB);
    expect(() => hub.subscribe(watcher([]), 5)).toThrow(TooOldError);
    const seen: number[] = [];
    hub.subscribe(watcher(seen), 17);
    expect(seen).toEqual([18, 19, 20]);
  });

  it('keeps one event however large, so a watcher at the head can still follow', () => {
    const hub = new WatchHub(50_000, 0, 1024);
    hub.publish(event(1, 10_000));
    hub.publish(event(2, 10_000));
    expect(hub.window.events).toBe(1);
    const seen: number[] = [];
    hub.subscribe(watcher(seen), 1);
    expect(seen).toEqual([2]);
  });

  it('still ends at its capacity in events', () => {
    const hub = new WatchHub(4, 0);
    for (let rev = 1; rev <= 10; rev++) hub.publish(event(rev, 10));
    expect(hub.window.events).toBe(4);
    expect(() => hub.subscribe(watcher([]), 5)).toThrow(TooOldError);
  });
});
