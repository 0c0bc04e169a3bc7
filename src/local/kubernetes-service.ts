// The default/kubernetes Service, which kube-apiserver makes itself rather than a controller
// manager (pkg/controlplane/controller/kubernetesservice/controller.go,
// CreateOrUpdateMasterServiceIfNeeded): clients and test/cmd's get.sh find it on every cluster.
// As there it is made when missing and its spec is not reconciled after; its port 443 targets
// the API server's port at that start. Differs: kube-apiserver makes a deleted one again within
// its endpoint interval (10s), this at the next start only. Its Endpoints are not
// kept: kube's reconciler writes the advertised address, which Endpoints validation forbids to
// be a loopback one, and nothing here routes the cluster IP to it anyway.
import { serviceStrategy } from './kinds/service.js';
import type { Objects } from './objects.js';

/** The first address of the service CIDR (10.96.0.0/12), as kube-apiserver reserves it. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

export async function ensureKubernetesService(objects: Objects, apiPort: number): Promise<void> {
  if (objects.find(serviceStrategy.type, 'default', 'kubernetes') !== undefined) return;
  const written = objects.create(
    serviceStrategy.type,
    'default',
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { provider: 'kubernetes', component: 'apiserver' },
      },
      spec: {
        ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: apiPort }],
        clusterIP: KUBERNETES_SERVICE_IP,
        ipFamilyPolicy: 'SingleStack',
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
    },
    { fieldManager: 'kube-apiserver', fieldValidation: 'Ignore', dryRun: false, warnings: [] },
  );
  await written.durable;
}
