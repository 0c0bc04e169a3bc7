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

/** A web_pool Scope of application `applicationId`, 1 GB and the standard CPU profile. */
export function scopeYaml(namespace: string, name: string, applicationId: number): string {
  return `
apiVersion: platform.nrn.dev/v1alpha1
kind: Scope
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  name: ${name}
  type: web_pool
  application_id: ${applicationId}
  requested_spec: {memory_in_gb: 1, cpu_profile: standard, local_storage_in_gb: 5}
`;
}
