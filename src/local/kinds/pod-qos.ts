// A pod's QoS class as kube-apiserver computes it when the pod is created (PrepareForCreate,
// pkg/apis/core/helper/qos GetPodQOS): from the CPU and memory requests and limits of all its
// containers, init containers included.
import { isJson, itemsOf } from './stored-kind.js';

const SUFFIX: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const QUANTITY =
  /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/;

/** A resource.Quantity's value (NaN when it does not parse: the schema refuses those). */
export function quantityValue(value: unknown): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  const match = QUANTITY.exec(text.trim());
  if (match === null) return Number.NaN;
  const base = Number(match[1]);
  if (match[2] !== undefined) return base * 10 ** Number(match[2].slice(1));
  return base * (SUFFIX[match[3] ?? ''] ?? Number.NaN);
}

const QOS_RESOURCES = ['cpu', 'memory'] as const;

export function podQosClass(
  spec: Record<string, unknown>,
): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  for (const container of [...itemsOf(spec.initContainers), ...itemsOf(spec.containers)]) {
    const resources = isJson(container.resources) ? container.resources : {};
    const add = (into: Map<string, number>, from: unknown): Set<string> => {
      const found = new Set<string>();
      if (!isJson(from)) return found;
      for (const name of QOS_RESOURCES) {
        const value = quantityValue(from[name]);
        if (!(value > 0)) continue;
        found.add(name);
        into.set(name, (into.get(name) ?? 0) + value);
      }
      return found;
    };
    add(requests, resources.requests);
    const limited = add(limits, resources.limits);
    if (!QOS_RESOURCES.every((name) => limited.has(name))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, request] of requests) {
      if (limits.get(name) !== request) guaranteed = false;
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
