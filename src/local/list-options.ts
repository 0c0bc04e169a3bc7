// What a list or watch request's resourceVersion, resourceVersionMatch and sendInitialEvents
// may be, checked as kube-apiserver checks them: first ValidateListOptions (apimachinery's
// meta/internalversion/validation: 422 on ListOptions.meta.k8s.io), then the storage's
// APIObjectVersioner.ParseResourceVersion (422 on the resource), then whether this server can
// serve the version asked for (410 for an exact past version it no longer has, 504 for one it
// has not reached).
import { invalid } from './meta.js';
import type { ResourceType } from './resource-type.js';
import { ApiError, type StatusCause } from './types.js';

export type ResourceVersionMatch = 'Exact' | 'NotOlderThan' | undefined;

export interface VersionOptions {
  /** The resourceVersion asked for, parsed; 0 when absent or `0` (any version). */
  readonly resourceVersion: number;
  /** Whether one was given at all (`resourceVersion=` counts as not given). */
  readonly given: boolean;
  readonly match: ResourceVersionMatch;
}

const LIST_OPTIONS = { kind: 'ListOptions', group: 'meta.k8s.io' };

const forbidden = (field: string, detail: string): StatusCause => ({
  reason: 'FieldValueForbidden',
  message: `Forbidden: ${detail}`,
  field,
});

const notSupported = (field: string, value: string, supported: readonly string[]): StatusCause => ({
  reason: 'FieldValueNotSupported',
  message: `Unsupported value: "${value}": supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
  field,
});

/**
 * ValidateListOptions and validateWatchOptions (k8s 1.32, the WatchList feature on), then the
 * resourceVersion parsed as storage parses it.
 */
export function versionOptions(
  q: URLSearchParams,
  watch: boolean,
  type: ResourceType,
): VersionOptions {
  const rv = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const continued = (q.get('continue') ?? '') !== '';
  const sendInitialEvents = q.get('sendInitialEvents');
  const causes: StatusCause[] = [];
  if (watch) {
    if (sendInitialEvents !== null && match !== 'NotOlderThan') {
      causes.push(
        forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    }
    if (match !== '') {
      if (sendInitialEvents === null) {
        causes.push(
          forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
          ),
        );
      }
      if (match !== 'NotOlderThan') {
        causes.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      }
      if (continued) {
        causes.push(
          forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden when continue is provided',
          ),
        );
      }
    }
  } else {
    if (match !== '') {
      if (rv === '') {
        causes.push(
          forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden unless resourceVersion is provided',
          ),
        );
      }
      if (continued) {
        causes.push(
          forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden when continue is provided',
          ),
        );
      }
      if (match !== 'Exact' && match !== 'NotOlderThan') {
        causes.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
      }
      if (match === 'Exact' && rv === '0') {
        causes.push(
          forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
          ),
        );
      }
    }
    if (sendInitialEvents !== null) {
      causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
    }
  }
  if (causes.length > 0) throw invalid(LIST_OPTIONS, '', causes);
  return {
    resourceVersion: parseResourceVersion(rv, type),
    given: rv !== '',
    match: match === '' ? undefined : (match as ResourceVersionMatch),
  };
}

/**
 * APIObjectVersioner.ParseResourceVersion: a uint64 in decimal, strconv's words when it is
 * not, reported as the resource's 422 (storeerr.InterpretListError/InterpretWatchError).
 */
function parseResourceVersion(rv: string, type: ResourceType): number {
  if (rv === '' || rv === '0') return 0;
  const problem = !/^\d+$/.test(rv)
    ? 'invalid syntax'
    : BigInt(rv) > 18446744073709551615n
      ? 'value out of range'
      : undefined;
  if (problem === undefined) return Number(rv);
  throw invalid({ kind: type.resource, group: type.group }, '', [
    {
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${rv}": strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${problem}`,
      field: 'resourceVersion',
    },
  ]);
}

/**
 * Whether a list at `current` answers what was asked. There is one state here, the current
 * one: an exact past version is gone as if compacted (410), and a version not reached yet is
 * the 504 the watch cache gives once it has waited for it (this server has no cache to lag).
 */
export function checkListVersion(options: VersionOptions, current: number): void {
  const { resourceVersion, match } = options;
  if (resourceVersion > current) {
    throw new ApiError(
      504,
      'Timeout',
      `Timeout: Too large resource version: ${resourceVersion}, current: ${current}`,
      {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      },
    );
  }
  if (match === 'Exact' && resourceVersion < current) {
    throw new ApiError(410, 'Expired', `The resourceVersion for the provided list is too old.`);
  }
}
