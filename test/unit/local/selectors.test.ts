import { describe, expect, it } from 'vitest';
import { parseFieldSelector, parseLabelSelector } from '../../../src/local/selectors.js';
import { ApiError, type KubeObject } from '../../../src/local/types.js';

/** The 400 a selector gets, or undefined when it parses. */
function refusal(
  parse: () => unknown,
): { code: number; reason: string; message: string } | undefined {
  try {
    parse();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const e = error as ApiError;
    return { code: e.code, reason: e.reason, message: e.message };
  }
}

describe('parseLabelSelector', () => {
  const web = { app: 'web', tier: 'frontend' };
  const db = { app: 'db', tier: '' };
  const bare = {};
  const counted = { count: '10' };

  it.each<[string, Record<string, string> | undefined, boolean]>([
    ['', undefined, true],
    ['', web, true],
    ['   ', web, true],
    ['app=web', web, true],
    ['app=web', db, false],
    ['app=web', bare, false],
    ['app==web', web, true],
    ['app!=web', web, false],
    ['app!=web', db, true],
    ['app!=web', bare, true],
    ['app!=web', undefined, true],
    ['app in (web,db)', db, true],
    ['app in (web, db)', web, true],
    ['app in (cache)', web, false],
    ['app in (cache)', bare, false],
    ['app notin (web)', web, false],
    ['app notin (web)', db, true],
    ['app notin (web)', bare, true],
    ['app', web, true],
    ['app', bare, false],
    ['!app', web, false],
    ['!app', bare, true],
    ['tier=', db, true],
    ['tier=', web, false],
    ['tier==', db, true],
    ['tier in (frontend,,backend)', db, true],
    ['tier in (,)', db, true],
    ['tier notin ()', db, false],
    ['tier notin ()', web, true],
    [' app = web , tier in ( frontend , backend ) ', web, true],
    ['\tapp\n=\rweb', web, true],
    ['app=web,tier=frontend', web, true],
    ['app=web,tier=backend', web, false],
    ['app=web,app=db', web, false],
    ['app,!missing', web, true],
    ['count>5', counted, true],
    ['count>10', counted, false],
    ['count<11', counted, true],
    ['count<5', counted, false],
    ['app>5', web, false],
    ['count>5', bare, false],
    // `in` and `notin` are only keywords where an operator is expected.
    ['in in (in,notin)', { in: 'notin' }, true],
    ['notin=in', { notin: 'in' }, true],
  ])('%j on %j → %s', (text, labels, expected) => {
    expect(parseLabelSelector(text)(labels)).toBe(expected);
  });

  it('takes keys with a DNS subdomain prefix', () => {
    const match = parseLabelSelector('app.kubernetes.io/name=nrn-operator,example.com/x');
    expect(match({ 'app.kubernetes.io/name': 'nrn-operator', 'example.com/x': '' })).toBe(true);
    expect(match({ 'app.kubernetes.io/name': 'nrn-operator' })).toBe(false);
  });

  it('takes keys and values at the length limits', () => {
    const key = `${'a'.repeat(253)}/${'b'.repeat(63)}`;
    const value = 'v'.repeat(63);
    expect(parseLabelSelector(`${key}=${value}`)({ [key]: value })).toBe(true);
  });

  const qualifiedName =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const labelValue =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  const subdomain =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

  it.each<[string, string]>([
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    ['a,,b', "found ',', expected: identifier after ','"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['a in x', "unable to parse requirement: found 'x' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a=(', "unable to parse requirement: found '(', expected: identifier"],
    [
      'a/b/c=d',
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ${qualifiedName} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
    ['-a=b', `unable to parse requirement: <nil>: Invalid value: "-a": name part ${qualifiedName}`],
    [
      '/a=b',
      'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty',
    ],
    [
      'a/=b',
      `unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; name part ${qualifiedName}`,
    ],
    [
      'Example.com/a=b',
      `unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part ${subdomain}`,
    ],
    [
      `${'k'.repeat(64)}=v`,
      `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`,
    ],
    ['a=-b', `unable to parse requirement: values[0][a]: Invalid value: "-b": ${labelValue}`],
    // The index is the value's place once the values are sorted.
    [
      'a in (z_,ok)',
      `unable to parse requirement: values[1][a]: Invalid value: "z_": ${labelValue}`,
    ],
    [
      `a=${'v'.repeat(64)}`,
      `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
    ],
    [
      'a>x',
      `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    ['a<-1', `unable to parse requirement: values[0][a]: Invalid value: "-1": ${labelValue}`],
    [
      'a>-x',
      `unable to parse requirement: [values[0]: Invalid value: "-x": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: "-x": ${labelValue}]`,
    ],
  ])('refuses %j: %s', (text, message) => {
    expect(refusal(() => parseLabelSelector(text))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message,
    });
  });
});

describe('parseFieldSelector', () => {
  const pod = (name: string, namespace?: string, phase?: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
    ...(phase !== undefined ? { status: { phase } } : {}),
  });
  const phase = {
    'status.phase': (o: KubeObject) => (o.status as { phase?: string } | undefined)?.phase,
  };

  it.each<[string, KubeObject, boolean]>([
    ['', pod('a', 'ns'), true],
    ['metadata.name=a', pod('a', 'ns'), true],
    ['metadata.name=a', pod('b', 'ns'), false],
    ['metadata.name==a', pod('a', 'ns'), true],
    ['metadata.name!=a', pod('a', 'ns'), false],
    ['metadata.name!=a', pod('b', 'ns'), true],
    ['metadata.namespace=ns', pod('a', 'ns'), true],
    ['metadata.namespace=ns', pod('a', 'other'), false],
    // A missing field reads as the empty string.
    ['metadata.namespace=', pod('a'), true],
    ['metadata.namespace!=ns', pod('a'), true],
    ['metadata.name=a,metadata.namespace=ns', pod('a', 'ns'), true],
    ['metadata.name=a,metadata.namespace=ns', pod('a', 'other'), false],
    ['metadata.name=a,', pod('a', 'ns'), true],
    ['metadata.name=a\\,b', pod('a,b'), true],
    ['metadata.name=x\\=y', pod('x=y'), true],
    ['metadata.name=back\\\\slash', pod('back\\slash'), true],
    ['metadata.name=a\\,b,metadata.namespace=ns', pod('a,b', 'ns'), true],
  ])('%j on %j → %s', (text, object, expected) => {
    expect(parseFieldSelector(text)(object)).toBe(expected);
  });

  it('selects on the fields a resource adds', () => {
    const match = parseFieldSelector('status.phase=Active', phase);
    expect(match(pod('a', undefined, 'Active'))).toBe(true);
    expect(match(pod('a', undefined, 'Terminating'))).toBe(false);
    expect(match(pod('a'))).toBe(false);
    expect(parseFieldSelector('status.phase=', phase)(pod('a'))).toBe(true);
    expect(parseFieldSelector('status.phase!=Active,metadata.name=a', phase)(pod('a'))).toBe(true);
  });

  it.each<[string, string, Parameters<typeof parseFieldSelector>[1]?]>([
    ['spec.foo=bar', 'field label not supported: spec.foo'],
    ['status.phase=Active', 'field label not supported: status.phase'],
    ['spec.nodeName=n', 'field label not supported: spec.nodeName', phase],
    // The terms are checked in sorted order, so the first unsupported one in that order is named.
    ['spec.b=1,spec.a=2', 'field label not supported: spec.a'],
    // Nothing is trimmed: the field is `metadata.name `, with its space.
    ['metadata.name = a', 'field label not supported: metadata.name '],
    ['nonsense', "invalid selector: 'nonsense'; can't understand 'nonsense'"],
    ['metadata.name=a,oops', "invalid selector: 'metadata.name=a,oops'; can't understand 'oops'"],
    ['metadata.name=a=b', 'invalid field selector: unescaped character in value: 61'],
    ['metadata.name=a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['metadata.name=a\\qb', 'invalid field selector: invalid escape sequence: \\q'],
  ])('refuses %j: %s', (text, message, extra) => {
    expect(refusal(() => parseFieldSelector(text, extra))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message,
    });
  });

  it('refuses metadata.namespace for a cluster-scoped custom resource', () => {
    expect(
      refusal(() => parseFieldSelector('metadata.namespace=x', {}, { clusterScoped: true })),
    ).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: 'field label not supported: metadata.namespace',
    });
    expect(parseFieldSelector('metadata.name=a', {}, { clusterScoped: true })(pod('a'))).toBe(true);
  });
});
