// Manifests as a platform team writes them for kubectl, for the tests that apply them so.

export function namespaceYaml(name: string): string {
  return `
apiVersion: v1
kind: Namespace
metadata: {name: ${name}}
`;
}

/** An Application with this id and its NRN under organization 1, account 2, namespace 3. */
export function applicationYaml(namespace: string, name: string, id: number): string {
  return `
apiVersion: platform.nrn.dev/v1alpha1
kind: Application
metadata: {name: ${name}, namespace: ${namespace}}
spec: {id: ${id}, name: ${name}, nrn: "organization=1:account=2:namespace=3:application=${id}"}
`;
}

/** What a test scope asks for besides its name and application; 1 GB and 5 GB by default. */
export interface ScopeShape {
  readonly memoryGb?: number;
  readonly storageGb?: number;
  /** More lines of its spec, indented as its fields are. */
  readonly extra?: string;
}

/** A web_pool Scope of application `applicationId`, with the standard CPU profile. */
export function scopeYaml(
  namespace: string,
  name: string,
  applicationId: number,
  { memoryGb = 1, storageGb = 5, extra = '' }: ScopeShape = {},
): string {
  return `
apiVersion: platform.nrn.dev/v1alpha1
kind: Scope
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  name: ${name}
  type: web_pool
  application_id: ${applicationId}
  requested_spec: {memory_in_gb: ${memoryGb}, cpu_profile: standard, local_storage_in_gb: ${storageGb}}
${extra}`;
}
