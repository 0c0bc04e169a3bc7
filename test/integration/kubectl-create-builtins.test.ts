// kubectl's typed generators for the stored workload kinds (create deployment, service, job,
// cronjob, poddisruptionbudget, ingress), which send their objects as protobuf, and kubectl scale,
// which patches the scale subresource: each run as users type it, and what was stored read back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, startCluster, type TestCluster, uniqueName } from '../support/cluster.js';

let cluster: TestCluster;
let ns: string;

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, ['-n', ns, ...args], input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

async function failing(args: string[], input?: string): Promise<string> {
  const result = await kubectl(cluster, ['-n', ns, ...args], input !== undefined ? { input } : {});
  expect(result.code).not.toBe(0);
  return result.stderr;
}

const getJson = async (what: string): Promise<any> =>
  JSON.parse(await ok(['get', what, '-o', 'json']));

beforeAll(async () => {
  cluster = await startCluster();
  ns = uniqueName('typed');
  const created = await kubectl(cluster, ['create', 'namespace', ns]);
  if (created.code !== 0) throw new Error(created.stderr);
}, 60_000);

afterAll(async () => {
  await kubectl(cluster, ['delete', 'namespace', ns, '--wait=false']);
  await cluster?.close();
});

describe('kubectl create of the stored built-in kinds (protobuf bodies)', () => {
  it('create deployment: replicas, port, command, labels and the defaulted pod template', async () => {
    expect(
      await ok([
        'create',
        'deployment',
        'web',
        '--image=nginx:1.25',
        '--replicas=2',
        '--port=8080',
        '--',
        'nginx',
        '-g',
        'daemon off;',
      ]),
    ).toBe('deployment.apps/web created\n');
    const web = await getJson('deployment/web');
    expect(web.metadata.labels).toEqual({ app: 'web' });
    expect(web.metadata.generation).toBe(1);
    expect(web.spec).toEqual({
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: 'nginx:1.25',
              command: ['nginx', '-g', 'daemon off;'],
              ports: [{ containerPort: 8080, protocol: 'TCP' }],
              resources: {},
              imagePullPolicy: 'IfNotPresent',
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
            },
          ],
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
      },
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
      },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    });
  });

  it('create deployment --replicas=0 keeps the zero (a pointer in Go)', async () => {
    await ok(['create', 'deployment', 'idle', '--image=nginx', '--replicas=0']);
    expect((await getJson('deployment/idle')).spec.replicas).toBe(0);
  });

  it('create service clusterip, nodeport, loadbalancer, externalname and headless', async () => {
    await ok(['create', 'service', 'clusterip', 'api', '--tcp=80:8080', '--tcp=443:https']);
    const api = await getJson('service/api');
    expect(api.metadata.labels).toEqual({ app: 'api' });
    expect(api.spec.type).toBe('ClusterIP');
    expect(api.spec.selector).toEqual({ app: 'api' });
    expect(api.spec.ports).toEqual([
      { name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 },
      { name: '443-https', protocol: 'TCP', port: 443, targetPort: 'https' },
    ]);

    await ok(['create', 'service', 'nodeport', 'np', '--tcp=80:8080', '--node-port=30080']);
    const np = await getJson('service/np');
    expect(np.spec.type).toBe('NodePort');
    expect(np.spec.ports).toEqual([
      { name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 },
    ]);

    await ok(['create', 'service', 'loadbalancer', 'lb', '--tcp=5678:8080']);
    expect((await getJson('service/lb')).spec.type).toBe('LoadBalancer');

    await ok(['create', 'service', 'externalname', 'ext', '--external-name=db.example.com']);
    const ext = await getJson('service/ext');
    expect(ext.spec.type).toBe('ExternalName');
    expect(ext.spec.externalName).toBe('db.example.com');

    await ok(['create', 'service', 'clusterip', 'headless', '--clusterip=None']);
    const headless = await getJson('service/headless');
    expect(headless.spec.clusterIP).toBe('None');
    expect(headless.spec.clusterIPs).toEqual(['None']);
  });

  it('create job and cronjob, and a job from the cronjob', async () => {
    await ok(['create', 'job', 'once', '--image=busybox', '--', 'echo', 'hello']);
    const once = await getJson('job/once');
    const container = once.spec.template.spec.containers[0];
    expect(container.name).toBe('once');
    expect(container.image).toBe('busybox');
    expect(container.command).toEqual(['echo', 'hello']);
    expect(once.spec.template.spec.restartPolicy).toBe('Never');

    await ok([
      'create',
      'cronjob',
      'nightly',
      '--image=busybox',
      '--schedule=0 3 * * *',
      '--restart=OnFailure',
      '--',
      'date',
    ]);
    const nightly = await getJson('cronjob/nightly');
    expect(nightly.spec.schedule).toBe('0 3 * * *');
    expect(nightly.spec.jobTemplate.metadata.name).toBe('nightly');
    const template = nightly.spec.jobTemplate.spec.template.spec;
    expect(template.restartPolicy).toBe('OnFailure');
    expect(template.containers[0]).toMatchObject({
      name: 'nightly',
      image: 'busybox',
      command: ['date'],
    });

    await ok(['create', 'job', 'manual', '--from=cronjob/nightly']);
    const manual = await getJson('job/manual');
    expect(manual.metadata.annotations).toEqual({ 'cronjob.kubernetes.io/instantiate': 'manual' });
    expect(manual.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        name: 'nightly',
        uid: nightly.metadata.uid,
        controller: true,
      },
    ]);
    expect(manual.spec.template.spec.containers[0].command).toEqual(['date']);
    expect(manual.spec.template.spec.restartPolicy).toBe('OnFailure');
  });

  it('create poddisruptionbudget with a number and with a percentage', async () => {
    await ok(['create', 'poddisruptionbudget', 'min', '--selector=app=web', '--min-available=1']);
    expect((await getJson('pdb/min')).spec).toEqual({
      minAvailable: 1,
      selector: { matchLabels: { app: 'web' } },
    });
    await ok([
      'create',
      'pdb',
      'max',
      '--selector=app=web,tier notin (db)',
      '--max-unavailable=50%',
    ]);
    expect((await getJson('pdb/max')).spec).toEqual({
      maxUnavailable: '50%',
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }],
      },
    });
  });

  it('create ingress: class, rules with exact and prefix paths, TLS, default backend, annotations', async () => {
    await ok([
      'create',
      'ingress',
      'site',
      '--class=nginx',
      '--rule=foo.example.com/api=api:8080,tls=site-cert',
      '--rule=bar.example.com/*=web:http',
      '--default-backend=fallback:80',
      '--annotation=team=web',
    ]);
    const site = await getJson('ingress/site');
    expect(site.metadata.annotations).toEqual({ team: 'web' });
    expect(site.spec).toEqual({
      ingressClassName: 'nginx',
      defaultBackend: { service: { name: 'fallback', port: { number: 80 } } },
      tls: [{ hosts: ['foo.example.com'], secretName: 'site-cert' }],
      rules: [
        {
          host: 'foo.example.com',
          http: {
            paths: [
              {
                path: '/api',
                pathType: 'Exact',
                backend: { service: { name: 'api', port: { number: 8080 } } },
              },
            ],
          },
        },
        {
          host: 'bar.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { name: 'http' } } },
              },
            ],
          },
        },
      ],
    });
  });

  it('kubectl run (which sends JSON) stores the pod with its port, env and labels', async () => {
    await ok([
      'run',
      'probe',
      '--image=nginx',
      '--port=80',
      '--env=MODE=test',
      '--labels=role=probe',
    ]);
    const pod = await getJson('pod/probe');
    expect(pod.metadata.labels).toEqual({ role: 'probe' });
    expect(pod.spec.containers[0]).toMatchObject({
      name: 'probe',
      image: 'nginx',
      env: [{ name: 'MODE', value: 'test' }],
      ports: [{ containerPort: 80, protocol: 'TCP' }],
    });
  });
});

