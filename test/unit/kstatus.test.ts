// computeKStatus against kstatus' own cases: the YAML objects and expected statuses are those
// of kubernetes-sigs/cli-utils pkg/kstatus/status/status_compute_test.go (named as there),
// plus the rules of core.go/generic.go that file does not reach (partitions, OnDelete,
// deadlines, suspended jobs, Reconciling/Stalled, deletion, malformed fields).
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { computeKStatus, type KStatus, type KStatusObject } from '../../src/domain/kstatus.js';

interface Case {
  readonly name: string;
  readonly yaml: string;
  readonly status: KStatus;
  /** The message, when the case pins it (kstatus' wording). */
  readonly message?: string;
}

const NOW = Date.parse('2026-01-01T00:00:00Z');

const cases: Case[] = [
  // TestPodStatus
  {
    name: 'podNoStatus',
    status: 'InProgress',
    message: 'Pod phase not available',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {generation: 1, name: test}
`,
  },
  {
    name: 'podReady',
    status: 'Current',
    message: 'Pod is Ready',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {generation: 1, name: test, namespace: qual}
status:
  conditions: [{type: Ready, status: "True"}]
  phase: Running
`,
  },
  {
    name: 'podCompletedSuccessfully',
    status: 'Current',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {generation: 1, name: test, namespace: qual}
status:
  phase: Succeeded
  conditions: [{type: Ready, status: "False", reason: PodCompleted}]
`,
  },
  {
    name: 'podCompletedFailed',
    status: 'Current',
    message: 'Pod has completed, but not successfully',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {generation: 1, name: test, namespace: qual}
status:
  phase: Failed
  conditions: [{type: Ready, status: "False", reason: PodCompleted}]
`,
  },
  {
    name: 'podBeingScheduled',
    status: 'InProgress',
    message: 'Pod has not been scheduled',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {creationTimestamp: "2025-12-31T23:59:55Z", generation: 1, name: test, namespace: qual}
status:
  phase: Pending
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]
`,
  },
  {
    name: 'podUnschedulable',
    status: 'Failed',
    message: 'Pod could not be scheduled',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {generation: 1, name: test, namespace: qual}
status:
  phase: Pending
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]
`,
  },
  {
    name: 'podCrashLooping',
    status: 'Failed',
    message: 'Containers in CrashLoop state: nginx',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {generation: 1, name: test, namespace: qual}
status:
  phase: Running
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]
  containerStatuses: [{name: nginx, state: {waiting: {reason: CrashLoopBackOff}}}]
`,
  },
  // TestPVCStatus
  {
    name: 'pvcNoStatus',
    status: 'InProgress',
    message: 'PVC is not Bound. phase: unknown',
    yaml: `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {generation: 1, name: test}
`,
  },
  {
    name: 'pvcBound',
    status: 'Current',
    yaml: `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {generation: 1, name: test, namespace: qual}
status: {phase: Bound}
`,
  },
  // TestStsStatus
  {
    name: 'stsNoStatus',
    status: 'InProgress',
    message: 'Replicas: 0/1',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test}
`,
  },
  {
    name: 'stsBadStatus',
    status: 'InProgress',
    message: 'Replicas: 0/1',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test, namespace: qual}
status: {observedGeneration: 1, currentReplicas: 1}
`,
  },
  {
    name: 'stsOK',
    status: 'Current',
    message: 'All replicas scheduled as expected. Replicas: 4',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test, namespace: qual}
spec: {replicas: 4}
status: {observedGeneration: 1, currentReplicas: 4, readyReplicas: 4, replicas: 4}
`,
  },
  {
    name: 'stsLessReady',
    status: 'InProgress',
    message: 'Ready: 2/4',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test, namespace: qual}
spec: {replicas: 4}
status: {observedGeneration: 1, currentReplicas: 4, readyReplicas: 2, replicas: 4}
`,
  },
  {
    name: 'stsLessCurrent',
    status: 'InProgress',
    message: 'current: 2/4',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test, namespace: qual}
spec: {replicas: 4}
status: {observedGeneration: 1, currentReplicas: 2, readyReplicas: 4, replicas: 4}
`,
  },
  {
    name: 'stsExtraPods',
    status: 'InProgress',
    message: 'Pending termination: 4',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test, namespace: qual}
