import { describe, expect, it } from 'vitest';
import { parseModelConfigText } from '../../src/config/pbtxt-parser.ts';
import { instanceSpecs } from '../../src/server/version-loader.ts';

describe('instance_group → instances', () => {
  it('gives count × kind instances, GPU groups once per listed GPU with their device id', () => {
    const config = parseModelConfigText(`name: "m"
instance_group [
  { name: "cpu" kind: KIND_CPU count: 2 },
  { kind: KIND_GPU count: 2 gpus: [ 0, 1 ] },
  { name: "whole" kind: KIND_MODEL }
]`);
    expect(instanceSpecs(config)).toEqual([
      { name: 'cpu_0', kind: 'CPU', device: 0, groupName: 'cpu' },
      { name: 'cpu_1', kind: 'CPU', device: 0, groupName: 'cpu' },
      { name: 'm_1_0', kind: 'GPU', device: 0, groupName: 'm_1' },
      { name: 'm_1_1', kind: 'GPU', device: 0, groupName: 'm_1' },
      { name: 'm_1_2', kind: 'GPU', device: 1, groupName: 'm_1' },
      { name: 'm_1_3', kind: 'GPU', device: 1, groupName: 'm_1' },
      { name: 'whole_0', kind: 'MODEL', device: 0, groupName: 'whole' },
    ]);
  });
});
