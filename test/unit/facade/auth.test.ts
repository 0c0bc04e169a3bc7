// The facade's authenticators on their own: the static token file, and the caching and
// bounds of the kubernetes mode around the two reviews (the cluster's part is covered in
// test/integration/facade-auth.test.ts against the local control plane).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  KubernetesAuthenticator,
  type ResourceAttributes,
  type ReviewClient,
  resourceAttributes,
  StaticAuthenticator,
  sha256Hex,
} from '../../../src/facade/auth.js';

describe('StaticAuthenticator', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const file = async (text: string) => {
    const dir = await mkdtemp(join(tmpdir(), 'nrn-tokens-'));
    dirs.push(dir);
    const path = join(dir, 'tokens.yaml');
    await writeFile(path, text);
    return path;
  };

  it('reads tokens in clear or hashed, each with its operations', async () => {
    const auth = await StaticAuthenticator.fromFile(
      await file(`tokens:
  - { name: ci, token: ci-token-0123456789, operations: [services:list] }
  - { name: ops, sha256: ${sha256Hex('ops-token-0123456789')}, operations: ['*'] }
`),
    );
    const ci = await auth.authenticate('ci-token-0123456789');
    const ops = await auth.authenticate('ops-token-0123456789');
    expect(ci?.username).toBe('ci');
    expect(ops?.username).toBe('ops');
    expect(await auth.authenticate('nope-0123456789abc')).toBeUndefined();
    expect(await auth.authenticate(undefined)).toBeUndefined();
    expect(await auth.authenticate('')).toBeUndefined();
    expect(await auth.authorize(ci as Caller, { operation: 'services:list' })).toBe(true);
    expect(await auth.authorize(ci as Caller, { operation: 'scopes:create' })).toBe(false);
    expect(await auth.authorize(ops as Caller, { operation: 'secrets:get', name: 'x' })).toBe(true);
    // A caller it did not make is allowed nothing.
    expect(await auth.authorize({ username: 'ci' }, { operation: 'services:list' })).toBe(false);
  });

  it('refuses a bad file, naming the problem', async () => {
    await expect(
      StaticAuthenticator.fromFile(
        await file('tokens:\n  - { name: x, token: short, operations: [fly] }\n'),
      ),
    ).rejects.toThrow(/token|operations/);
    await expect(
      StaticAuthenticator.fromFile(
        await file(
          `tokens:\n  - { name: x, token: long-enough-token-1234, sha256: ${sha256Hex('a')}, operations: ['*'] }\n`,
        ),
      ),
    ).rejects.toThrow(/exactly one of token and sha256/);
  });
});

describe('KubernetesAuthenticator', () => {
  // The reviews are the cluster's; here a table stands in to count the calls.
  class Reviews implements ReviewClient {
    tokenReviews = 0;
    accessReviews = 0;
    allowed = new Set<string>(['alice/services/list']);
    async tokenReview(token: string): Promise<Caller | undefined> {
      this.tokenReviews++;
      return token === 'alice-token' ? { username: 'alice', groups: ['dev'] } : undefined;
    }
    async subjectAccessReview(caller: Caller, a: ResourceAttributes): Promise<boolean> {
      this.accessReviews++;
      return this.allowed.has(`${caller.username}/${a.resource}/${a.verb}`);
    }
  }

  it('caches answers for the TTL, then asks again', async () => {
    let now = 0;
    const reviews = new Reviews();
    const auth = new KubernetesAuthenticator(reviews, { ttlMs: 1000, now: () => now });
    const alice = await auth.authenticate('alice-token');
    expect(alice?.username).toBe('alice');
    await auth.authenticate('alice-token');
    expect(reviews.tokenReviews).toBe(1);
    expect(await auth.authenticate('bad')).toBeUndefined();
    expect(await auth.authorize(alice as Caller, { operation: 'services:list' })).toBe(true);
    expect(await auth.authorize(alice as Caller, { operation: 'services:list' })).toBe(true);
    expect(await auth.authorize(alice as Caller, { operation: 'scopes:create' })).toBe(false);
    expect(reviews.accessReviews).toBe(2);
    now = 1001;
    await auth.authenticate('alice-token');
    await auth.authorize(alice as Caller, { operation: 'services:list' });
    expect(reviews.tokenReviews).toBe(3);
    expect(reviews.accessReviews).toBe(3);
  });

  it('keeps its caches bounded', async () => {
    const reviews = new Reviews();
    const auth = new KubernetesAuthenticator(reviews, { maxEntries: 3 });
    for (let i = 0; i < 10; i++) await auth.authenticate(`bad-${i}`);
    await auth.authenticate('bad-0');
    expect(reviews.tokenReviews).toBe(11);
  });

  it('checks each operation as the Kubernetes verb and resource it means', () => {
    expect(resourceAttributes({ operation: 'services:list' })).toEqual({
      group: 'platform.nrn.dev',
      resource: 'services',
      verb: 'list',
    });
    expect(resourceAttributes({ operation: 'scopes:create', namespace: 'a' })).toMatchObject({
      resource: 'scopes',
      verb: 'create',
      namespace: 'a',
    });
    expect(resourceAttributes({ operation: 'secrets:get', namespace: 'a', name: 's' })).toEqual({
      group: '',
      resource: 'secrets',
      verb: 'get',
      namespace: 'a',
      name: 's',
    });
  });
});