spec: {replicas: 4}
status: {observedGeneration: 1, currentReplicas: 4, readyReplicas: 4, replicas: 8}
`,
  },
  // TestDaemonsetStatus
  {
    name: 'dsNoStatus',
    status: 'InProgress',
    message: 'DaemonSet status.observedGeneration not found',
    yaml: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: test, generation: 1}
`,
  },
  {
    name: 'dsBadStatus',
    status: 'InProgress',
    message: 'Missing .status.desiredNumberScheduled',
    yaml: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: test, namespace: qual, generation: 1}
status: {observedGeneration: 1, currentReplicas: 1}
`,
  },
  {
    name: 'dsOK',
    status: 'Current',
    yaml: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: test, namespace: qual, generation: 1}
status: {desiredNumberScheduled: 4, currentNumberScheduled: 4, updatedNumberScheduled: 4, numberAvailable: 4, numberReady: 4, observedGeneration: 1}
`,
  },
  {
    name: 'dsLessReady',
    status: 'InProgress',
    message: 'Ready: 2/4',
    yaml: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: test, namespace: qual, generation: 1}
status: {observedGeneration: 1, desiredNumberScheduled: 4, currentNumberScheduled: 4, updatedNumberScheduled: 4, numberAvailable: 4, numberReady: 2}
`,
  },
  {
    name: 'dsDifferentGeneration',
    status: 'InProgress',
    message: 'DaemonSet generation is 2, but latest observed generation is 1',
    yaml: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: test, namespace: qual, generation: 2}
status: {desiredNumberScheduled: 4, currentNumberScheduled: 4, updatedNumberScheduled: 4, numberAvailable: 4, numberReady: 4, observedGeneration: 1}
`,
  },
  {
    name: 'dsLessAvailable',
    status: 'InProgress',
    message: 'Available: 2/4',
    yaml: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: test, namespace: qual, generation: 1}
status: {observedGeneration: 1, desiredNumberScheduled: 4, currentNumberScheduled: 4, updatedNumberScheduled: 4, numberAvailable: 2, numberReady: 4}
`,
  },
  // TestDeploymentStatus
  {
    name: 'depNoStatus',
    status: 'InProgress',
    message: 'Replicas: 0/1',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1}
`,
  },
  {
    name: 'depOK',
    status: 'Current',
    message: 'Deployment is available. Replicas: 1',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1, namespace: qual}
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
    - {type: Available, status: "True"}
`,
  },
  {
    name: 'depNotProgressing',
    status: 'InProgress',
    message: 'ReplicaSet not Available',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1, namespace: qual}
spec: {progressDeadlineSeconds: 45}
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - {type: Progressing, status: "False", reason: Some reason}
    - {type: Available, status: "True"}
`,
  },
  {
    name: 'depNoProgressDeadlineSeconds',
    status: 'Current',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1, namespace: qual}
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions: [{type: Available, status: "True"}]
`,
  },
  {
    name: 'depNotAvailable',
    status: 'InProgress',
    message: 'Deployment not Available',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1, namespace: qual}
status:
  observedGeneration: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  replicas: 1
  conditions:
    - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
    - {type: Available, status: "False"}
`,
  },
  // TestReplicasetStatus
  {
    name: 'rsNoStatus',
    status: 'InProgress',
    message: 'Labelled: 0/1',
    yaml: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: test, generation: 1}
`,
  },
  {
    name: 'rsOK1',
    status: 'Current',
    yaml: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: test, namespace: qual, generation: 1}
spec: {replicas: 2}
status:
  observedGeneration: 1
  replicas: 2
  readyReplicas: 2
  availableReplicas: 2
  fullyLabeledReplicas: 2
  conditions: [{type: ReplicaFailure, status: "False"}]
`,
  },
  {
    name: 'rsOK2',
    status: 'Current',
    yaml: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: test, namespace: qual, generation: 1}
