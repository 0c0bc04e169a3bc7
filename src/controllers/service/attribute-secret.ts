// A service's attribute Secret as its reconciler reads it: read with the label that has it
// watched from then on, digested with the operator's key (status records the digest, never a
// value), and, per service, the Secret version last found to match the recorded digest, so a
// settled service whose watched Secret has not moved costs no read.
import { ATTRIBUTES_SECRET_LABEL } from '../../domain/names.js';
import {
  type LabelledSecret,
  readLabelledSecret,
  type SecretDigester,
  secretVersion,
} from '../../domain/services/secrets.js';
import type { Kube } from '../../kube/index.js';
import type { AttributeSecretInformer } from './resources.js';

/** How a settled service's attribute Secret differs from what its status records. */
type SecretChange =
  /** The content moved: the Secret as just read, to validate without a second read. */
  | { readonly moved: LabelledSecret }
  /** Recorded before digests were: the current digest, to record without a provider call. */
  | { readonly unrecorded: string };

export class AttributeSecrets {
  /**
   * Per key, the attribute Secret version (uid/resourceVersion) last found to match the
   * recorded digest, with that digest: while the watched Secret still has this version, a
   * reconcile need not read it again. Versions and digests only, never values.
   */
  private readonly checked = new Map<string, string>();

  constructor(
    private readonly kube: Pick<Kube, 'resource'>,
    private readonly digester: SecretDigester,
    /** Labelled attribute Secrets (metadata only); without it every check reads the Secret. */
    private readonly watched: AttributeSecretInformer | undefined,
  ) {}

  /** The Secret's values, labelled first so its changes are seen; undefined if it is missing. */
  read(namespace: string, name: string): Promise<LabelledSecret | undefined> {
    return readLabelledSecret(this.kube, namespace, name, ATTRIBUTES_SECRET_LABEL);
  }

  digest(values: Readonly<Record<string, string>>): Promise<string> {
    return this.digester.digest(values);
  }

  /**
   * How the Secret differs from the `recorded` digest; undefined when it does not. A Secret
   * that is gone changes nothing: what the provider holds stays as it is, and the service
   * with it.
   */
  async change(
    key: string,
    namespace: string,
    name: string,
    recorded: string | undefined,
  ): Promise<SecretChange | undefined> {
    const cached = this.watched?.cache.get(namespace, name);
    if (cached !== undefined && this.checked.get(key) === `${secretVersion(cached)} ${recorded}`) {
      return undefined;
    }
    const read = await this.read(namespace, name);
    if (read === undefined) return undefined;
    const digest = await this.digest(read.values);
    if (recorded === undefined) return { unrecorded: digest };
    if (digest === recorded) {
      this.checked.set(key, `${read.version} ${recorded}`);
      return undefined;
    }
    return { moved: read };
  }

  forget(key: string): void {
    this.checked.delete(key);
  }
}
