// How a removal is told (ADR 0028): every object the operator deletes or lets go of for a
// scope is an Event on that scope and a WARN line naming the object, so nothing it destroys
// goes unsaid, whoever reads the logs or `kubectl describe scope`.
import type { Logger } from 'pino';
import { GROUP, VERSION } from '../../../api/index.js';
import type { EventRecorder } from '../../../domain/event-recorder.js';
import type { Removed, ScopeTarget } from '../scope-provisioner.js';

/** The callback a ClassProvisioner tells each removal to. */
export function reportRemovals(
  events: Pick<EventRecorder, 'record'>,
  log: Logger,
): (target: ScopeTarget, removed: Removed) => void {
  return (target, { action, ref, why, requested }) => {
    const object = `${ref.kind} ${ref.namespace !== undefined ? `${ref.namespace}/` : ''}${ref.name}`;
    log.warn(
      {
        scope: target.key,
        id: target.id,
        action,
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        namespace: ref.namespace,
        name: ref.name,
        why,
      },
      action === 'Deleted' ? 'scope child deleted' : 'scope child orphaned',
    );
    // A delete the user asked for (the scope's) is Normal; one a class change made is a Warning.
    events.record(
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'Scope',
        metadata: { namespace: target.namespace, name: target.name, uid: target.uid },
      },
      requested ? 'Normal' : 'Warning',
      action === 'Deleted' ? 'ChildDeleted' : 'ChildOrphaned',
      action === 'Deleted'
        ? `deleted ${object}: ${why}`
        : `let go of ${object} (kept, labelled orphaned-from-scope): ${why}`,
    );
  };
}
