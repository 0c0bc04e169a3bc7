// The scope classes as the reconcilers use them: each one's compiled form, made once per
// generation (compiling parses and checks every placeholder), and the selection of a scope's.
import type { ScopeClassSpec, ScopeClassStatus } from '../../api/index.js';
import type { KubeObject } from '../../kube/index.js';
import { CompiledClass } from './children.js';
import { type ScopeFacts, selectClass } from './selection.js';
import type { TemplateProblem } from './template.js';

export type ScopeClassObject = KubeObject<ScopeClassSpec, ScopeClassStatus>;
export type Compiled = CompiledClass | { readonly problems: readonly TemplateProblem[] };

/** Where the classes come from: an informer's cache. */
export interface ClassSource {
  list(): readonly ScopeClassObject[];
  get(namespace: undefined, name: string): ScopeClassObject | undefined;
}

export class ClassCatalog {
  private readonly compiled = new Map<
    string,
    { generation: number | undefined; result: Compiled }
  >();

  constructor(private readonly source: ClassSource) {}

  /** The class serving the scope, or undefined when no class of its type matches. */
  select(scope: ScopeFacts): ScopeClassObject | undefined {
    return selectClass(this.source.list(), scope);
  }

  byName(name: string): ScopeClassObject | undefined {
    return this.source.get(undefined, name);
  }

  /** The class compiled, or its problems; computed once per uid and generation. */
  compile(object: ScopeClassObject): Compiled {
    const key = object.metadata.uid ?? object.metadata.name;
    const generation = object.metadata.generation;
    const known = this.compiled.get(key);
    if (known !== undefined && known.generation === generation) return known.result;
    const result: Compiled =
      object.spec === undefined
        ? { problems: [{ path: 'spec', message: 'required' }] }
        : CompiledClass.compile(object.spec);
    this.compiled.set(key, { generation, result });
    // Classes are few; forget those gone so a churn of them holds nothing.
    if (this.compiled.size > 2 * this.source.list().length + 16) this.prune();
    return result;
  }

  private prune(): void {
    const live = new Set(this.source.list().map((c) => c.metadata.uid ?? c.metadata.name));
    for (const key of this.compiled.keys()) if (!live.has(key)) this.compiled.delete(key);
  }
}
