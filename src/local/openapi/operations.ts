// The operations a resource type serves, once, for both documents to write out: paths, verbs,
// operation ids and tags, descriptions, parameters, bodies, responses and the
// x-kubernetes-action / x-kubernetes-group-version-kind extensions, as apiextensions-apiserver's
// builder lays them out for a CRD version (pkg/controller/openapi/builder/builder.go,
// generateBuilder and buildRoute) and apiserver's openapi.GetOperationIDAndTags names them.
import type { ResourceType } from '../resource-type.js';
import { definitionName, listDefinitionName } from './kind-schemas.js';
import { DELETE_OPTIONS, PATCH, STATUS } from './meta-schemas.js';

export interface Parameter {
  readonly name: string;
  readonly in: 'query' | 'path';
  readonly description: string;
  readonly type: 'string' | 'boolean' | 'integer';
  readonly required?: true;
}

export interface Operation {
  readonly method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  /** x-kubernetes-action. */
  readonly action: 'get' | 'list' | 'put' | 'post' | 'delete' | 'deletecollection' | 'patch';
  readonly operationId: string;
  readonly tag: string;
  readonly description: string;
  /** Media types of the body; none without one. */
  readonly consumes: readonly string[];
  readonly parameters: readonly Parameter[];
  /** The body's definition. */
  readonly body?: { readonly definition: string; readonly required: boolean };
  /** Status code → description and, but for 401, the definition answered. */
  readonly responses: ReadonlyArray<readonly [string, string, string?]>;
  readonly gvk: { readonly group: string; readonly kind: string; readonly version: string };
}

export interface PathItem {
  readonly path: string;
  /** What every operation of the path takes: path parameters and `pretty`. */
  readonly parameters: readonly Parameter[];
  readonly operations: readonly Operation[];
}

/** What every answer is: the server writes JSON whatever was asked. */
export const PRODUCES = ['application/json'] as const;

const query = (name: string, type: Parameter['type'], description: string): Parameter => ({
  name,
  in: 'query',
  description,
  type,
});
const PRETTY = query('pretty', 'string', "If 'true', then the output is pretty printed.");
const DRY_RUN = query(
  'dryRun',
  'string',
  'When present, modifications are not persisted. Valid value: All.',
);
const FIELD_MANAGER = query(
  'fieldManager',
  'string',
  'The name of the actor or entity making the change.',
);
const FIELD_VALIDATION = query(
  'fieldValidation',
  'string',
  'What to do with unknown or duplicate fields in the object: Ignore, Warn or Strict.',
);
const LIST_PARAMETERS = [
  query('allowWatchBookmarks', 'boolean', 'Requests watch events of type BOOKMARK.'),
  query('continue', 'string', 'The token of a previous page, to get the next one.'),
  query('fieldSelector', 'string', 'Restricts the objects returned by their fields.'),
  query('labelSelector', 'string', 'Restricts the objects returned by their labels.'),
  query('limit', 'integer', 'The most objects to return in one answer.'),
  query('resourceVersion', 'string', 'Which version of the objects to return or watch from.'),
  query('resourceVersionMatch', 'string', 'How resourceVersion applies to a list.'),
  query('sendInitialEvents', 'boolean', 'Starts a watch with the current objects.'),
  query('timeoutSeconds', 'integer', 'How long the call may last, in seconds.'),
  query('watch', 'boolean', 'Watches for changes instead of listing.'),
];
const DELETE_PARAMETERS = [
  DRY_RUN,
  query('gracePeriodSeconds', 'integer', 'The seconds before the object should be deleted.'),
  query(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'Deletes an object the store cannot read. Use with care.',
  ),
  query('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  query('propagationPolicy', 'string', 'Whether and how garbage collection is performed.'),
];

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];
/** Built-in kinds also take strategic merge patches; custom resources answer them with 415. */
const BUILTIN_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

/**
 * apiserver's ToValidOperationID: letters, digits past the first and underscores kept; a letter
 * after anything else capitalised.
 */
function validOperationId(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  let first = true;
  for (const c of s) {
    if (/\p{L}/u.test(c) || c === '_' || (!first && /\p{Nd}/u.test(c))) {
      out += capitalize ? c.toUpperCase() : c;
      capitalize = false;
    } else capitalize = true;
    first = false;
  }
  return out;
}

/**
 * The verbs operation names start with (apiserver's verb trie). The trie stops at the shortest
 * match, so `deletecollectionNamespacedScope` is `delete` + `CollectionNamespacedScope`.
 */
const VERB_PREFIXES = [
  'get',
  'log',
  'read',
  'replace',
  'patch',
  'delete',
  'watch',
  'connect',
  'proxy',
  'list',
  'create',
];

/** `deletecollectionNamespacedScope` on `apis/platform.nrn.dev/v1alpha1` → id and tag. */
function operationIdAndTag(operation: string, t: ResourceType): [string, string] {
  const verb = VERB_PREFIXES.find((v) => operation.startsWith(v)) ?? '';
  const rest = operation.slice(verb.length);
  const group = validOperationId(
    t.group === '' ? 'core' : t.group.replace(/\.k8s\.io$/, ''),
    false,
  );
  const version = validOperationId(t.version, false);
  const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  return [`${verb}${capital(group)}${capital(version)}${capital(rest)}`, `${group}_${version}`];
}