const WORKLOADS = [
  {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    resource: 'deployments',
    name: 'scaled-deploy',
    selector: { matchLabels: { app: 'scaled-deploy' } },
  },
  {
    kind: 'ReplicaSet',
    apiVersion: 'apps/v1',
    resource: 'replicasets',
    name: 'scaled-rs',
    selector: { matchLabels: { app: 'scaled-rs' } },
  },
  {
    kind: 'StatefulSet',
    apiVersion: 'apps/v1',
    resource: 'statefulsets',
    name: 'scaled-sts',
    selector: { matchLabels: { app: 'scaled-sts' } },
  },
  {
    kind: 'ReplicationController',
    apiVersion: 'v1',
    resource: 'replicationcontrollers',
    name: 'scaled-rc',
    selector: { app: 'scaled-rc' },
  },
] as const;

const workload = (w: (typeof WORKLOADS)[number]) => {
  const name = w.name;
  return {
    name,
    manifest: JSON.stringify({
      apiVersion: w.apiVersion,
      kind: w.kind,
      metadata: { name },
      spec: {
        replicas: 1,
        selector: w.selector,
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    }),
  };
};

describe('kubectl scale (the scale subresource)', () => {
  it.each(WORKLOADS)('scales a $kind: spec.replicas and the Scale read back', async (w) => {
    const { name, manifest } = workload(w);
    await ok(['apply', '-f', '-'], manifest);
    expect(await ok(['scale', `${w.resource}/${name}`, '--replicas=3'])).toContain('scaled');
    const object = JSON.parse(
      await ok(['get', `${w.resource}/${name}`, '-o', 'json', '--show-managed-fields']),
    );
    expect(object.spec.replicas).toBe(3);
    expect(object.metadata.generation).toBe(2);
    // Recorded as kube's ScaleHandler records a write through the scale subresource.
    expect(
      object.metadata.managedFields.find(
        (m: { subresource?: string }) => m.subresource === 'scale',
      ),
    ).toMatchObject({
      manager: 'kubectl',
      operation: 'Update',
      apiVersion: w.apiVersion,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      subresource: 'scale',
    });
    const prefix = w.apiVersion === 'v1' ? '/api/v1' : `/apis/${w.apiVersion}`;
    const scale = JSON.parse(
      await ok(['get', '--raw', `${prefix}/namespaces/${ns}/${w.resource}/${name}/scale`]),
    );
    expect(scale).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name,
        namespace: ns,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
        creationTimestamp: object.metadata.creationTimestamp,
      },
      spec: { replicas: 3 },
      status: { replicas: 0, selector: `app=${name}` },
    });
  });

  it('scales to zero, honours --current-replicas, and refuses a stale resourceVersion', async () => {
    await ok(['create', 'deployment', 'shrink', '--image=nginx', '--replicas=2']);
    await ok(['scale', 'deployment/shrink', '--replicas=0']);
    expect((await getJson('deployment/shrink')).spec.replicas).toBe(0);
    expect(
      await failing(['scale', 'deployment/shrink', '--current-replicas=5', '--replicas=1']),
    ).toContain('Expected replicas to be 5, was 0');
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/shrink/scale`;
    const scale = JSON.parse(await ok(['get', '--raw', path]));
    expect(scale.spec).toEqual({});
    await ok(['scale', 'deployment/shrink', '--replicas=1']);
    scale.spec.replicas = 3;
    expect(await failing(['replace', '--raw', path, '-f', '-'], JSON.stringify(scale))).toContain(
      'Operation cannot be fulfilled on deployments.apps "shrink": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect((await getJson('deployment/shrink')).spec.replicas).toBe(1);
  });

  it('refuses a negative count and an unknown object as kube-apiserver does', async () => {
    await ok(['create', 'deployment', 'strict', '--image=nginx']);
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/strict/scale`;
    const scale = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'strict' },
      spec: { replicas: -1 },
    };
    expect(await failing(['replace', '--raw', path, '-f', '-'], JSON.stringify(scale))).toContain(
      'The Scale "strict" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
    scale.spec.replicas = 4;
    await ok(['replace', '--raw', path, '-f', '-'], JSON.stringify(scale));
    expect((await getJson('deployment/strict')).spec.replicas).toBe(4);
    expect(await failing(['scale', 'deployment/absent', '--replicas=2'])).toContain(
      'deployments.apps "absent" not found',
    );
  });

  it('prints the Scale as kube-apiserver does for kubectl get --subresource=scale', async () => {
    await ok(['create', 'deployment', 'shown', '--image=nginx', '--replicas=2']);
    const table = await ok(['get', 'deployment', 'shown', '--subresource=scale']);
    expect(table.split('\n')[0]?.split(/\s+/)).toEqual(['NAME', 'DESIRED', 'AVAILABLE', 'AGE']);
    expect(table.split('\n')[1]).toMatch(/^shown\s+2\s+0\s+\d+s$/);
  });

  it('lists each scale subresource in discovery as autoscaling/v1 Scale', async () => {
    const apps = JSON.parse(await ok(['get', '--raw', '/apis/apps/v1']));
    const core = JSON.parse(await ok(['get', '--raw', '/api/v1']));
    const scales = [...apps.resources, ...core.resources].filter((r: { name: string }) =>
      r.name.endsWith('/scale'),
    );
    expect(scales.map((r: { name: string }) => r.name).sort()).toEqual([
      'deployments/scale',
      'replicasets/scale',
      'replicationcontrollers/scale',
      'statefulsets/scale',
    ]);
    expect(JSON.stringify(scales[0])).toBe(
      JSON.stringify({
        name: 'deployments/scale',
        singularName: '',
        namespaced: true,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      }),
    );
  });
});
