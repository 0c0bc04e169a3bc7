// CustomResourceDefinition (apiextensions.k8s.io/v1): what the API server checks when one is
// written, and the status it reports (names accepted, established). Serving the kinds a CRD
// defines is the registry's (typesOfCrd); deleting their objects with it is housekeeping's.
import { compileJsonPath } from '../jsonpath.js';
import { invalid, timestamp } from '../meta.js';
import { checkStructuralSchema } from '../schema/structural.js';
import type { KubeObject, StatusCause } from '../types.js';
import { builtinType, type KindStrategy, type StrategyContext } from './strategy.js';

export const CRD_TYPE = builtinType(
  'apiextensions.k8s.io',
  'v1',
  'CustomResourceDefinition',
  'customresourcedefinitions',
  { namespaced: false, shortNames: ['crd', 'crds'], hasStatus: true },
);

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

interface CrdSpec {
  group?: unknown;
  scope?: unknown;
  names?: {
    kind?: unknown;
    plural?: unknown;
    singular?: unknown;
    listKind?: unknown;
    shortNames?: unknown;
  };
  versions?: Array<{
    name?: unknown;
    served?: unknown;
    storage?: unknown;
    schema?: { openAPIV3Schema?: unknown };
    additionalPrinterColumns?: Array<{ name?: unknown; type?: unknown; jsonPath?: unknown }>;
  }>;
}

/** Every problem the real API server would report for this CRD, as Status causes. */
export function crdCauses(crd: KubeObject, context: StrategyContext): StatusCause[] {
  const causes: StatusCause[] = [];
  const bad = (field: string, message: string, reason = 'FieldValueInvalid') =>
    causes.push({ reason, field, message });
  const spec = (crd.spec ?? {}) as CrdSpec;
  const group = typeof spec.group === 'string' ? spec.group : '';
  const plural = typeof spec.names?.plural === 'string' ? spec.names.plural : '';
  if (group === '') bad('spec.group', 'Required value', 'FieldValueRequired');
  else if (!DNS_SUBDOMAIN.test(group) || !group.includes('.')) {
    bad(
      'spec.group',
      `Invalid value: ${JSON.stringify(group)}: should be a domain with at least one dot`,
    );
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    bad(
      'spec.scope',
      `Unsupported value: ${JSON.stringify(spec.scope)}: supported values: "Cluster", "Namespaced"`,
      'FieldValueNotSupported',
    );
  }
  if (plural === '' || !DNS_LABEL.test(plural)) {
    bad(
      'spec.names.plural',
      `Invalid value: ${JSON.stringify(plural)}: a lowercase RFC 1123 label is required`,
    );
  }
  if (typeof spec.names?.kind !== 'string' || !KIND.test(spec.names.kind)) {
    bad('spec.names.kind', 'Required value', 'FieldValueRequired');
  }
  for (const field of ['singular', 'listKind'] as const) {
    const value = spec.names?.[field];
    if (value !== undefined && typeof value !== 'string')
      bad(`spec.names.${field}`, 'Invalid value: must be a string');
  }
  if (crd.metadata.name !== `${plural}.${group}`) {
    bad(
      'metadata.name',
      `Invalid value: ${JSON.stringify(crd.metadata.name)}: must be spec.names.plural+"."+spec.group`,
    );
  }
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0)
    bad('spec.versions', 'Invalid value: must have exactly one version marked as storage version');
  const storage = versions.filter((v) => v.storage === true);
  if (versions.length > 0 && storage.length !== 1) {
    bad('spec.versions', `Invalid value: must have exactly one version marked as storage version`);
  }
  versions.forEach((version, i) => {
    const at = `spec.versions[${i}]`;
    if (typeof version.name !== 'string' || !VERSION.test(version.name)) {
      bad(
        `${at}.name`,
        `Invalid value: ${JSON.stringify(version.name)}: a version must be like v1, v2beta1 or v1alpha2`,
      );
    }
    const schema = version.schema?.openAPIV3Schema;
    if (schema === undefined) {
      bad(
        `${at}.schema.openAPIV3Schema`,
        'Required value: schemas are required',
        'FieldValueRequired',
      );
    } else {
      for (const problem of checkStructuralSchema(schema, `${at}.schema.openAPIV3Schema`)) {
        bad(problem.path, problem.message);
      }
    }
    (version.additionalPrinterColumns ?? []).forEach((column, j) => {
      try {
        compileJsonPath(String(column.jsonPath ?? ''));
      } catch (error) {
        bad(
          `${at}.additionalPrinterColumns[${j}].jsonPath`,
          `Invalid value: ${JSON.stringify(column.jsonPath)}: ${(error as Error).message}`,
        );
      }
    });
  });
  // Another CRD may not already serve this group and plural under a different name.
  for (const other of context.servedTypes()) {
    if (other.custom && other.group === group && other.resource === plural) {
      const owner = `${other.resource}.${other.group}`;
      if (owner !== crd.metadata.name)
        bad('spec.names.plural', `Invalid value: ${JSON.stringify(plural)}: is already in use`);
    }
  }
  return causes;
}

/** Validates a CRD being written and sets what the server reports in its status. */
function prepareCrd(crd: KubeObject, old: KubeObject | undefined, context: StrategyContext): void {
  const causes = crdCauses(crd, context);
  if (causes.length > 0) throw invalid(CRD_TYPE, crd.metadata.name ?? '', causes);
  const spec = crd.spec as {
    names: Record<string, unknown>;
    versions: Array<{ name: string; storage?: boolean }>;
  };
  if (old === undefined) {
    const finalizers = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER))
      crd.metadata.finalizers = [...finalizers, CRD_CLEANUP_FINALIZER];
  }
  const kind = spec.names.kind as string;
  const acceptedNames = {
    plural: spec.names.plural,
    singular: spec.names.singular ?? kind.toLowerCase(),
    kind,
    listKind: spec.names.listKind ?? `${kind}List`,
    ...(spec.names.shortNames ? { shortNames: spec.names.shortNames } : {}),
    ...(spec.names.categories ? { categories: spec.names.categories } : {}),
  };
  const previous = (old?.status ?? {}) as {
    storedVersions?: string[];
    conditions?: Array<{ type: string; lastTransitionTime: string }>;
  };
  const storageVersion = spec.versions.find((v) => v.storage === true)?.name as string;
  const storedVersions = [...new Set([...(previous.storedVersions ?? []), storageVersion])];
  const since = (type: string) =>
    previous.conditions?.find((c) => c.type === type)?.lastTransitionTime ?? timestamp();
  crd.status = {
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        reason: 'NoConflicts',
        message: 'no conflicts found',
        lastTransitionTime: since('NamesAccepted'),
      },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
        lastTransitionTime: since('Established'),
      },
    ],
    acceptedNames,
    storedVersions,
  };
}

export const customResourceDefinitionStrategy: KindStrategy = {
  type: CRD_TYPE,
  prepare: prepareCrd,
};
