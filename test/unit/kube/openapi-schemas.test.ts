// The OpenAPI v3 document cache (ADR 0031), with a scripted transport: one request per
// group-version document, a kind found by its x-kubernetes-group-version-kind (only this
// group-version's), asked again when old or when a kind is missing from an older copy, and
// bounded in count.
import { describe, expect, it } from 'vitest';
import { OpenApiSchemas } from '../../../src/kube/openapi-schemas.js';
import type { RequestOptions } from '../../../src/kube/transport.js';

const documentOf = (group: string, version: string, kinds: string[]) => ({
  openapi: '3.0.0',
  components: {
    schemas: {
      'meta.DeleteOptions': {
        type: 'object',
        'x-kubernetes-group-version-kind': [
          { group: 'other', version: 'v9', kind: 'Widget' },
          { group, version, kind: 'DeleteOptions' },
        ],
      },
      ...Object.fromEntries(
        kinds.map((kind) => [
          `x.${kind}`,
          { type: 'object', 'x-kubernetes-group-version-kind': [{ group, version, kind }] },
        ]),
      ),
    },
  },
});

function scripted(kinds: () => string[]) {
  const paths: string[] = [];
  const transport = {
    async request<T>(options: RequestOptions): Promise<T> {
      paths.push(options.path);
      const [, , , api, ...rest] = options.path.split('/');
      const [group, version] = api === 'api' ? ['', rest[0] ?? ''] : [rest[0] ?? '', rest[1] ?? ''];
      return documentOf(group, version, kinds()) as T;
    },
  };
  return { transport, paths };
}

describe('OpenApiSchemas', () => {
  it('reads each document once, and finds a kind of its own group-version only', async () => {
    const script = scripted(() => ['ConfigMap']);
    const schemas = new OpenApiSchemas(script.transport, { now: () => 0 });
    const found = await schemas.kindSchema('', 'v1', 'ConfigMap');
    expect(found?.name).toBe('x.ConfigMap');
    expect(found?.components['meta.DeleteOptions']).toBeDefined();
    expect(await schemas.kindSchema('', 'v1', 'ConfigMap')).toBeDefined();
    expect(await schemas.kindSchema('', 'v1', 'Widget')).toBeUndefined();
    expect(script.paths).toEqual(['/openapi/v3/api/v1']);
  });

  it('asks again when a kind is missing from an older copy, or the copy is past its age', async () => {
    let kinds = ['A'];
    let now = 0;
    const script = scripted(() => kinds);
    const schemas = new OpenApiSchemas(script.transport, {
      now: () => now,
      missRefreshMs: 1_000,
      maxAgeMs: 10_000,
    });
    await schemas.kindSchema('example.test', 'v1', 'A');
    kinds = ['A', 'B'];
    expect(await schemas.kindSchema('example.test', 'v1', 'B')).toBeUndefined();
    now = 1_000;
    expect(await schemas.kindSchema('example.test', 'v1', 'B')).toBeDefined();
    now = 11_000;
    await schemas.kindSchema('example.test', 'v1', 'A');
    expect(script.paths).toHaveLength(3);
    expect(script.paths[0]).toBe('/openapi/v3/apis/example.test/v1');
  });

  it('keeps at most maxDocuments, the least recently used going first', async () => {
    const script = scripted(() => ['K']);
    const schemas = new OpenApiSchemas(script.transport, { now: () => 0, maxDocuments: 2 });
    for (const group of ['a', 'b', 'a', 'c', 'a', 'b']) await schemas.kindSchema(group, 'v1', 'K');
    expect(script.paths.map((p) => p.split('/')[4])).toEqual(['a', 'b', 'c', 'b']);
  });
});
