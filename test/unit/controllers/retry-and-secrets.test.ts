// The retry annotation as status records it, and attribute Secrets: the label that has them
// watched, and the keyed digest that notices a change without keeping or showing the values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_OBSERVED_RETRY, ServiceStatus } from '../../../src/api/index.js';
import { setupServices } from '../../../src/controllers/service/index.js';
import { EventRecorder } from '../../../src/domain/event-recorder.js';
import { observedRetry, retryRequested, retryValue } from '../../../src/domain/lifecycle.js';
import { ATTRIBUTES_SECRET_LABEL, RETRY_ANNOTATION } from '../../../src/domain/names.js';
import {
  DIGEST_KEY_SECRET,
  readLabelledSecret,
  SecretDigester,
} from '../../../src/domain/services/secrets.js';
import {
  Informer,
  type Kube,
  KubeApiError,
  type KubeObject,
  metadataOnly,
  ResourceClient,
} from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/log.js';

const object = (annotation: string | undefined, observed?: string): KubeObject => ({
  apiVersion: 'platform.nrn.dev/v1alpha1',
  kind: 'Scope',
  metadata: {
    name: 's',
    namespace: 'n',
    ...(annotation !== undefined ? { annotations: { [RETRY_ANNOTATION]: annotation } } : {}),
  },
  status: observed !== undefined ? { observedRetry: observed } : {},
});

describe('retry annotation', () => {
  it('is requested only while its value differs from the one recorded', () => {
    expect(retryRequested(object(undefined))).toBeUndefined();
    expect(retryRequested(object('1'))).toBe('1');
    expect(retryRequested(object('1', '1'))).toBeUndefined();
    expect(retryRequested(object('2', '1'))).toBe('2');
    // Removing the annotation asks nothing, and leaves the record as it was.
    expect(retryRequested(object(undefined, '1'))).toBeUndefined();
    expect(observedRetry(object(undefined, '1'))).toEqual({ observedRetry: '1' });
    expect(observedRetry(object('2', '1'))).toEqual({ observedRetry: '2' });
    expect(observedRetry(object(undefined))).toEqual({});
  });

  it('a value too long for status is recorded as its digest, still compared exactly', () => {
    const long = 'x'.repeat(MAX_OBSERVED_RETRY + 1);
    const recorded = retryValue(object(long));
    expect(recorded).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(retryRequested(object(long, recorded))).toBeUndefined();
    expect(retryRequested(object(`${long}y`, recorded))).toBeDefined();
    expect(retryValue(object('x'.repeat(MAX_OBSERVED_RETRY)))).toHaveLength(MAX_OBSERVED_RETRY);
  });
});

/** A cluster of Secrets in memory: get, create (409 when taken), merge patch of labels. */
function fakeKube(options: { refusePatch?: boolean } = {}) {
  const secrets = new Map<string, KubeObject>();
  const calls: string[] = [];
  let version = 1;
  const keyOf = (ref: { namespace?: string; name?: string }) => `${ref.namespace}/${ref.name}`;
  const client = {
    async get(ref: { namespace: string; name: string }) {
      calls.push(`get ${keyOf(ref)}`);
      const found = secrets.get(keyOf(ref));
      if (found === undefined) throw new KubeApiError(404, 'NotFound', 'not found');
      return structuredClone(found);
    },
    async create(input: KubeObject) {
      calls.push(`create ${keyOf(input.metadata)}`);
      if (secrets.has(keyOf(input.metadata))) {
        throw new KubeApiError(409, 'AlreadyExists', 'exists');
      }
      const created = {
        ...input,
        metadata: { ...input.metadata, uid: `uid-${version}`, resourceVersion: String(version++) },
      };
      secrets.set(keyOf(input.metadata), created);
      return structuredClone(created);
    },
    async patch(
      ref: { namespace: string; name: string },
      patch: { metadata: { labels: Record<string, string> } },
    ) {
      calls.push(`patch ${keyOf(ref)}`);
      if (options.refusePatch) throw new KubeApiError(403, 'Forbidden', 'no patch for you');
      const found = secrets.get(keyOf(ref));
      if (found === undefined) throw new KubeApiError(404, 'NotFound', 'not found');
      found.metadata.labels = { ...found.metadata.labels, ...patch.metadata.labels };
      found.metadata.resourceVersion = String(version++);
      return structuredClone(found);
    },
  };
  const kube = { resource: () => client } as unknown as Pick<Kube, 'resource'>;
  const put = (namespace: string, name: string, data: Record<string, string>) =>
    client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      data: Object.fromEntries(
        Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
      ),
    });
  return { kube, secrets, calls, put };
}

