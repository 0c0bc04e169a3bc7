// The kinds any ScopeClass may template (docs/adr/0029-class-author-rights.md): the operator's
// setting, one list for namespaced kinds and one for cluster-scoped kinds, spelled and matched
// as Argo CD's AppProject resource lists are (a group and a kind, each a glob where `*` is any
// run of characters and `?` one), with `!` entries that refuse what the others admit (Argo
// CD's blacklists). The namespace envelope is the operator's own and is not judged here.

/** One entry: `group/Kind` (the core group is `Kind` alone, as apiVersion `v1` is), or `!` it. */
export interface KindPattern {
  readonly deny: boolean;
  readonly group: string;
  readonly kind: string;
}

export interface KindList {
  /** As written: for messages, so that they quote the setting a platform team changes. */
  readonly text: string;
  readonly entries: readonly KindPattern[];
}

/** The setting: which kinds a class's `resources` may hold, by their scope. */
export interface KindAllowlist {
  readonly namespaced: KindList;
  readonly cluster: KindList;
}

/** The reason a class, and a scope of it, fails with when it templates a kind not allowed. */
export const KIND_NOT_ALLOWED = 'KindNotAllowed';

/** Where a list is set, for messages: the flag and its environment variable. */
export const KIND_SETTINGS = {
  namespaced: { flag: '--scope-class-namespaced-kinds', env: 'NRN_SCOPE_CLASS_NAMESPACED_KINDS' },
  cluster: { flag: '--scope-class-cluster-kinds', env: 'NRN_SCOPE_CLASS_CLUSTER_KINDS' },
} as const;

/**
 * Namespaced kinds but RBAC's (a Role or RoleBinding hands out rights) and admission's (a
 * webhook sees or changes every write): a platform team adds them back deliberately.
 */
export const DEFAULT_NAMESPACED_KINDS =
  '*/*,!rbac.authorization.k8s.io/*,!admissionregistration.k8s.io/*';
/** No cluster-scoped kind: one is shared by every scope and tenant of the cluster. */
export const DEFAULT_CLUSTER_KINDS = '';

const GROUP_GLOB = /^[a-z0-9.*?-]*$/;
const KIND_GLOB = /^[A-Za-z0-9*?]+$/;
const MAX_ENTRIES = 100;

/** The list, or the first entry that is not one. */
export function parseKindList(text: string): KindList | { problem: string } {
  const entries: KindPattern[] = [];
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length > MAX_ENTRIES) return { problem: `more than ${MAX_ENTRIES} entries` };
  for (const item of items) {
    const deny = item.startsWith('!');
    const body = deny ? item.slice(1) : item;
    const slash = body.lastIndexOf('/');
    const group = slash < 0 ? '' : body.slice(0, slash);
    const kind = slash < 0 ? body : body.slice(slash + 1);
    if (!GROUP_GLOB.test(group) || !KIND_GLOB.test(kind)) {
      return {
        problem: `${JSON.stringify(item)} is not group/Kind (Kind alone for the core group; * and ? match, ! refuses)`,
      };
    }
    entries.push({ deny, group, kind });
  }
  return { text: items.join(','), entries };
}

/** The default setting, or the one given as text; throws on a bad list (flags are checked first). */
export function kindAllowlist(
  namespaced = DEFAULT_NAMESPACED_KINDS,
  cluster = DEFAULT_CLUSTER_KINDS,
): KindAllowlist {
  const lists = { namespaced: parseKindList(namespaced), cluster: parseKindList(cluster) };
  for (const [scope, list] of Object.entries(lists)) {
    if ('problem' in list) {
      throw new Error(`${KIND_SETTINGS[scope as keyof typeof lists].flag}: ${list.problem}`);
    }
  }
  return lists as KindAllowlist;
}

/** `group/Kind`, or `Kind` in the core group: how the setting and its messages spell a kind. */
export function groupKind(group: string, kind: string): string {
  return group === '' ? kind : `${group}/${kind}`;
}

/** filepath.Match's `*` and `?` (Argo CD matches with it); every other character is itself. */
function globMatches(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  let p = 0;
  let v = 0;
  let star = -1;
  let resume = 0;
  while (v < value.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === value[v])) {
      p++;
      v++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = v;
    } else if (star >= 0) {
      p = star + 1;
      v = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Each list's verdicts by group/Kind: asked for every child of every scope in the steady state. */
const verdicts = new WeakMap<KindList, Map<string, boolean>>();

function listAdmits(list: KindList, group: string, kind: string): boolean {
  let known = verdicts.get(list);
  if (known === undefined) {
    known = new Map();
    verdicts.set(list, known);
  }
  const key = `${group}/${kind}`;
  let admits = known.get(key);
  if (admits === undefined) {
    let allowed = false;
    let denied = false;
    for (const e of list.entries) {
      if (!globMatches(e.group, group) || !globMatches(e.kind, kind)) continue;
      if (e.deny) denied = true;
      else allowed = true;
    }
    admits = allowed && !denied;
    // Bounded by the kinds the cluster serves, which classes name.
    if (known.size < 10_000) known.set(key, admits);
  }
  return admits;
}

/**
 * Why the setting refuses this kind, naming the list and how it is set; undefined when it
 * admits it. `where` is the path or entry the message begins with.
 */
export function kindRefusal(
  allowlist: KindAllowlist,
  where: string,
  type: { readonly group: string; readonly kind: string; readonly namespaced: boolean },
): string | undefined {
  const scope = type.namespaced ? 'namespaced' : 'cluster';
  const list = allowlist[scope];
  if (listAdmits(list, type.group, type.kind)) return undefined;
  const setting = KIND_SETTINGS[scope];
  return `${where}: kind ${groupKind(type.group, type.kind)} is not among the ${type.namespaced ? 'namespaced' : 'cluster-scoped'} kinds a class may make (${setting.flag} or ${setting.env}: ${list.text === '' ? 'none' : JSON.stringify(list.text)})`;
}
