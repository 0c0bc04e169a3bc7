// A change goes on the wire as bytes built once and shared by every watcher sending the same
// (as Tables too, which `kubectl get -w` asks for), rather than serialised again per watcher.
import { describe, expect, it } from 'vitest';
import { BUILTIN_TYPES } from '../../../src/local/registry.js';
import type { ResourceType } from '../../../src/local/resource-type.js';
import { ChangeEvent } from '../../../src/local/watch.js';
import { WatchEncoder } from '../../../src/local/watch-encoding.js';

const CONFIGMAPS = BUILTIN_TYPES.find((t) => t.kind === 'ConfigMap') as ResourceType;
const SCOPES_V1: ResourceType = {
  ...CONFIGMAPS,
  group: 'platform.nrn.dev',
  version: 'v1',
  resource: 'scopes',
  kind: 'Scope',
  custom: true,
  printerColumns: [{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
};
const SCOPES_V2: ResourceType = { ...SCOPES_V1, version: 'v2' };

/** A change that counts how many lines it had to build. */
class CountingEvent extends ChangeEvent {
  builds = 0;

  override encoded(key: string, build: () => string): Buffer {
    return super.encoded(key, () => {
      this.builds++;
      return build();
    });
  }
}

function change(type: ResourceType, revision: number, name = 'a'): CountingEvent {
  const object = {
    apiVersion: type.group === '' ? type.version : `${type.group}/${type.version}`,
    kind: type.kind,
    metadata: { name, namespace: 'default', resourceVersion: String(revision) },
    status: { phase: 'Ready' },
  };
  return new CountingEvent(
    revision,
    'MODIFIED',
    `${type.group || 'core'}/${type.resource}`,
    'default',
    name,
    object.apiVersion,
    JSON.stringify(object),
  );
}

const parse = (line: Buffer) => JSON.parse(line.toString()) as Record<string, any>;

describe('WatchEncoder', () => {
  it('builds a change’s Table line once for a hundred watchers, with headers on each one’s first event only', () => {
    const watchers = Array.from({ length: 100 }, () => new WatchEncoder(SCOPES_V1, 'Metadata'));
    const first = change(SCOPES_V1, 10);
    const lines = watchers.map((w) => w.change('MODIFIED', first));
    expect(first.builds).toBe(1);
    for (const line of lines) expect(line).toBe(lines[0]);
    const table = parse(lines[0] as Buffer);
    expect(table.type).toBe('MODIFIED');
    expect(table.object.kind).toBe('Table');
    expect(table.object.metadata.resourceVersion).toBe('10');
    expect(table.object.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Phase',
    ]);
    expect(table.object.rows[0].cells).toEqual(['a', 'Ready']);
    expect(table.object.rows[0].object.kind).toBe('PartialObjectMetadata');

    const second = change(SCOPES_V1, 11);
    const next = watchers.map((w) => w.change('MODIFIED', second));
    expect(second.builds).toBe(1);
    for (const line of next) expect(line).toBe(next[0]);
    expect(parse(next[0] as Buffer).object.columnDefinitions).toEqual([]);
  });

  it('keeps apart what differs: headers, event type, includeObject, version', () => {
    const event = change(SCOPES_V1, 12);
    const old = new WatchEncoder(SCOPES_V1, 'Metadata');
    old.change('MODIFIED', change(SCOPES_V1, 11));
    const withoutHeaders = old.change('MODIFIED', event);
    const withHeaders = new WatchEncoder(SCOPES_V1, 'Metadata').change('MODIFIED', event);
    const added = new WatchEncoder(SCOPES_V1, 'Metadata').change('ADDED', event);
    const whole = new WatchEncoder(SCOPES_V1, 'Object').change('MODIFIED', event);
    const v2 = new WatchEncoder(SCOPES_V2, 'Object').change('MODIFIED', event);
    expect(new Set([withoutHeaders, withHeaders, added, whole, v2]).size).toBe(5);
    expect(event.builds).toBe(5);
    expect(parse(added).type).toBe('ADDED');
    expect(parse(whole).object.rows[0].object.apiVersion).toBe('platform.nrn.dev/v1');
    expect(parse(v2).object.rows[0].object.apiVersion).toBe('platform.nrn.dev/v2');
    // The shared parse of the change is left as it was.
    expect(event.object().apiVersion).toBe('platform.nrn.dev/v1');
  });

  it('shares the plain line, and the reshaped one of another version', () => {
    const event = change(SCOPES_V1, 13);
    const same = Array.from({ length: 10 }, () =>
      new WatchEncoder(SCOPES_V1, undefined).change('MODIFIED', event),
    );
    for (const line of same) expect(line).toBe(event.line('MODIFIED'));
    const other = Array.from({ length: 10 }, () =>
      new WatchEncoder(SCOPES_V2, undefined).change('MODIFIED', event),
    );
    for (const line of other) expect(line).toBe(other[0]);
    expect(event.builds).toBe(1);
    expect(parse(other[0] as Buffer).object.apiVersion).toBe('platform.nrn.dev/v2');
  });
});
