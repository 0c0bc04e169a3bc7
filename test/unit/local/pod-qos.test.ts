// A pod's QoS class as GetPodQOS computes it, over CPU and memory of every container.
import { describe, expect, it } from 'vitest';
import { podQosClass, quantityValue } from '../../../src/local/kinds/pod-qos.js';

const pod = (...resources: Array<Record<string, unknown>>) => ({
  containers: resources.map((r, i) => ({ name: `c${i}`, image: 'x', resources: r })),
});

describe('podQosClass', () => {
  it('BestEffort without requests or limits', () => {
    expect(podQosClass(pod({}))).toBe('BestEffort');
  });
  it('Guaranteed when every container limits CPU and memory at what it requests', () => {
    const r = {
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '0.5', memory: '1024Mi' },
    };
    expect(podQosClass(pod(r, r))).toBe('Guaranteed');
  });
  it('Burstable otherwise: a container without limits, or limits above requests', () => {
    expect(podQosClass(pod({ requests: { cpu: '100m' } }))).toBe('Burstable');
    expect(
      podQosClass(
        pod({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } }),
      ),
    ).toBe('Burstable');
    const full = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };
    expect(podQosClass(pod(full, {}))).toBe('Burstable');
  });
});

describe('quantityValue', () => {
  it('reads decimal and binary suffixes and exponents', () => {
    expect(quantityValue('500m')).toBeCloseTo(0.5);
    expect(quantityValue('1Gi')).toBe(2 ** 30);
    expect(quantityValue('1e3')).toBe(1000);
    expect(quantityValue('2k')).toBe(2000);
    expect(quantityValue('x')).toBeNaN();
  });
});
