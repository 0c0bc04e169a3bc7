// field.Error of k8s.io/apimachinery as the API server words it (`ErrorBody`): the causes of a
// 422 Invalid, built the way apiextensions-apiserver builds them, so a rule written here reads
// like its Go original (`required(path, detail)`, `invalid(path, value, detail)`, ...).
import { goNumber, goQuote, goSharp } from './goformat.js';

/** `Status.details.causes[].reason`: field.ErrorType of k8s.io/apimachinery. */
export type StatusCauseReason =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooShort'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError';

/** One validation failure: a `Status` cause (`message` is the text after `<field>: `). */
export interface FieldIssue {
  field: string;
  reason: StatusCauseReason;
  message: string;
}

/** A value its caller has already printed as Go would (a struct, a typed slice). */
export class GoText {
  constructor(readonly text: string) {}
}

/** A bad value as ErrorBody prints it: nil as "null", strings %q, numbers and bools %v, the rest %#v. */
export function badValue(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  if (v instanceof GoText) return v.text;
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return goSharp(v);
}

const withDetail = (head: string, detail: string) => (detail === '' ? head : `${head}: ${detail}`);

export const required = (field: string, detail = ''): FieldIssue => ({
  field,
  reason: 'FieldValueRequired',
  message: withDetail('Required value', detail),
});

export const forbidden = (field: string, detail: string): FieldIssue => ({
  field,
  reason: 'FieldValueForbidden',
  message: withDetail('Forbidden', detail),
});

export const invalid = (field: string, value: unknown, detail: string): FieldIssue => ({
  field,
  reason: 'FieldValueInvalid',
  message: withDetail(`Invalid value: ${badValue(value)}`, detail),
});

/** field.NotSupported: the valid values quoted, in the order given. */
export const notSupported = (
  field: string,
  value: unknown,
  valid: readonly string[],
): FieldIssue => ({
  field,
  reason: 'FieldValueNotSupported',
  message: withDetail(
    `Unsupported value: ${badValue(value)}`,
    valid.length === 0 ? '' : `supported values: ${valid.map(goQuote).join(', ')}`,
  ),
});

export const duplicate = (field: string, value: unknown): FieldIssue => ({
  field,
  reason: 'FieldValueDuplicate',
  message: `Duplicate value: ${badValue(value)}`,
});

export const tooMany = (field: string, actual: number, max: number): FieldIssue => ({
  field,
  reason: 'FieldValueTooMany',
  message: `Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
});

/** field.Error's Error(): how an aggregate or a condition message lists a cause. */
export const issueText = (i: FieldIssue): string => `${i.field}: ${i.message}`;

/** field.Path: `a.b`, `a[key]`, `a[0]`, as `Child`, `Key` and `Index` build it. */
export const childPath = (path: string, name: string): string =>
  path === '' ? name : `${path}.${name}`;
export const keyPath = (path: string, key: string): string => `${path}[${key}]`;
export const indexPath = (path: string, i: number): string => `${path}[${i}]`;