spec: {replicas: 2}
status: {observedGeneration: 1, fullyLabeledReplicas: 2, replicas: 2, readyReplicas: 2, availableReplicas: 2}
`,
  },
  {
    name: 'rsLessAvailable',
    status: 'InProgress',
    message: 'Available: 2/4',
    yaml: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: test, namespace: qual, generation: 1}
spec: {replicas: 4}
status: {observedGeneration: 1, replicas: 4, readyReplicas: 4, availableReplicas: 2, fullyLabeledReplicas: 4}
`,
  },
  {
    name: 'rsLessReady',
    status: 'InProgress',
    message: 'Ready: 2/4',
    yaml: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: test, namespace: qual, generation: 1}
spec: {replicas: 4}
status: {observedGeneration: 1, replicas: 4, readyReplicas: 2, availableReplicas: 4, fullyLabeledReplicas: 4}
`,
  },
  {
    name: 'rsReplicaFailure',
    status: 'InProgress',
    message: 'Replica Failure condition. Check Pods',
    yaml: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: test, namespace: qual, generation: 1}
spec: {replicas: 4}
status:
  observedGeneration: 1
  replicas: 4
  readyReplicas: 4
  fullyLabeledReplicas: 4
  availableReplicas: 4
  conditions: [{type: ReplicaFailure, status: "True"}]
`,
  },
  // TestPDBStatus
  {
    name: 'pdbNotObserved',
    status: 'InProgress',
    message: 'PodDisruptionBudget generation is 2, but latest observed generation is 1',
    yaml: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {generation: 2, name: test, namespace: qual}
status: {observedGeneration: 1}
`,
  },
  {
    name: 'pdbObserved',
    status: 'Current',
    message: 'AllowedDisruptions has been computed.',
    yaml: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {generation: 1, name: test, namespace: qual}
status: {observedGeneration: 1}
`,
  },
  // TestCRDGenericStatus
  {
    name: 'crdNoStatus',
    status: 'Current',
    message: 'Resource is current',
    yaml: `
apiVersion: something/v1
kind: MyCR
metadata: {generation: 1, name: test, namespace: qual}
`,
  },
  {
    name: 'crdMismatchStatusGeneration',
    status: 'InProgress',
    message: 'MyCR generation is 2, but latest observed generation is 1',
    yaml: `
apiVersion: something/v1
kind: MyCR
metadata: {name: test, namespace: qual, generation: 2}
status: {observedGeneration: 1}
`,
  },
  {
    name: 'crdReady',
    status: 'Current',
    yaml: `
apiVersion: something/v1
kind: MyCR
metadata: {name: test, namespace: qual, generation: 1}
status:
  conditions: [{type: Ready, status: "True", message: All looks ok, reason: AllOk}]
`,
  },
  {
    name: 'crdNotReady',
    status: 'InProgress',
    message: 'NotReadyYet',
    yaml: `
apiVersion: something/v1
kind: MyCR
metadata: {generation: 1, name: test, namespace: qual}
status:
  observedGeneration: 1
  conditions: [{type: Ready, status: "False", reason: NotReadyYet}]
`,
  },
  {
    name: 'crdNoCondition',
    status: 'Current',
    yaml: `
apiVersion: something/v1
kind: MyCR
metadata: {name: test, namespace: qual, generation: 1}
status:
  conditions: [{type: SomeCondition, status: "False"}]
`,
  },
  // TestJobStatus
  {
    name: 'jobNoStatus',
    status: 'InProgress',
    message: 'Job not started',
    yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: test, namespace: qual, generation: 1}
`,
  },
  {
    name: 'jobComplete',
    status: 'Current',
    message: 'Job Completed. succeeded: 1/1',
    yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: test, namespace: qual, generation: 1}
status:
  succeeded: 1
  active: 0
  conditions: [{type: Complete, status: "True"}]
`,
  },
  {
    name: 'jobFailed',
    status: 'Failed',
    message: 'Job Failed. failed: 1/4',
    yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: test, namespace: qual, generation: 1}
