// Boolean query parameters read as kube-apiserver reads them (apimachinery's
// Convert_Slice_string_To_bool): absent, `0` and `false` in any case are false, anything else
// is true. Python's client sends `watch=True` and `force=True`; before, those were lists and
// ignored forces. Raw HTTPS, because client libraries each spell one form.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../../src/local/index.js';
import { type RawApi, rawApi } from '../support/raw-api.js';

let plane: ControlPlane;
let dataDir: string;
let api: RawApi;

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nrn-bool-'));
  plane = await startControlPlane({ dataDir, fsync: false });
  api = rawApi(plane);
  const made = await api.call('POST', CONFIGMAPS, { metadata: { name: 'one' }, data: { a: '1' } });
  expect(made.status).toBe(201);
});
afterAll(async () => {
  await plane?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('watch=', () => {
  for (const value of ['true', 'True', 'TRUE', '1', 'yes', '']) {
    it(`watch=${value} is a watch`, async () => {
      const events = await api.watchEvents(
        `${CONFIGMAPS}?watch=${value}&resourceVersion=0&timeoutSeconds=2`,
        1,
      );
      expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'one' } } });
    });
  }
  for (const value of ['false', 'False', 'FALSE', '0']) {
    it(`watch=${value} is a list`, async () => {
      const answer = await api.call('GET', `${CONFIGMAPS}?watch=${value}`);
      expect(answer.status).toBe(200);
      expect(answer.json.kind).toBe('ConfigMapList');
    });
  }
});

describe('force= on server-side apply', () => {
  const apply = (manager: string, force: string | undefined, value: string) =>
    api.call(
      'PATCH',
      `${CONFIGMAPS}/applied?fieldManager=${manager}${force !== undefined ? `&force=${force}` : ''}`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { key: value } },
      { 'Content-Type': 'application/apply-patch+yaml' },
    );

  it('force=True takes a field another manager owns; force=False and none conflict', async () => {
    expect((await apply('first', undefined, 'a')).status).toBe(201);
    const unforced = await apply('second', undefined, 'b');
    expect(unforced.status).toBe(409);
    expect(unforced.json.reason).toBe('Conflict');
    expect((await apply('second', 'False', 'b')).status).toBe(409);
    const forced = await apply('second', 'True', 'b');
    expect(forced.status).toBe(200);
    expect(forced.json.data).toEqual({ key: 'b' });
  });
});