/** kube's GetArticleForNoun: none for a plural, "an" before a vowel. */
const article = (noun: string) =>
  noun.endsWith('s') && !noun.endsWith('ss') ? ' ' : /^[aeiou]/i.test(noun) ? ' an ' : ' a ';

/** The paths and operations of one type. */
export function pathsOf(t: ResourceType): PathItem[] {
  const gvk = { group: t.group, kind: t.kind, version: t.version };
  const kind = definitionName(t);
  const namespaced = t.namespaced ? 'Namespaced' : '';
  const root = `/${t.group === '' ? `api/${t.version}` : `apis/${t.group}/${t.version}`}`;
  const collection = t.namespaced
    ? `${root}/namespaces/{namespace}/${t.resource}`
    : `${root}/${t.resource}`;
  const namespaceParam: Parameter = {
    name: 'namespace',
    in: 'path',
    description: 'object name and auth scope, such as for teams and projects',
    type: 'string',
    required: true,
  };
  const nameParam: Parameter = {
    name: 'name',
    in: 'path',
    description: `name of the ${t.kind}`,
    type: 'string',
    required: true,
  };
  const bodyTypes = t.custom ? ['application/json', 'application/yaml'] : ['*/*'];

  const op = (
    method: Operation['method'],
    action: Operation['action'],
    name: string,
    description: string,
    rest: Pick<Operation, 'parameters' | 'responses'> &
      Partial<Pick<Operation, 'body' | 'consumes'>>,
  ): Operation => {
    const [operationId, tag] = operationIdAndTag(name, t);
    return {
      method,
      action,
      operationId,
      tag,
      description,
      consumes: rest.consumes ?? [],
      parameters: rest.parameters,
      ...(rest.body !== undefined ? { body: rest.body } : {}),
      responses: [...rest.responses, ['401', 'Unauthorized']],
      gvk,
    };
  };
  const list = (name: string) =>
    op('get', 'list', name, `list objects of kind ${t.kind}`, {
      parameters: LIST_PARAMETERS,
      responses: [['200', 'OK', listDefinitionName(t)]],
    });
  // The object itself, or a subresource of it (`status`): read, replace, partially update.
  const itemOperations = (sub: string): Operation[] => {
    const suffix = sub === '' ? '' : sub.charAt(0).toUpperCase() + sub.slice(1);
    const of = sub === '' ? ' the specified ' : ` ${sub} of the specified `;
    return [
      op('get', 'get', `read${namespaced}${t.kind}${suffix}`, `read${of}${t.kind}`, {
        parameters: [],
        responses: [['200', 'OK', kind]],
      }),
      op('put', 'put', `replace${namespaced}${t.kind}${suffix}`, `replace${of}${t.kind}`, {
        consumes: bodyTypes,
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
        body: { definition: kind, required: true },
        responses: [
          ['200', 'OK', kind],
          ['201', 'Created', kind],
        ],
      }),
      op(
        'patch',
        'patch',
        `patch${namespaced}${t.kind}${suffix}`,
        `partially update${of}${t.kind}`,
        {
          consumes: t.custom ? PATCH_TYPES : BUILTIN_PATCH_TYPES,
          parameters: [
            DRY_RUN,
            FIELD_MANAGER,
            FIELD_VALIDATION,
            query('force', 'boolean', 'Force is going to "force" Apply requests.'),
          ],
          body: { definition: PATCH, required: true },
          responses: [
            ['200', 'OK', kind],
            ['201', 'Created', kind],
          ],
        },
      ),
    ];
  };

  const common = t.namespaced ? [namespaceParam] : [];
  const paths: PathItem[] = [];
  if (t.namespaced) {
    paths.push({
      path: `${root}/${t.resource}`,
      parameters: [PRETTY],
      operations: [list(`list${t.kind}ForAllNamespaces`)],
    });
  }
  paths.push({
    path: collection,
    parameters: [...common, PRETTY],
    operations: [
      list(`list${namespaced}${t.kind}`),
      op('post', 'post', `create${namespaced}${t.kind}`, `create${article(t.kind)}${t.kind}`, {
        consumes: bodyTypes,
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
        body: { definition: kind, required: true },
        responses: [
          ['200', 'OK', kind],
          ['201', 'Created', kind],
          ['202', 'Accepted', kind],
        ],
      }),
      op(
        'delete',
        'deletecollection',
        `deletecollection${namespaced}${t.kind}`,
        `delete collection of ${t.kind}`,
        { parameters: LIST_PARAMETERS, responses: [['200', 'OK', STATUS]] },
      ),
    ],
  });
  const [read, replace, patch] = itemOperations('');
  paths.push({
    path: `${collection}/{name}`,
    parameters: [...common, nameParam, PRETTY],
    operations: [
      read as Operation,
      replace as Operation,
      op('delete', 'delete', `delete${namespaced}${t.kind}`, `delete${article(t.kind)}${t.kind}`, {
        consumes: bodyTypes,
        parameters: DELETE_PARAMETERS,
        body: { definition: DELETE_OPTIONS, required: false },
        responses: [
          ['200', 'OK', STATUS],
          ['202', 'Accepted', STATUS],
        ],
      }),
      patch as Operation,
    ],
  });
  if (t.hasStatus) {
    paths.push({
      path: `${collection}/{name}/status`,
      parameters: [...common, nameParam, PRETTY],
      operations: itemOperations('status'),
    });
  }
  return paths;
}