spec: {completions: 4}
status:
  succeeded: 3
  failed: 1
  conditions: [{type: Failed, status: "True", reason: JobFailed}]
`,
  },
  {
    name: 'jobInProgress',
    status: 'Current',
    message: 'Job in progress. success:3, active: 2, failed: 1',
    yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: test, namespace: qual, generation: 1}
spec: {completions: 10, parallelism: 2}
status:
  startTime: "2019-06-04T01:17:13Z"
  succeeded: 3
  failed: 1
  active: 2
  conditions: [{type: Failed, status: "False"}, {type: Complete, status: "False"}]
`,
  },
  // TestCronJobStatus
  {
    name: 'cronjobNoStatus',
    status: 'Current',
    message: 'Resource is always ready',
    yaml: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: test, namespace: qual, generation: 1}
`,
  },
  {
    name: 'cronjobWithStatus',
    status: 'Current',
    yaml: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: test, namespace: qual, generation: 1}
status:
`,
  },
  // TestServiceStatus
  {
    name: 'serviceDefault',
    status: 'Current',
    message: 'Service is ready',
    yaml: `
apiVersion: v1
kind: Service
metadata: {name: test, namespace: qual, generation: 1}
`,
  },
  {
    name: 'serviceNodePort',
    status: 'Current',
    yaml: `
apiVersion: v1
kind: Service
metadata: {name: test, namespace: qual, generation: 1}
spec: {type: NodePort}
`,
  },
  {
    name: 'serviceLBnok',
    status: 'InProgress',
    message: 'ClusterIP not set. Service type: LoadBalancer',
    yaml: `
apiVersion: v1
kind: Service
metadata: {name: test, namespace: qual, generation: 1}
spec: {type: LoadBalancer}
`,
  },
  {
    name: 'serviceLBok',
    status: 'Current',
    yaml: `
apiVersion: v1
kind: Service
metadata: {name: test, namespace: qual, generation: 1}
spec: {type: LoadBalancer, clusterIP: "1.2.3.4"}
`,
  },
  // TestCRDStatus
  {
    name: 'crdNoConditions',
    status: 'InProgress',
    message: 'Install in progress',
    yaml: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {generation: 1}
`,
  },
  {
    name: 'crdInstalling',
    status: 'InProgress',
    yaml: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {generation: 1}
status:
  conditions:
    - {type: NamesAccepted, status: "True", reason: NoConflicts}
    - {type: Established, status: "False", reason: Installing}
`,
  },
  {
    name: 'crdNamesNotAccepted',
    status: 'Failed',
    message: 'names clash',
    yaml: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {generation: 1}
status:
  conditions: [{type: NamesAccepted, status: "False", reason: SomeReason, message: names clash}]
`,
  },
  {
    name: 'crdEstablished',
    status: 'Current',
    message: 'CRD is established',
    yaml: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {generation: 1}
status:
  conditions:
    - {type: NamesAccepted, status: "True", reason: NoConflicts}
    - {type: Established, status: "True", reason: InitialNamesAccepted}
`,
  },
  // core.go rules the test file does not reach.
  {
    name: 'stsOnDelete',
    status: 'Current',
    message: 'StatefulSet is using the ondelete update strategy',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test}
spec: {replicas: 3, updateStrategy: {type: OnDelete}}
`,
  },
  {
    name: 'stsPartitionRolling',
    status: 'InProgress',
    message: 'updated: 1/2',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test}
spec: {replicas: 4, updateStrategy: {rollingUpdate: {partition: 2}}}
status: {observedGeneration: 1, replicas: 4, readyReplicas: 4, updatedReplicas: 1}
`,
  },
  {
    name: 'stsRevisionMismatch',
    status: 'InProgress',
    message: 'Waiting for updated revision to match current',
    yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {generation: 1, name: test}
spec: {replicas: 1}
status: {observedGeneration: 1, replicas: 1, readyReplicas: 1, currentReplicas: 1, currentRevision: a, updateRevision: b}
`,
  },
  {
    name: 'depDeadlineExceeded',
    status: 'Failed',
    message: 'Progress deadline exceeded',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1}
spec: {progressDeadlineSeconds: 60}
status:
  observedGeneration: 1
  conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded}]
`,
  },
  {
    name: 'jobSuspended',
    status: 'Current',
    message: 'Job is suspended',
    yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: test, generation: 1}
