// The provider's output attributes go to a Secret owned by the service (they are often
// credentials; status is readable by anyone who can read the Service), named after it,
// applied server-side and collected with it. A Secret of that name that is someone else's is
// left as it is.
import { API_VERSION } from '../../api/index.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../domain/names.js';
import { isNotFound, type Kube, Secrets } from '../../kube/index.js';
import type { RawService } from './resources.js';

const OUTPUTS_SUFFIX = '-outputs';

/** The name of the Secret of a service's output attributes. */
export function outputsSecretName(service: RawService): string {
  return `${service.metadata.name}${OUTPUTS_SUFFIX}`;
}

/**
 * Writes the outputs. Returns the Secret's name, or undefined when there were none, or
 * 'taken' when a Secret of that name is someone else's.
 */
export async function writeOutputs(
  kube: Pick<Kube, 'resource'>,
  service: RawService,
  outputs: Readonly<Record<string, unknown>> | undefined,
): Promise<string | 'taken' | undefined> {
  if (outputs === undefined || Object.keys(outputs).length === 0) return undefined;
  const name = outputsSecretName(service);
  const namespace = service.metadata.namespace ?? '';
  const secrets = kube.resource(Secrets);
  try {
    const existing = await secrets.get({ namespace, name });
    const ours = (existing.metadata.ownerReferences ?? []).some(
      (o) => o.uid === service.metadata.uid,
    );
    if (!ours) return 'taken';
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const data: Record<string, string> = {};
  for (const [field, value] of Object.entries(outputs)) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    data[field] = Buffer.from(text, 'utf8').toString('base64');
  }
  await secrets.apply(
    {
      metadata: {
        name,
        namespace,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: 'Service',
            name: service.metadata.name,
            uid: service.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      type: 'Opaque',
      data,
    },
    { fieldManager: MANAGED_BY, force: true },
  );
  return name;
}