describe('attribute secrets', () => {
  it('are labelled once when read, and read as their decoded values with their version', async () => {
    const { kube, calls, put } = fakeKube();
    await put('team', 'creds', { password: 'hunter2' });
    const first = await readLabelledSecret(kube, 'team', 'creds', ATTRIBUTES_SECRET_LABEL);
    expect(first).toMatchObject({ values: { password: 'hunter2' }, labelled: true });
    expect(calls).toEqual(['create team/creds', 'get team/creds', 'patch team/creds']);
    const second = await readLabelledSecret(kube, 'team', 'creds', ATTRIBUTES_SECRET_LABEL);
    // Labelled already: a read alone, and the version the patch left.
    expect(calls.slice(3)).toEqual(['get team/creds']);
    expect(second?.version).toBe(first?.version);
    expect(await readLabelledSecret(kube, 'team', 'none', ATTRIBUTES_SECRET_LABEL)).toBe(undefined);
  });

  it('a label the operator may not put on still gives the values, saying so', async () => {
    const { kube, put } = fakeKube({ refusePatch: true });
    await put('team', 'creds', { password: 'hunter2' });
    const read = await readLabelledSecret(kube, 'team', 'creds', ATTRIBUTES_SECRET_LABEL);
    expect(read).toMatchObject({ values: { password: 'hunter2' }, labelled: false });
  });

  it('digests are keyed, order-blind, value-sensitive, and never hold a value', async () => {
    const { kube, secrets } = fakeKube();
    const digester = new SecretDigester(kube, 'nrn-system');
    const a = await digester.digest({ user: 'app', password: 'hunter2' });
    expect(a).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(ServiceStatus.safeParse({ secretAttributesHash: a }).success).toBe(true);
    expect(a).not.toContain('hunter2');
    expect(await digester.digest({ password: 'hunter2', user: 'app' })).toBe(a);
    expect(await digester.digest({ user: 'app', password: 'hunter3' })).not.toBe(a);
    // Keys and values cannot trade places to collide.
    expect(await digester.digest({ ab: 'c' })).not.toBe(await digester.digest({ a: 'bc' }));
    // The key is the operator's: made once, in its namespace; another key, other digests.
    expect(secrets.has(`nrn-system/${DIGEST_KEY_SECRET}`)).toBe(true);
    const other = new SecretDigester(fakeKube().kube, 'nrn-system');
    expect(await other.digest({ user: 'app', password: 'hunter2' })).not.toBe(a);
  });

  it('replicas share the key, whoever made it first', async () => {
    const { kube, calls } = fakeKube();
    const one = new SecretDigester(kube, 'nrn-system');
    const two = new SecretDigester(kube, 'nrn-system');
    const values = { password: 'pw' };
    const [a, b] = await Promise.all([one.digest(values), two.digest(values)]);
    expect(a).toBe(b);
    // Each process loads the key once.
    await one.digest(values);
    expect(calls.filter((c) => c.startsWith('create')).length).toBeLessThanOrEqual(2);
    expect(calls.filter((c) => c.startsWith('get')).length).toBeLessThanOrEqual(4);
  });

  it('a key edited into something short is refused, and looked at again next time', async () => {
    const { kube, secrets, put } = fakeKube();
    await put('nrn-system', DIGEST_KEY_SECRET, { key: 'short' });
    const digester = new SecretDigester(kube, 'nrn-system');
    await expect(digester.digest({ a: 'b' })).rejects.toThrow(/32-byte "key"/);
    secrets.delete(`nrn-system/${DIGEST_KEY_SECRET}`);
    await expect(digester.digest({ a: 'b' })).resolves.toMatch(/^hmac-sha256:/);
  });

  it('any two different contents digest differently', async () => {
    const digester = new SecretDigester(fakeKube().kube, 'nrn-system');
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), fc.string()),
        fc.dictionary(fc.string(), fc.string()),
        async (a, b) => {
          const same =
            JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
          expect((await digester.digest(a)) === (await digester.digest(b))).toBe(same);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('the attribute Secret watch', () => {
  it('selects labelled Secrets only, caches their metadata only, and maps them to services', async () => {
    const log = silentLogger();
    const made: { kind: string; options: Record<string, unknown>; informer: Informer }[] = [];
    const transport = {} as ConstructorParameters<typeof ResourceClient>[0];
    const kube = {
      resource: (type: ConstructorParameters<typeof ResourceClient>[1]) =>
        new ResourceClient(transport, type),
      informer: (
        type: ConstructorParameters<typeof ResourceClient>[1],
        options: Record<string, unknown> = {},
      ) => {
        const informer = new Informer(new ResourceClient(transport, type), { log, ...options });
        made.push({ kind: type.kind, options, informer });
        return informer;
      },
    } as unknown as Kube;
    const wired = setupServices({
      kube,
      log,
      events: new EventRecorder(kube, 'test', 'test', log),
      namespace: 'nrn-system',
      baseDomain: 'nrn.local',
      informerOptions: {},
    });
    const secrets = made.find((m) => m.kind === 'Secret');
    const services = made.find((m) => m.kind === 'Service')?.informer;
    const controller = wired.controllers.find((c) => c.name === 'services');
    if (secrets === undefined || services === undefined || controller === undefined) {
      throw new Error('the service controllers are not wired as expected');
    }
    expect(secrets.options).toMatchObject({
      labelSelector: `${ATTRIBUTES_SECRET_LABEL}=true`,
      transform: metadataOnly,
    });
    // Metrics count our kinds, not Secrets.
    expect(wired.caches).toHaveLength(2);

    // A Secret event wakes the services that name that Secret, and only those.
    const service = (name: string, secret?: string) => ({
      apiVersion: 'platform.nrn.dev/v1alpha1',
      kind: 'Service',
      metadata: { name, namespace: 'team', resourceVersion: '1' },
      spec: {
        specification_id: '0b6f3a52-5a8e-4c41-9a57-2d3c4b5a6f70',
        ...(secret !== undefined ? { secret_attributes_ref: { name: secret } } : {}),
      },
    });
    services.cache.upsert(service('a', 'creds'));
    services.cache.upsert(service('b', 'other'));
    services.cache.upsert(service('c'));
    const queued: string[] = [];
    controller.enqueue = (key: string) => void queued.push(key);
    // As the informer would on a watch event (emit is how it tells its listeners).
    const informer = secrets.informer as unknown as { emit(event: string, object: unknown): void };
    informer.emit('add', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'team', resourceVersion: '5' },
    });
    expect(queued).toEqual(['team/a']);
  });
});
