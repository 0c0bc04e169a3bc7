// HorizontalPodAutoscaler (autoscaling/v2): stored with its official schema, minReplicas and the
// default CPU metric set as SetDefaults_HorizontalPodAutoscaler sets them; nothing scales.
import { ATOMIC, byKey, STRUCT } from '../patch/field-types.js';
import { orDefault, struct, withSchema } from './stored-kind.js';
import { builtinType, type KindStrategy } from './strategy.js';

const fieldTypes = {
  spec: STRUCT,
  'spec.metrics': ATOMIC,
  status: STRUCT,
  'status.conditions': byKey('type'),
  'status.currentMetrics': ATOMIC,
};

export const horizontalPodAutoscalerStrategy: KindStrategy = {
  countsGeneration: true,
  type: withSchema(
    {
      ...builtinType('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', {
        shortNames: ['hpa'],
        hasStatus: true,
      }),
      categories: ['all'],
    },
    fieldTypes,
  ),
  fieldTypes,
  prepare(object) {
    const spec = struct(object, 'spec');
    orDefault(spec, 'minReplicas', 1);
    if (!Array.isArray(spec.metrics) || spec.metrics.length === 0)
      spec.metrics = [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
        },
      ];
  },
};
