// The default ScopeClasses shipped in deploy/scopeclasses/ (one per scope type): where they are
// found beside the code (from src/ under tsx and from dist/ in the npm package alike), reading
// and checking them, and applying them once, as `nrn-operator local` does on the first start of
// a new data dir. Never again after: a platform team that edited or deleted one keeps its choice.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { GROUP, ScopeClassSpec, VERSION } from './api/index.js';
import { type Kube, rawResource } from './kube/index.js';

/**
 * deploy/scopeclasses/ of this package: this module is src/<file>.ts or dist/<file>.js, both
 * one level under the package root, as cli.ts finds ../package.json.
 */
export const DEFAULT_SCOPE_CLASSES_DIR = fileURLToPath(
  new URL('../deploy/scopeclasses/', import.meta.url),
);

/** Bounds on what is read: a handful of small files is all the folder ever holds. */
const MAX_FILES = 16;
const MAX_FILE_BYTES = 64 * 1024;
const FILE_NAME = /^[\w.-]+\.ya?ml$/;

/** A ScopeClass as its file writes it: applied as it is, so the CRD's defaults stay the server's. */
export interface ScopeClassManifest {
  readonly apiVersion: string;
  readonly kind: 'ScopeClass';
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
  readonly spec: Record<string, unknown>;
}

async function readBounded(path: string): Promise<string> {
  const text = await readFile(path, 'utf8');
  if (Buffer.byteLength(text) > MAX_FILE_BYTES) {
    throw new Error(`${path}: larger than ${MAX_FILE_BYTES} bytes`);
  }
  return text;
}

function documentsOf(path: string, text: string): unknown[] {
  const values: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map(String).join('; ')}`);
    const value = doc.toJS() as unknown;
    if (value !== null && value !== undefined) values.push(value);
  }
  return values;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The files the folder's kustomization.yaml lists: the one list of what is installed. */
async function listedFiles(dir: string): Promise<string[]> {
  const path = join(dir, 'kustomization.yaml');
  const [kustomization] = documentsOf(path, await readBounded(path));
  const resources = isRecord(kustomization) ? kustomization.resources : undefined;
  if (!Array.isArray(resources) || resources.length === 0) {
    throw new Error(`${path}: .resources must list the ScopeClass files`);
  }
  if (resources.length > MAX_FILES) {
    throw new Error(`${path}: .resources lists more than ${MAX_FILES} files`);
  }
  return resources.map((file, index) => {
    if (typeof file !== 'string' || !FILE_NAME.test(file)) {
      throw new Error(`${path}: .resources[${index}] must name a .yaml file of the folder`);
    }
    return file;
  });
}

/** Every ScopeClass of `dir`, each checked against the model; an error names the file and field. */
export async function loadDefaultScopeClasses(
  dir: string = DEFAULT_SCOPE_CLASSES_DIR,
): Promise<ScopeClassManifest[]> {
  const apiVersion = `${GROUP}/${VERSION}`;
  const classes: ScopeClassManifest[] = [];
  for (const file of await listedFiles(dir)) {
    const path = join(dir, file);
    for (const [index, object] of documentsOf(path, await readBounded(path)).entries()) {
      const where = `${path} (document ${index + 1})`;
      if (!isRecord(object) || object.apiVersion !== apiVersion || object.kind !== 'ScopeClass') {
        throw new Error(`${where}: not a ${apiVersion} ScopeClass`);
      }
      const metadata = object.metadata;
      if (!isRecord(metadata) || typeof metadata.name !== 'string' || metadata.name === '') {
        throw new Error(`${where}: .metadata.name is missing`);
      }
      const checked = ScopeClassSpec.safeParse(object.spec);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        const at = ['.spec', ...(issue?.path ?? []).map(String)].join('.');
        throw new Error(`${where}: ${at}: ${issue?.message ?? 'invalid'}`);
      }
      classes.push(object as unknown as ScopeClassManifest);
    }
  }
  const names = classes.map((c) => c.metadata.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) throw new Error(`${dir}: ScopeClass ${twice} is defined twice`);
  return classes;
}

/**
 * Applies the default ScopeClasses (server-side, as any apply: `fieldManager`, forced, since
 * the caller installs them only into a cluster just made) and gives their names.
 */
export async function installDefaultScopeClasses(
  kube: Pick<Kube, 'resource'>,
  options: { readonly fieldManager: string; readonly dir?: string },
): Promise<string[]> {
  const classes = await loadDefaultScopeClasses(options.dir);
  // Without the schemas: the answer is not needed, and the files were checked above.
  const client = kube.resource(rawResource('ScopeClass'));
  for (const scopeClass of classes) {
    await client.applyAndForget(
      { ...scopeClass, metadata: { ...scopeClass.metadata } },
      { fieldManager: options.fieldManager, force: true },
    );
  }
  return classes.map((c) => c.metadata.name);
}
