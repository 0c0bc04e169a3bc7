// Reading the values of a Secret the user owns (secret attributes, webhook signing keys): the
// decoded strings, or undefined when there is no such Secret. Callers never log the values.
// For attribute Secrets also: the label that lets the operator watch them alone, and a keyed
// digest of their content, so a change is noticed without the values being kept anywhere.
import { createHmac, randomBytes } from 'node:crypto';
import {
  isAlreadyExists,
  isNotFound,
  isTransient,
  type Kube,
  type KubeObject,
  Secrets,
} from '../../kube/index.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../names.js';

export async function readSecret(
  kube: Pick<Kube, 'resource'>,
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  const secret = await getSecret(kube, namespace, name);
  return secret === undefined ? undefined : secretValues(secret);
}

export interface LabelledSecret {
  /** The decoded values: for this reconcile only. */
  readonly values: Record<string, string>;
  /** `<uid>/<resourceVersion>` of what was read: equal versions hold equal values. */
  readonly version: string;
  /** False when the label could not be put on (e.g. no patch permission): not watched. */
  readonly labelled: boolean;
}

/**
 * readSecret for a Secret the operator watches by `label`: the label is put on first (a merge
 * patch of labels alone, only when missing), so later changes of the Secret are seen. A
 * refused patch still gives the values; errors worth a retry are thrown.
 */
export async function readLabelledSecret(
  kube: Pick<Kube, 'resource'>,
  namespace: string,
  name: string,
  label: string,
): Promise<LabelledSecret | undefined> {
  let secret = await getSecret(kube, namespace, name);
  if (secret === undefined) return undefined;
  let labelled = secret.metadata.labels?.[label] === 'true';
  if (!labelled) {
    try {
      secret = await kube
        .resource(Secrets)
        .patch({ namespace, name }, { metadata: { labels: { [label]: 'true' } } });
      labelled = true;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      if (isTransient(error)) throw error;
    }
  }
  return { values: secretValues(secret), version: secretVersion(secret), labelled };
}

/** `<uid>/<resourceVersion>`: what a metadata-only cache can compare without the values. */
export function secretVersion(secret: KubeObject): string {
  return `${secret.metadata.uid ?? ''}/${secret.metadata.resourceVersion ?? ''}`;
}

async function getSecret(
  kube: Pick<Kube, 'resource'>,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  try {
    return await kube.resource(Secrets).get({ namespace, name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

function secretValues(secret: KubeObject): Record<string, string> {
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

/**
 * How soon a Secret that is missing is looked at again: only Secrets the operator has labelled
 * are watched (watching all would cache every Secret of the cluster), and one that does not
 * exist yet has no label.
 */
export const SECRET_RECHECK_MS = 5000;

export const DIGEST_KEY_SECRET = 'nrn-operator-digest-key';
const DIGEST_KEY_FIELD = 'key';
const DIGEST_KEY_BYTES = 32;

/**
 * Digests of Secret contents, keyed with HMAC-SHA256. A plain hash written where a Service's
 * readers see it (status) would let them test guesses of a weak password offline; the key,
 * in a Secret of the operator's namespace, keeps the digest opaque to them. The key is made
 * on first use and shared by every replica, so digests survive restarts and failovers.
 */
export class SecretDigester {
  private key: Promise<Buffer> | undefined;

  constructor(
    private readonly kube: Pick<Kube, 'resource'>,
    private readonly namespace: string,
    private readonly name = DIGEST_KEY_SECRET,
  ) {}

  /** `hmac-sha256:<hex>` of the keys and values, whatever their order. */
  async digest(values: Readonly<Record<string, string>>): Promise<string> {
    const key = await this.loadKey();
    const entries = Object.keys(values)
      .sort()
      .map((name) => [name, values[name]]);
    return `hmac-sha256:${createHmac('sha256', key).update(JSON.stringify(entries)).digest('hex')}`;
  }

  private loadKey(): Promise<Buffer> {
    this.key ??= this.readOrCreate().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  private async readOrCreate(): Promise<Buffer> {
    const existing = await getSecret(this.kube, this.namespace, this.name);
    if (existing !== undefined) return this.keyOf(existing);
    try {
      const created = await this.kube.resource(Secrets).create({
        metadata: {
          name: this.name,
          namespace: this.namespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
        },
        type: 'Opaque',
        data: { [DIGEST_KEY_FIELD]: randomBytes(DIGEST_KEY_BYTES).toString('base64') },
      });
      return this.keyOf(created);
    } catch (error) {
      // Another replica made it first: theirs is the key.
      if (!isAlreadyExists(error)) throw error;
      const theirs = await getSecret(this.kube, this.namespace, this.name);
      if (theirs === undefined) throw error;
      return this.keyOf(theirs);
    }
  }

  private keyOf(secret: KubeObject): Buffer {
    const data = secret.data;
    const encoded = isRecord(data) ? data[DIGEST_KEY_FIELD] : undefined;
    const key = typeof encoded === 'string' ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
    // A key edited into something short would make digests guessable: refuse, loudly.
    if (key.length < DIGEST_KEY_BYTES) {
      throw new Error(
        `secret ${this.namespace}/${this.name} has no ${DIGEST_KEY_BYTES}-byte "${DIGEST_KEY_FIELD}"; delete it and the operator makes a new one`,
      );
    }
    return key;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