status:
  conditions: [{type: Suspended, status: "True"}]
`,
  },
  {
    name: 'podRunningNotReady',
    status: 'InProgress',
    message: 'Pod is running but is not Ready',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {name: test}
status: {phase: Running}
`,
  },
  {
    name: 'podPending',
    status: 'InProgress',
    message: 'Pod is in the Pending phase',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {name: test}
status: {phase: Pending}
`,
  },
  {
    name: 'secret',
    status: 'Current',
    message: 'Resource is always ready',
    yaml: `
apiVersion: v1
kind: Secret
metadata: {name: test}
`,
  },
  {
    name: 'hpaIsGeneric',
    status: 'Current',
    message: 'Resource is current',
    yaml: `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: test, generation: 1}
status:
  conditions: [{type: ScalingLimited, status: "True"}]
`,
  },
  // generic.go
  {
    name: 'terminating',
    status: 'Terminating',
    message: 'Resource scheduled for deletion',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1, deletionTimestamp: "2026-01-01T00:00:00Z"}
`,
  },
  {
    name: 'reconcilingTrue',
    status: 'InProgress',
    message: 'applying',
    yaml: `
apiVersion: example.com/v1
kind: Thing
metadata: {name: test, generation: 3}
status:
  observedGeneration: 3
  conditions: [{type: Reconciling, status: "True", reason: Progressing, message: applying}]
`,
  },
  {
    name: 'stalledTrue',
    status: 'Failed',
    message: 'bad spec',
    yaml: `
apiVersion: example.com/v1
kind: Thing
metadata: {name: test}
status:
  conditions: [{type: Stalled, status: "True", reason: Invalid, message: bad spec}]
`,
  },
  {
    name: 'stalledBeatsKindRules',
    status: 'Failed',
    message: 'no',
    yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: test, generation: 1}
status:
  observedGeneration: 1
  conditions: [{type: Stalled, status: "True", message: "no"}]
`,
  },
  // Compute errors: kstatus' poller reports them Unknown.
  {
    name: 'conditionsNotAList',
    status: 'Unknown',
    message: 'status.conditions is not a list',
    yaml: `
apiVersion: example.com/v1
kind: Thing
metadata: {name: test}
status: {conditions: {type: Ready}}
`,
  },
  {
    name: 'generationNotAnInteger',
    status: 'Unknown',
    message: 'metadata.generation is not an integer',
    yaml: `
apiVersion: example.com/v1
kind: Thing
metadata: {name: test, generation: "1"}
`,
  },
  {
    name: 'podUnknownPhase',
    status: 'Unknown',
    message: 'unknown phase Exploded',
    yaml: `
apiVersion: v1
kind: Pod
metadata: {name: test}
status: {phase: Exploded}
`,
  },
];

describe('computeKStatus (cli-utils kstatus)', () => {
  it.each(cases)('$name is $status', ({ yaml, status, message }) => {
    const result = computeKStatus(parse(yaml) as KStatusObject, { now: NOW });
    expect(result.status).toBe(status);
    if (message !== undefined) expect(result.message).toBe(message);
  });

  it('a missing object is NotFound', () => {
    expect(computeKStatus(undefined)).toEqual({
      status: 'NotFound',
      message: 'Resource not found',
    });
  });

  it('an unschedulable pod is InProgress within the 15 s window, Failed after it', () => {
    const pod = parse(
      cases.find((c) => c.name === 'podBeingScheduled')?.yaml ?? '',
    ) as KStatusObject;
    const created = Date.parse('2025-12-31T23:59:55Z');
    expect(computeKStatus(pod, { now: created + 14_000 }).status).toBe('InProgress');
    expect(computeKStatus(pod, { now: created + 15_000 }).status).toBe('Failed');
  });
});
