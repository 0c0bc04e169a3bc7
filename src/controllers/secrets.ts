// Reading the values of a Secret the user owns (secret attributes, webhook signing keys): the
// decoded strings, or undefined when there is no such Secret. Callers never log the values.
import { isNotFound, type Kube, Secrets } from '../kube/index.js';

export async function readSecret(
  kube: Pick<Kube, 'resource'>,
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  let secret: Record<string, unknown>;
  try {
    secret = await kube.resource(Secrets).get({ namespace, name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  const values: Record<string, string> = {};
  const data = secret.data;
  if (isRecord(data)) {
    for (const [key, value] of Object.entries(data)) {
      if (typeof value === 'string') values[key] = Buffer.from(value, 'base64').toString('utf8');
    }
  }
  // A real API server folds stringData into data; a server that does not still means it.
  const stringData = secret.stringData;
  if (isRecord(stringData)) {
    for (const [key, value] of Object.entries(stringData)) {
      if (typeof value === 'string') values[key] = value;
    }
  }
  return values;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
